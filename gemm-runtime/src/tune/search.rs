//! One tuning run: look in the cache (again, under the cross-process lock), pick the
//! candidates, compile them on a bounded pool, verify and time them one at a time, store
//! the winner and the failures.

use super::candidate::{Checker, Verdict};
use super::options::{TuneOptions, TuneProgress, TuneStage};
use super::progress::Progress;
use super::report::{Failure, Timing, TuneReport, COMPILED, DISK_HITS, TUNES};
use super::{choose, file_key, first_line, pick, pool, scope, table, variant, GENERATION};
use crate::cache::{self, CacheFile, DiskCache, FailStage, FailedConfig, Winner};
use crate::call::Call;
use crate::device::RawBuffer;
use crate::error::{GemmError, Result};
use crate::measure::{self, Timed};
use crate::spec::TargetKernel;
use gemm_core::target::DeviceType;
use gemm_core::{CompileNeeds, TileConfig};
use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A kernel as `Backend::compile` returns it.
type Compiled = Arc<dyn Any + Send + Sync>;

/// Tunes `call`'s kernel for its device and shape bucket; the caller holds the process's
/// tuning lock.
pub(super) fn tune_locked(call: &Call<'_, '_>, tk: &TargetKernel, opts: &TuneOptions) -> Result<TuneReport> {
    let start = Instant::now();
    // A (re)tune may change the winner of shapes whose warm launches were resolved.
    GENERATION.fetch_add(1, Ordering::AcqRel);
    let (spec, dev) = (call.spec, call.device());
    let (m, n, k) = call.mnk();
    let bucket = cache::problem_key(call.ir(), call.problem, opts.exact_shape);
    let given = !opts.configs.is_empty();
    if given {
        check_given(call, tk, &opts.configs)?;
    }
    // A run of the caller's configs is theirs alone: no cached winner answers it, and its
    // winner and failures say nothing about the plan's candidates.
    let disk = opts
        .cache_dir
        .as_ref()
        .filter(|_| !given)
        .map(|d| DiskCache::new(d, file_key(spec, tk, dev)));
    let mut loaded = disk.as_ref().map(|d| d.load());
    let mut report = TuneReport {
        kernel: spec.name.to_string(),
        target: tk.target.to_string(),
        device: dev.info().to_string(),
        shape: (m, n, k),
        shape_key: bucket.clone(),
        cache_hit: false,
        candidates: Vec::new(),
        seeded_from: None,
        timings: Vec::new(),
        failed: Vec::new(),
        scope: String::new(),
        skipped: Vec::new(),
        budget_spent: false,
        tied: Vec::new(),
        final_round: Vec::new(),
        best: call.default_config(tk)?,
        best_ms: f64::NAN,
        tune_ms: 0.0,
        compiled: 0,
        cache_file: disk.as_ref().map(|d| d.path().to_path_buf()),
        check: String::new(),
    };
    let hit = |loaded: &Option<CacheFile>| {
        loaded
            .as_ref()
            .and_then(|f| f.winners.get(&bucket))
            .filter(|w| call.usable(tk, &w.config))
            .cloned()
    };
    let cached = |mut report: TuneReport, w: Winner| {
        DISK_HITS.fetch_add(1, Ordering::Relaxed);
        report.cache_hit = true;
        report.best = w.config;
        report.best_ms = w.ms;
        report.tune_ms = start.elapsed().as_secs_f64() * 1e3;
        report
    };
    if let (false, Some(w)) = (opts.force, hit(&loaded)) {
        return Ok(cached(report, w));
    }
    // One tune per device at a time across processes sharing the cache folder; whoever
    // waited looks again, since the other process was often tuning this very bucket.
    let _device_lock = opts
        .cache_dir
        .as_ref()
        .and_then(|d| cache::TuningLock::acquire(d, &dev.info().name, &dev.info().id));
    if let (Some(_), Some(d)) = (&_device_lock, &disk) {
        loaded = Some(d.load());
        if let (false, Some(w)) = (opts.force, hit(&loaded)) {
            return Ok(cached(report, w));
        }
    }
    TUNES.fetch_add(1, Ordering::Relaxed);
    let has_winner = loaded.as_ref().is_some_and(|f| f.winners.contains_key(&bucket));
    let cands = candidates(call, tk, opts, &bucket, has_winner, &mut report);
    let known: Vec<FailedConfig> = if opts.always_compile {
        Vec::new()
    } else {
        loaded.map(|f| f.failed).unwrap_or_default()
    };
    let progress = Progress::new(opts, format!("`{}` {m}x{n}x{k} on {}", spec.name, dev.info().id));
    let builds: Vec<Build> = cands
        .iter()
        .map(|c| Build {
            source: tk
                .source_of(c)
                .expect("candidates are usable: their family has a source"),
            defines: c.owned_defines(call.ir(), tk.backend, call.problem),
            needs: c.compile_needs(),
        })
        .collect();
    // A batch is that much more work: its scope is that of its total flops.
    let scope = scope::scope(
        (m * call.problem.batch, n, k),
        cands.len(),
        opts.max_candidates.is_some(),
        opts.thorough || given,
    );
    report.scope = scope.rule.clone();
    let deadline = opts.budget_ms.map(|ms| start + Duration::from_secs_f64(ms / 1e3));
    let is_known = |i: usize| known.iter().any(|f| f.config == cands[i]);
    let mut search = Search::new(call, tk, opts, &mut report)?;
    // Compiled in waves, so that a search that stops early (its scope reached, its budget
    // spent) has not compiled what it will not time.
    let wave = 2 * pool::threads();
    let planned = (0..scope.wanted.min(cands.len())).filter(|&i| !is_known(i)).count();
    let mut next = 0;
    while next < cands.len() && search.aborted.is_none() && !search.enough(next, scope.wanted, deadline) {
        let end = if next < scope.wanted {
            scope.wanted.min(next + wave)
        } else {
            // Nothing passed among the wanted: on down the list until one does.
            (next + wave).min(cands.len())
        };
        let todo: Vec<usize> = (next..end).filter(|&i| !is_known(i)).collect();
        let mut compiled = compile_all(
            call,
            &builds,
            &todo,
            opts,
            &progress,
            (report.compiled, planned.max(report.compiled + todo.len())),
        );
        report.compiled += todo.len();
        COMPILED.fetch_add(todo.len() as u64, Ordering::Relaxed);
        next = search.try_range(
            next..end,
            &cands,
            &known,
            &mut compiled,
            &progress,
            &mut report,
            (scope.wanted, deadline),
        );
    }
    report.budget_spent = search.aborted.is_none() && next < scope.wanted.min(cands.len());
    report.skipped = cands[next..].to_vec();
    search.final_round(&cands, tk, &mut report);
    progress.done();
    let tried = search.finish(&cands, tk);
    report.tied = tried.tied.clone();

    // After an abort the winner is of a partial run: not stored, so that the next process
    // tunes again (skipping the failures recorded now).
    let winner = if tried.aborted.is_some() { None } else { tried.winner };
    let found = winner.map(|(i, kern)| {
        // Verified at this call's shape: launches of this build variant need no check.
        variant::remember(call, tk, &cands[i], Ok(()));
        dev.cache_kernel(
            builds[i].source,
            &call.ir().symbol(),
            &builds[i].defines,
            &builds[i].needs,
            kern,
        );
        Winner {
            config: cands[i],
            ms: tried.best_ms,
            shape: [m, n, k],
            candidates: report.timings.len(),
            // Each config's best measurement: a finalist's final-round median (what the
            // winner was picked by, and its `ms`), the first pass's for the rest, so that
            // `cache merge` and the records decide on the same numbers as this tune.
            timings: report
                .timings
                .iter()
                .map(|t| cache::ConfigTime {
                    config: t.config,
                    us: report
                        .final_round
                        .iter()
                        .find(|f| f.config == t.config)
                        .map_or(t.ms, |f| f.ms)
                        * 1e3,
                })
                .collect(),
        }
    });
    if let Some(d) = &disk {
        store(d, call.ir(), tk, dev, &bucket, found.as_ref(), &tried.new_failures);
    }
    report.tune_ms = start.elapsed().as_secs_f64() * 1e3;
    if let Some(e) = tried.aborted {
        return Err(e);
    }
    let Some(w) = found else {
        return Err(nothing_passed(call, &report, cands.len()));
    };
    report.best = w.config;
    report.best_ms = w.ms;
    if crate::env::log() {
        eprintln!(
            "crossgemm: tuned `{}` {m}x{n}x{k} [{bucket}] on {}: {} in {:.4} ms; {} timed, {} failed, {} compiled, {:.0} ms",
            spec.name,
            dev.info().id,
            w.config,
            w.ms,
            report.timings.len(),
            report.failed.len(),
            report.compiled,
            report.tune_ms
        );
    }
    Ok(report)
}

/// What one candidate compiles from.
struct Build {
    source: &'static str,
    defines: Vec<(String, u32)>,
    needs: CompileNeeds,
}

/// The target's planned configs that can run the call, ordered by the cost estimate
/// ([`gemm_core::estimate`]; the planner's order where the target has none), at most
/// `opts.max_candidates` (48 on GPUs, 6 on CPU devices by default); when the call's
/// bucket has no winner in the cache, the nearest bucket's winner first (nearest-record
/// start), else the table's entry for the bucket or its nearest.
fn candidates(
    call: &Call<'_, '_>,
    tk: &TargetKernel,
    opts: &TuneOptions,
    bucket: &str,
    has_winner: bool,
    report: &mut TuneReport,
) -> Vec<TileConfig> {
    let info = call.device().info();
    if !opts.configs.is_empty() {
        let mut given: Vec<TileConfig> = Vec::new();
        for c in &opts.configs {
            if !given.contains(c) {
                given.push(*c);
            }
        }
        report.candidates = given.clone();
        return given;
    }
    let max = opts
        .max_candidates
        .unwrap_or(if info.device_type == DeviceType::Cpu { 6 } else { 48 });
    let mut cands: Vec<TileConfig> = Vec::new();
    for c in &tk.plan().configs {
        if call.usable(tk, c) && !cands.contains(c) {
            cands.push(*c);
        }
    }
    // The tiles that suit this shape first (a roofline with wave quantisation), so that a
    // short list (a mid-size problem's) holds them; the planner's order among equals.
    let mut cands = gemm_core::estimate::by_estimate(&cands, call.ir(), tk.spec(), call.problem);
    cands.truncate(max);
    if !has_winner {
        // The nearest winner in the cache, else the table's winner or nearest entry.
        let seed = opts
            .cache_dir
            .as_ref()
            .and_then(|dir| choose::nearest_winner(call, tk, dir, bucket))
            .map(|(b, w)| (b, w.config))
            .or_else(|| {
                table::winner(call, tk, bucket)
                    .or_else(|| table::nearest(call, tk, bucket))
                    .map(|s| (table::describe(s), s.config))
            });
        if let Some((from, c)) = seed {
            cands.retain(|x| *x != c);
            cands.insert(0, c);
            cands.truncate(opts.max_candidates.unwrap_or(usize::MAX).max(1));
            report.seeded_from = Some(from);
        }
    }
    report.candidates = cands.clone();
    cands
}

/// `Err` naming every one of the caller's configs ([`TuneOptions::configs`]) that cannot
/// run `call` (invalid for the target, too big for the device, refused by its family),
/// with why.
fn check_given(call: &Call<'_, '_>, tk: &TargetKernel, configs: &[TileConfig]) -> Result<()> {
    let why: Vec<String> = configs
        .iter()
        .filter_map(|c| call.check_config(tk, c).err())
        .map(|e| match e {
            GemmError::Unsupported(why) => why,
            e => e.to_string(),
        })
        .collect();
    if why.is_empty() {
        return Ok(());
    }
    let (m, n, k) = call.mnk();
    Err(GemmError::Unsupported(format!(
        "{} of the {} given configs cannot run `{}` {m}x{n}x{k} on {}: {}",
        why.len(),
        configs.len(),
        call.spec.name,
        call.device().info(),
        why.join("; ")
    )))
}

/// Compiles the candidates `todo` on the compile pool ([`pool`]); slot `i` holds
/// candidate `i`'s kernel or error (`None` for those not in `todo`). Progress counts
/// from `done_before` of `total` (earlier waves' compiles).
fn compile_all(
    call: &Call<'_, '_>,
    builds: &[Build],
    todo: &[usize],
    opts: &TuneOptions,
    progress: &Progress,
    (done_before, total): (usize, usize),
) -> Vec<Option<Result<Compiled>>> {
    let dev = call.device();
    let symbol = call.ir().symbol();
    let done = AtomicUsize::new(done_before);
    progress.event(TuneProgress {
        stage: TuneStage::Compiling,
        done: done_before,
        total,
        best_ms: None,
    });
    let results = pool::map(todo, |&i| {
        let r = if opts.inject.compile_error.contains(&i) {
            let broken = format!(
                "{}\n#error crossgemm test: injected compile failure\n",
                builds[i].source
            );
            dev.backend()
                .compile(&broken, &symbol, &builds[i].defines, &builds[i].needs)
        } else {
            dev.backend()
                .compile(builds[i].source, &symbol, &builds[i].defines, &builds[i].needs)
        };
        let d = done.fetch_add(1, Ordering::Relaxed) + 1;
        progress.event(TuneProgress {
            stage: TuneStage::Compiling,
            done: d,
            total,
            best_ms: None,
        });
        r
    });
    let mut compiled: Vec<Option<Result<Compiled>>> = builds.iter().map(|_| None).collect();
    for (&i, r) in todo.iter().zip(results) {
        compiled[i] = Some(r);
    }
    compiled
}

/// What verifying and timing the candidates found.
struct Tried {
    /// The winner ([`pick`]) and its kernel.
    winner: Option<(usize, Compiled)>,
    /// The winner's median, ms.
    best_ms: f64,
    /// The tie the winner won, the winner first ([`TuneReport::tied`]).
    tied: Vec<TileConfig>,
    /// Failures to store (compile, launch and wrong-result ones; not too-slow ones).
    new_failures: Vec<FailedConfig>,
    /// An error that is not a candidate's (no memory, a dead context): the run stopped.
    aborted: Option<GemmError>,
}

/// The search over one tune's candidates, wave after wave: the checker and its operands,
/// and what passed and failed so far.
struct Search<'s> {
    opts: &'s TuneOptions,
    checker: Checker,
    flush: Option<RawBuffer>,
    /// The device's type, which sets how many runs a timing takes.
    device_type: DeviceType,
    /// Verified and timed: (candidate, kernel, timing); after a final round, the
    /// finalists only.
    passed: Vec<(usize, Compiled, Timed)>,
    new_failures: Vec<FailedConfig>,
    aborted: Option<GemmError>,
}

impl<'s> Search<'s> {
    fn new(
        call: &Call<'_, '_>,
        tk: &TargetKernel,
        opts: &'s TuneOptions,
        report: &mut TuneReport,
    ) -> Result<Search<'s>> {
        let dev = call.device();
        let checker = Checker::new(call, &opts.inject, true)?;
        report.check = checker.describe();
        let flush = RawBuffer::new(
            dev,
            measure::flush_bytes(tk.spec().l2_bytes, dev.info().device_type, dev.info().global_mem_bytes),
        )
        .ok();
        Ok(Search {
            opts,
            checker,
            flush,
            device_type: dev.info().device_type,
            passed: Vec::new(),
            new_failures: Vec::new(),
            aborted: None,
        })
    }

    /// Whether the search may stop before candidate `next`: something passed, and either
    /// the `wanted` candidates are behind it or the deadline is.
    fn enough(&self, next: usize, wanted: usize, deadline: Option<Instant>) -> bool {
        !self.passed.is_empty() && (next >= wanted || deadline.is_some_and(|d| Instant::now() >= d))
    }

    /// The fastest median so far, ms (infinite before the first).
    fn best_ms(&self) -> f64 {
        self.passed.iter().map(|p| p.2.ms).fold(f64::INFINITY, f64::min)
    }

    /// Verifies, then times, the candidates of `range` one at a time on the tuner's own
    /// operands (see [`super::candidate`]), recording each outcome in `report`; stops
    /// early when [`enough`](Self::enough) says so or on an abort. Returns the index it
    /// stopped before.
    #[allow(clippy::too_many_arguments)]
    fn try_range(
        &mut self,
        range: std::ops::Range<usize>,
        cands: &[TileConfig],
        known: &[FailedConfig],
        compiled: &mut [Option<Result<Compiled>>],
        progress: &Progress,
        report: &mut TuneReport,
        (wanted, deadline): (usize, Option<Instant>),
    ) -> usize {
        for i in range.clone() {
            if self.enough(i, wanted, deadline) {
                return i;
            }
            self.try_one(i, &cands[i], cands, known, compiled, progress, report, wanted);
            if self.aborted.is_some() {
                return i;
            }
        }
        range.end
    }

    /// One candidate: skipped as a known failure, or compiled (already), verified, timed.
    #[allow(clippy::too_many_arguments)]
    fn try_one(
        &mut self,
        i: usize,
        cfg: &TileConfig,
        cands: &[TileConfig],
        known: &[FailedConfig],
        compiled: &mut [Option<Result<Compiled>>],
        progress: &Progress,
        report: &mut TuneReport,
        wanted: usize,
    ) {
        if let Some(f) = known.iter().find(|f| f.config == *cfg) {
            report.failed.push(Failure {
                config: *cfg,
                stage: f.stage,
                reason: f.reason.clone(),
                from_cache: true,
            });
            return;
        }
        let best_ms = self.best_ms();
        progress.event(TuneProgress {
            stage: TuneStage::Timing,
            done: i,
            total: wanted.max(i + 1).min(cands.len()),
            best_ms: best_ms.is_finite().then_some(best_ms),
        });
        let fail = |stage, reason| FailedConfig {
            config: *cfg,
            stage,
            reason,
        };
        let kernel = match compiled[i].take().expect("every candidate to do was compiled") {
            Ok(kern) => kern,
            // Module loading (CUDA) is part of `compile`; its errors are the config's too.
            Err(e) if is_build_error(&e) => {
                record(
                    report,
                    &mut self.new_failures,
                    fail(FailStage::Compile, short_reason(&e)),
                );
                return;
            }
            Err(e) => {
                self.aborted = Some(e);
                return;
            }
        };
        let fault = self.opts.inject.fault(i);
        // `Err`: not the config's fault (no memory, a dead context after an earlier
        // fault): stop, keep what was learnt, and do not blame this config.
        let verdict = match self.checker.run(cfg, &*kernel, fault) {
            Ok(v) => v,
            Err(e) => {
                self.aborted = Some(e);
                return;
            }
        };
        match verdict {
            Verdict::Wrong(why) => {
                record(report, &mut self.new_failures, fail(FailStage::WrongResult, why));
                return;
            }
            Verdict::LaunchFailed(e) => {
                record_launch_failure(report, &mut self.new_failures, fail, &e);
                return;
            }
            Verdict::Pass {
                demoted: Some((d, why)),
            } => {
                // The trusted result this one was compared with was wrong: its config
                // fails after all, its timing goes.
                self.passed.retain(|p| p.0 != d);
                report.timings.retain(|x| x.config != cands[d]);
                record(
                    report,
                    &mut self.new_failures,
                    FailedConfig {
                        config: cands[d],
                        stage: FailStage::WrongResult,
                        reason: why,
                    },
                );
            }
            Verdict::Pass { demoted: None } => {}
        }
        let best_ms = self.best_ms();
        let scale = if self.opts.inject.slow.contains(&i) {
            1000.0
        } else {
            1.0
        };
        let limit = measure::TOO_SLOW_FACTOR * best_ms;
        let timed = match self.checker.time(cfg, &*kernel, self.flush.as_ref(), limit, scale) {
            Ok(r) => r,
            Err(e) => {
                self.aborted = Some(e);
                return;
            }
        };
        match timed {
            Ok(measure::Measured::Median(t)) => {
                report.timings.push(Timing { config: *cfg, ms: t.ms });
                self.passed.push((i, kernel, t));
            }
            // Reported, not stored: `record` would persist it for every shape.
            Ok(measure::Measured::TooSlow(ms)) => report.failed.push(Failure {
                config: *cfg,
                stage: FailStage::TooSlow,
                reason: format!(
                    "first timed run {ms:.3} ms > {}x the best so far ({best_ms:.3} ms)",
                    measure::TOO_SLOW_FACTOR,
                ),
                from_cache: false,
            }),
            Err(e) => {
                record_launch_failure(report, &mut self.new_failures, fail, &e);
                return;
            }
        }
        if let Err(e) = self.checker.promote(i, cfg, fault) {
            self.aborted = Some(e);
        }
    }

    /// What passed, as [`pick`] takes it.
    fn entries(&self, cands: &[TileConfig], tk: &TargetKernel) -> Vec<pick::Entry> {
        let plan = &tk.plan().configs;
        self.passed
            .iter()
            .map(|(i, _, t)| pick::Entry {
                config: cands[*i],
                rank: plan.iter().position(|c| *c == cands[*i]).unwrap_or(usize::MAX),
                timed: *t,
            })
            .collect()
    }

    /// The final round: the fastest few ([`pick::finalists`]) timed again together, in
    /// interleaved rounds, and those medians replace theirs. Candidates are timed one
    /// after the other, and a GPU's clock drifts over a tune (it heats up to its power
    /// limit), so a first-pass median says as much about when a config ran as about the
    /// config. The winner is then one of the finalists: the others were more than the
    /// round's band behind in the first pass, and their first-pass medians were taken at
    /// another clock. A failure here aborts the tune like a device error: nothing is
    /// stored, and the error is the tune's.
    fn final_round(&mut self, cands: &[TileConfig], tk: &TargetKernel, report: &mut TuneReport) {
        if self.aborted.is_some() {
            return;
        }
        let band = self.opts.inject.final_band.unwrap_or(pick::FINAL_BAND);
        let finalists = pick::finalists(&self.entries(cands, tk), band);
        if finalists.is_empty() {
            return;
        }
        let best = self.passed[finalists[0]].2.ms;
        let rounds = measure::reps_for(best, self.device_type);
        let kernels: Vec<(TileConfig, &(dyn Any + Send + Sync))> = finalists
            .iter()
            .map(|&f| (cands[self.passed[f].0], &*self.passed[f].1))
            .collect();
        match self.checker.time_together(&kernels, self.flush.as_ref(), rounds) {
            Ok(Ok(timed)) => {
                for (&f, t) in finalists.iter().zip(timed) {
                    self.passed[f].2 = t;
                    report.final_round.push(Timing {
                        config: cands[self.passed[f].0],
                        ms: t.ms,
                    });
                }
                let chosen: Vec<usize> = finalists.iter().map(|&f| self.passed[f].0).collect();
                self.passed.retain(|p| chosen.contains(&p.0));
            }
            // Every finalist ran, passed and was timed moments ago: a failure now is the
            // device's, not a config's.
            Ok(Err(e)) | Err(e) => self.aborted = Some(e),
        }
    }

    /// The winner among what passed ([`pick`]: ties by the plan's order), which after a
    /// final round is the finalists.
    fn finish(self, cands: &[TileConfig], tk: &TargetKernel) -> Tried {
        let entries = self.entries(cands, tk);
        let picked = pick::pick(&entries);
        let mut passed = self.passed;
        let (winner, best_ms, tied) = match picked {
            Some(p) => {
                let (i, kern, t) = passed.swap_remove(p.winner);
                (Some((i, kern)), t.ms, p.tied)
            }
            None => (None, f64::INFINITY, Vec::new()),
        };
        Tried {
            winner,
            best_ms,
            tied,
            new_failures: self.new_failures,
            aborted: self.aborted,
        }
    }
}

/// Writes the winner (if any) and the new failures into the cache file; a failure to
/// write is a warning (the result still serves this process).
fn store(
    d: &DiskCache,
    ir: &gemm_core::GemmIr,
    tk: &TargetKernel,
    dev: &crate::Device,
    bucket: &str,
    found: Option<&Winner>,
    new_failures: &[FailedConfig],
) {
    if found.is_none() && new_failures.is_empty() {
        return;
    }
    let stored = d.update(|f| {
        f.target_spec = serde_json::from_str(tk.spec_json()).ok();
        f.compiler = Some(dev.compiler_version());
        f.ir = Some(ir.clone());
        f.device_id = Some(dev.info().id.clone());
        if let Some(w) = found {
            f.winners.insert(bucket.to_string(), w.clone());
        }
        for nf in new_failures {
            f.failed.retain(|x| x.config != nf.config);
            f.failed.push(nf.clone());
        }
    });
    if let Err(e) = stored {
        eprintln!(
            "crossgemm: warning: could not store tuning results in {}: {e}",
            d.path().display()
        );
    }
}

/// The error of a run in which no candidate passed, naming the first failures.
fn nothing_passed(call: &Call<'_, '_>, report: &TuneReport, candidates: usize) -> GemmError {
    let why: Vec<String> = report
        .failed
        .iter()
        .take(3)
        .map(|f| format!("{} ({:?}): {}", f.config, f.stage, first_line(&f.reason)))
        .collect();
    GemmError::NoCandidatePassed {
        kernel: call.spec.name.to_string(),
        device: call.device().info().to_string(),
        candidates,
        failures: if why.is_empty() {
            "none tried".into()
        } else {
            why.join("; ")
        },
    }
}

/// Whether a `compile` error is the config's (a rejected source, a module the driver
/// will not load) rather than the device's (no context).
fn is_build_error(e: &GemmError) -> bool {
    match e {
        GemmError::Compile { .. } => true,
        GemmError::Driver { op, .. } => op.contains("module"),
        _ => false,
    }
}

/// A candidate whose launch (or a timed run) failed: in the report, and in the cache
/// unless the device was out of memory (after the staging scratch was freed). That is
/// the device's state at the time, not the config's: a split-K workspace that did not
/// fit beside the caller's buffers would bar the config from every shape for good.
fn record_launch_failure(
    report: &mut TuneReport,
    new: &mut Vec<FailedConfig>,
    fail: impl FnOnce(FailStage, String) -> FailedConfig,
    e: &GemmError,
) {
    if e.is_out_of_memory() {
        report_failure(report, &fail(FailStage::OutOfMemory, short_reason(e)));
    } else {
        record(report, new, fail(FailStage::Launch, short_reason(e)));
    }
}

/// A failure of this run: in the report, and among the new failures the cache keeps.
fn record(report: &mut TuneReport, new: &mut Vec<FailedConfig>, f: FailedConfig) {
    report_failure(report, &f);
    new.push(f);
}

/// A failure of this run in the report alone.
fn report_failure(report: &mut TuneReport, f: &FailedConfig) {
    report.failed.push(Failure {
        config: f.config,
        stage: f.stage,
        reason: f.reason.clone(),
        from_cache: false,
    });
}

/// The first lines of a compiler log that say `error`, else its first lines; at most
/// ~600 characters, so that a cache file stays readable.
fn short_reason(e: &GemmError) -> String {
    let full = match e {
        GemmError::Compile { log, .. } => {
            let errs: Vec<&str> = log.lines().filter(|l| l.contains("error")).take(3).collect();
            if errs.is_empty() {
                log.lines().take(3).collect::<Vec<_>>().join("\n")
            } else {
                errs.join("\n")
            }
        }
        other => other.to_string(),
    };
    let mut s: String = full.chars().take(600).collect();
    if s.len() < full.len() {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_short() {
        let e = GemmError::Compile {
            backend: "OpenCL",
            kernel: "k".into(),
            options: vec![],
            log: format!("note\n<src>:3: error: nope\n{}", "x".repeat(5000)),
        };
        assert_eq!(short_reason(&e), "<src>:3: error: nope");
        let e = GemmError::Unsupported("y".repeat(5000));
        assert!(short_reason(&e).chars().count() <= 601);
    }
}
