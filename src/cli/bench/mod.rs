//! `crossgemm bench`: the shape table of `bench/shapes.toml`, each case tuned, then timed
//! beside cuBLAS (`cublasGemmEx`, + a separate epilogue kernel for epilogue rows) and
//! cuBLASLt (its own fused epilogue) in this process, on the same buffers and stream,
//! under one protocol. Every output is checked, each written into a NaN-poisoned buffer:
//! cuBLAS's against the host reference at sampled points, then ours and cuBLASLt's
//! against cuBLAS's whole output (against the sampled host reference when cuBLAS did not
//! run or was itself wrong). A side over its dtype's error limit
//! ([`report::error_limit`]) is marked wrong in the report and left out of its means;
//! any wrong row makes the command fail after the report is written.
//! Writes `<out>/<device>-<date>.{json,md,svg}`.

mod args;

use super::check::{max_rel_err, poisoned, sampled_error, sampled_reference};
use super::operands::{out_view, Inputs};
use super::report::{self, Case, Filter, LaunchOverhead, Report, Row, ShapeTable};
use super::{CliResult, Dtype, Epilogue, KernelEntry, WLayout};
pub use args::BenchArgs;
use crossgemm::bench::{back_to_back_us, bare_launch_us, copy_bytes_for, copy_gbps, Timer};
use crossgemm::tune::tune_with;
use crossgemm::untyped::{launch, launch_with};
use crossgemm::{Backend, Device, Element, GemmError, Layout, LookupSource, Matrix, MatrixOut, TuneOptions};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

/// Everything a case needs that does not change between cases.
struct Bench<'a> {
    dev: Device,
    timer: Timer,
    #[cfg(feature = "baseline")]
    cublas: Option<crossgemm::bench::baseline::Cublas>,
    opts: TuneOptions,
    kernels: &'a [KernelEntry],
    /// `--first-call`: look up and launch as `cached` does instead of tuning.
    first_call: bool,
    /// `--pad`: ours run on views with leading dimensions K + pad.
    pad: usize,
    /// `--batch`: products per case.
    batch: usize,
    /// `--w-layout`: how the kernels' w is stored.
    w_layout: Layout,
}

pub fn run(kernels: &'static [KernelEntry], a: &BenchArgs, cache_dir: Option<PathBuf>) -> CliResult {
    let mut rep = if a.report_only {
        let parts = a
            .input
            .iter()
            .map(|p| Report::read_json(p))
            .collect::<Result<Vec<_>, _>>()?;
        Report::combine(parts)?
    } else {
        if a.first_call {
            // Before any thread or launch reads it: every plain launch of this process
            // is then a `cached` one, as in the user's program being imitated.
            std::env::set_var("CROSSGEMM_TUNE", "cached");
        }
        // The JSON is rewritten after every case, so a run cut short (a device session's
        // time limit) keeps what it measured; `--report-only` can combine such parts.
        let checkpoint = |rep: &Report| rep.write_json(&report::output_path(rep, &a.out, a.name.as_deref(), "json"));
        measure_all(kernels, a, cache_dir, &checkpoint)?
    };
    for m in &a.merge {
        let stats = report::fold_triton(&mut rep, m)?;
        eprintln!("{}: {stats}", m.display());
    }
    // Parts measured by an older build (or merged just now) are held to this build's
    // limits too; a mark already there is kept.
    rep.judge_rows();
    let change = match &a.against {
        Some(p) => {
            let mut before = Report::read_json(p)?;
            before.judge_rows();
            Some(rep.change_markdown(&before))
        }
        None => None,
    };
    let extra = rep.first_call_markdown() + &rep.views_markdown() + change.as_deref().unwrap_or("");
    report::write_files(&rep, &a.out, a.name.as_deref(), Some(&extra))?;
    wrong_outputs_fail(&rep)
}

/// `Err` naming every row with a wrong output (the report is written first, marking
/// them): a benchmark whose outputs are wrong has measured nothing worth comparing.
fn wrong_outputs_fail(rep: &Report) -> CliResult {
    let wrong = rep.wrong_rows();
    if wrong.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{} of {} rows have a wrong output (over the dtype's error limit, or not finite); the report marks them and leaves them out of the means:\n  {}",
        wrong.len(),
        rep.rows.len(),
        wrong.join("\n  ")
    ))
}

/// The revision the report names: `--commit`, else CROSSGEMM_COMMIT, else the first line
/// of a `COMMIT` file beside the executable (what `scripts/dev-build.sh` writes beside the
/// binaries it copies, whose working directory on the GPU machine is a checkout of another
/// revision), else the working directory's git HEAD.
fn commit(arg: Option<&str>) -> String {
    if let Some(c) = arg
        .map(str::to_string)
        .or_else(crossgemm::commit)
        .or_else(commit_beside_binary)
    {
        return c;
    }
    std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

fn commit_beside_binary() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let text = std::fs::read_to_string(exe.parent()?.join("COMMIT")).ok()?;
    let first = text.lines().next()?.trim();
    (!first.is_empty()).then(|| first.to_string())
}

fn measure_all(
    kernels: &'static [KernelEntry],
    a: &BenchArgs,
    cache_dir: Option<PathBuf>,
    checkpoint: &dyn Fn(&Report) -> CliResult,
) -> Result<Report, String> {
    // Explicit shapes need no table: without one they get the `cli` group and, unless
    // --dtypes/--epilogues say otherwise, f16 with every epilogue.
    let table = if !a.shape.is_empty() && !a.shapes.exists() {
        ShapeTable {
            source: format!("--shape (no {})", a.shapes.display()),
            dtypes: vec!["f16".into()],
            epilogues: crossgemm::bench::Epilogue::NAMES
                .iter()
                .map(|e| e.to_string())
                .collect(),
            groups: Vec::new(),
        }
    } else {
        ShapeTable::load(&a.shapes)?
    };
    let filter = Filter {
        groups: a.groups.clone(),
        dtypes: a.dtypes.clone(),
        epilogues: a.epilogues.clone(),
        shapes: (!a.shape.is_empty()).then(|| a.shape.clone()),
    };
    let cases = table.cases(&filter)?;
    if cases.is_empty() {
        return Err(format!("no case of {} matches the filters", a.shapes.display()));
    }
    let dev = super::open_device(a.device.as_deref(), "benchmark")?;
    let l2 = kernels
        .first()
        .and_then(|e| e.spec.target_for(&dev).ok())
        .map_or(0, |t| t.spec().l2_bytes);
    let flush = Timer::flush_bytes_for(&dev, l2);
    let timer = Timer::new(&dev, flush, a.warmup, a.runs).map_err(|e| e.to_string())?;
    let mut opts = super::tune_options(cache_dir, a.max, &a.configs);
    // A benchmark wants each shape's best, not a first call's quick choice.
    opts.thorough = true;
    let first_call = a.first_call;

    let i = dev.info();
    let mut rep = Report::new(
        &i.name,
        &i.id,
        &i.driver,
        commit(a.commit.as_deref()),
        report::utc_date(std::time::SystemTime::now()),
    );
    // The exact invocation, so that a report says how to make it again.
    let argv: Vec<String> = std::env::args().skip(1).collect();
    rep.notes.push(format!("command: crossgemm {}", argv.join(" ")));
    if let Some(tool) = super::under_tool::detected() {
        rep.notes.push(format!(
            "ran under {tool}: every launch went through the tool, so the times are not the kernels' own"
        ));
    }
    rep.notes.push(format!(
        "times: median of {} runs after {} warm-up runs, {} MiB overwritten before each run (outside the timed region), {}; the sides of a row (ours, cuBLAS, cuBLAS with its epilogue kernel, cuBLASLt) are timed in the same rounds, one run of each in turn (in reverse order every other round), so that a clock drifting over the row moves them alike",
        timer.runs(),
        a.warmup,
        flush >> 20,
        if dev.info().kind == Backend::Cuda {
            "CUDA events around the call"
        } else {
            "host clock between two queue drains"
        }
    ));
    rep.notes.push(if first_call {
        "ours (--first-call): nothing tuned; each case first runs once as a plain `CROSSGEMM_TUNE=cached` launch (its wall time is `first_call_ms`), then the config that lookup names is timed, named explicitly".into()
    } else {
        "ours: the tuner's winner for the shape (tuned in this run unless cached), launched with that config named explicitly (so CROSSGEMM_TUNE cannot make the timed config differ from the reported one; the per-call config lookup runs on the host while the L2 overwrite before each run still occupies the device)"
            .into()
    });
    rep.notes.push(format!(
        "checks: every output is written into a NaN-filled buffer; an error over the dtype's limit (max rel err: {}) or not finite marks that side wrong, and its speed-ups are left out",
        report::DTYPES
            .iter()
            .filter_map(|d| report::error_limit(d).map(|l| format!("{d} {l:.0e}")))
            .collect::<Vec<_>>()
            .join(", ")
    ));

    let bench = Bench {
        #[cfg(feature = "baseline")]
        cublas: vendor(&dev, a.no_vendor, &mut rep),
        dev,
        timer,
        opts,
        kernels,
        first_call,
        pad: a.pad,
        batch: a.batch.max(1),
        w_layout: a.w_layout.layout(),
    };
    if a.w_layout == WLayout::Row {
        rep.notes.push(
            "w row-major (--w-layout row): w is stored K×N, N-contiguous; ours run the kernels whose `w: Matrix<T>`, cuBLAS (`cublasGemmEx` with w not transposed, \"NN\") and cuBLASLt (TRANSA N) read the same buffer".into(),
        );
    }
    if a.batch > 1 {
        rep.notes.push(format!(
            "batches (--batch {}): each row is {} products in one call; ours on batched views of x and w stored back to back (bias broadcast), cuBLAS `cublasGemmStridedBatchedEx` on the same buffers (its bias epilogue one elementwise kernel over every product); cuBLASLt `cublasLtMatmul` with strided-batch layouts (BATCH_COUNT, STRIDED_BATCH_OFFSET), its fused bias epilogue broadcast to every product",
            a.batch, a.batch
        ));
    }
    if a.pad > 0 {
        rep.notes.push(format!(
            "views (--pad {}): ours read x and w as views with leading dimension K + {} (x row-major, w column-major), tuned on those views; cuBLAS and cuBLASLt read the same layouts (leading dimension K + {}); ours on the packed copies too (`packed_us`), in the same rounds, with their own winner (tuned in a cache folder of their own: the tuning cache keys a call by its shape, not its leading dimensions)",
            a.pad, a.pad, a.pad
        ));
    }
    #[cfg(not(feature = "baseline"))]
    rep.notes
        .push("cuBLAS/cuBLASLt: not built in (build with the `baseline` feature)".into());

    // The ceiling for memory-bound shapes.
    rep.copy_gbps = match copy_gbps(&bench.dev, copy_bytes_for(&bench.dev, l2)) {
        Ok(g) => Some(g),
        Err(e) => {
            rep.notes.push(format!("copy bandwidth not measured: {e}"));
            None
        }
    };

    if a.prepare {
        prepare_all(&bench, &cases, &mut rep);
    }
    let bar = progress_bar(cases.len());
    let started = Instant::now();
    for (i, case) in cases.iter().enumerate() {
        let shape = Row {
            batch: bench.batch,
            ..case.row()
        }
        .shape_text();
        let label = format!("{shape} {} {}", case.dtype, case.epilogue);
        match &bar {
            Some(b) => b.set_message(label.clone()),
            None => eprintln!("[{}/{}] {label}", i + 1, cases.len()),
        }
        let row = bench.case(case);
        if bar.is_none() {
            eprintln!("    {}", summary(&row));
        }
        rep.rows.push(row);
        checkpoint(&rep)?;
        if let Some(b) = &bar {
            b.inc(1);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    eprintln!("{} cases in {:.1} s", cases.len(), started.elapsed().as_secs_f64());
    match launch_overhead(&bench) {
        Ok(o) => rep.launch_overhead = Some(o),
        Err(e) => rep.notes.push(format!("launch overhead not measured: {e}")),
    }
    Ok(rep)
}

#[cfg(feature = "baseline")]
fn vendor(dev: &Device, skip: bool, rep: &mut Report) -> Option<crossgemm::bench::baseline::Cublas> {
    use crossgemm::bench::baseline::Cublas;
    if skip {
        rep.notes.push("cuBLAS/cuBLASLt: skipped (--no-vendor)".into());
        return None;
    }
    if dev.info().kind != Backend::Cuda {
        rep.notes.push(format!(
            "cuBLAS/cuBLASLt: not run ({} is not a CUDA device); errors are against the host reference",
            dev.info().id
        ));
        return None;
    }
    match Cublas::new(dev) {
        Ok(c) => {
            rep.cublas_version = Some(c.version());
            rep.notes.push(
                "cuBLAS: cublasGemmEx, TN layout, CUBLAS_COMPUTE_32F (fp32 accumulation, reduced-precision reductions disallowed; CUBLAS_COMPUTE_32F_FAST_TF32 for tf32 rows), CUBLAS_GEMM_DEFAULT; epilogue rows add a separate vectorised bias+activation kernel (unfused)"
                    .into(),
            );
            rep.notes.push(
                "cuBLASLt: cublasLtMatmul with CUBLASLT_EPILOGUE_RELU_BIAS / GELU_BIAS (DEFAULT for none rows), the heuristic's first algorithm, 32 MiB workspace"
                    .into(),
            );
            rep.notes.push(
                "max_rel_err: max |ours - cuBLAS| / max(|cuBLAS|, mean |cuBLAS|) over the whole output (cublaslt_max_rel_err: the same for cuBLASLt); cublas_max_rel_err: cuBLAS against the host reference at sampled points (every element up to 65536, else 4100), and where that is over the limit ours and cuBLASLt are checked against the sampled host reference instead (err_vs \"reference\")"
                    .into(),
            );
            Some(c)
        }
        Err(e) => {
            rep.notes.push(format!("cuBLAS/cuBLASLt: not run: {e}"));
            None
        }
    }
}

fn progress_bar(len: usize) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(len as u64), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {elapsed} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    Some(bar)
}

fn summary(r: &Row) -> String {
    let us = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
    let x = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}x"));
    let e = |v: Option<f64>| v.map_or("-".into(), |e| format!("{e:.1e}"));
    let mut s = format!(
        "ours {} us ({} TFLOP/s), cuBLAS {} us {}, cuBLASLt {} us {}, err {} (cuBLAS {}, cuBLASLt {}), {}",
        us(r.ours_us),
        r.ours_tflops.map_or("-".into(), |t| format!("{t:.1}")),
        us(r.cublas_us),
        x(r.speedup_vs_cublas),
        us(r.cublaslt_us),
        x(r.speedup_vs_cublaslt),
        e(r.max_rel_err),
        e(r.cublas_max_rel_err),
        e(r.cublaslt_max_rel_err),
        r.config
    );
    if let Some(ms) = r.first_call_ms {
        s.push_str(&format!(", first call {ms:.0} ms ({}", r.config_source));
        if !r.first_call_kernel.is_empty() {
            s.push_str(&format!(", {}", r.first_call_kernel));
        }
        s.push(')');
    }
    if r.wrong {
        s.push_str(&format!(" WRONG: {}", r.wrong_text()));
    }
    if !r.note.is_empty() {
        s.push_str(&format!(" [{}]", r.note));
    }
    s
}

impl Bench<'_> {
    fn case(&self, case: &Case) -> Row {
        let mut row = Row {
            err_vs: "reference".into(),
            batch: self.batch,
            ..case.row()
        };
        let entry = match entry_for(self.kernels, case, self.w_layout) {
            Ok(e) => e,
            Err(why) => {
                row.note = why;
                return row;
            }
        };
        let r = match entry.dtype {
            Dtype::F16 => self.measure::<crossgemm::f16>(entry, &mut row),
            Dtype::Bf16 => self.measure::<crossgemm::bf16>(entry, &mut row),
            Dtype::F32 | Dtype::Tf32 | Dtype::Tf32x3 => self.measure::<f32>(entry, &mut row),
        };
        if let Err(e) = r {
            row.note_also(e.to_string().lines().next().unwrap_or(""));
        }
        row.judge();
        row
    }

    fn measure<T: Element>(&self, entry: &KernelEntry, row: &mut Row) -> Result<(), GemmError> {
        let (m, n, k) = (row.m, row.n, row.k);
        let spec = entry.spec;
        let bias_on = entry.epilogue != Epilogue::None;
        let mut inp = Inputs::<T>::for_entry(&self.dev, (m, n, k), entry)?;
        inp.pad(self.pad)?;
        inp.batch(self.batch)?;
        let args = inp.args();
        let batch = self.batch;
        // The host reference at sampled points: what cuBLAS is checked against, and
        // what ours is checked against when there is no trusted cuBLAS output.
        let sampled = sampled_reference(spec, &inp, (m, n, k));
        let to_f32 =
            |o: &Matrix<T>| -> Result<Vec<f32>, GemmError> { Ok(o.to_host()?.into_iter().map(T::to_f32).collect()) };

        let mut scratch = Matrix::<T>::zeros(&self.dev, batch * m, n)?;
        let best = if self.first_call {
            self.first_call(spec, &args, &mut scratch, row)?
        } else {
            let mut sv = out_view(&mut scratch, (m, n), batch)?;
            let t = tune_with(spec, &args, sv.__out(), &self.opts)?;
            row.tune_ms = if t.cache_hit { 0.0 } else { t.tune_ms };
            row.tune_cache_hit = t.cache_hit;
            row.config_source = if t.cache_hit { "cache" } else { "tuned" }.into();
            if !t.failed.is_empty() {
                row.note = format!("{} tuning candidates failed", t.failed.len());
            }
            t.best
        };
        // `--pad`: ours on the packed operands as well, timed in the same rounds as the
        // views, with their own winner: tuned in a cache folder of their own, since the
        // cache keys a call by its shape, not its leading dimensions, and the views'
        // winner can be another config (a row pitch that is an odd multiple of 16 bytes
        // costs TMA a sector more a row: bench/results/h200-2026-12-03a). Under
        // --first-call only the views run.
        let mut packed = if self.pad > 0 && !self.first_call {
            let pargs = inp.packed_args();
            let popts = TuneOptions {
                cache_dir: self.opts.cache_dir.as_ref().map(|d| d.join("packed")),
                ..self.opts.clone()
            };
            let t = tune_with(spec, &pargs, scratch.__out(), &popts)?;
            row.packed_config = t.best.to_string();
            Some((pargs, t.best, poisoned::<T>(&self.dev, m, n)?))
        } else {
            None
        };
        drop(scratch);
        row.config = best.to_string();
        // The reported config, named explicitly: a plain `launch` picks its config by
        // CROSSGEMM_TUNE (the planner's default under `off`, whatever was just tuned),
        // and the row would time and check one config while naming another.
        let mut out = poisoned::<T>(&self.dev, batch * m, n)?;
        let staged_before = crossgemm::__private::staged_operands();
        // The staging note, once ours has run.
        let note_staged = |row: &mut Row| {
            if crossgemm::__private::staged_operands() > staged_before {
                row.note_also(
                    "misaligned rows: ours copies them into aligned scratch in each timed call (CROSSGEMM_STAGE)",
                );
            }
        };

        #[cfg(feature = "baseline")]
        if let Some(cb) = &self.cublas {
            use crossgemm::bench::baseline::Compute;
            let (x, w, b) = (&inp.x, &inp.w, &inp.b);
            let compute = if entry.dtype == Dtype::Tf32 {
                Compute::Tf32
            } else {
                Compute::F32
            };
            let be = entry.epilogue;
            // Batches and padded views: the vendor reads the same layouts as ours.
            let run = |theirs: &mut Matrix<T>| match (inp.batched(), inp.padded(), inp.w_rows()) {
                (Some((xb, wb, nb)), _, _) => cb.gemm_batched(xb, wb, theirs, nb, compute),
                (None, Some((xp, wp, _)), _) => cb.gemm_strided(xp, wp, k, theirs, compute),
                (None, None, Some(wr)) => cb.gemm(x, wr, theirs, compute),
                (None, None, None) => cb.gemm(x, w, theirs, compute),
            };
            let (lx, lw) = inp
                .batched()
                .map(|(xb, wb, _)| (xb, wb))
                .or(inp.padded().map(|(xp, wp, _)| (xp, wp)))
                .unwrap_or((x, w));
            // cuBLASLt's leading dimension: the stored rows of the x it reads.
            let ld = lx.cols();
            let bias = bias_on.then_some(b);
            // An output for each side that runs: cuBLAS with its epilogue kernel on epilogue
            // rows only, cuBLASLt where it has a plan (with that plan).
            let mut gemm_out = poisoned::<T>(&self.dev, batch * m, n)?;
            let mut epi_out = bias_on.then(|| poisoned::<T>(&self.dev, batch * m, n)).transpose()?;
            let (mut lt, lt_err) = match cb.lt_plan::<T>(m, n, k, ld, batch, be, compute, entry.w_layout()) {
                Ok(plan) => (Some((plan, poisoned::<T>(&self.dev, batch * m, n)?)), None),
                Err(e) => (None, Some(e)),
            };
            let has_lt = lt.is_some();
            let has_packed = packed.is_some();
            // Every side timed in the same rounds (`time_together`): one run of each in
            // turn, so that the ratios do not carry the clock's drift over the row.
            let samples = {
                let mut ov = out_view(&mut out, (m, n), batch)?;
                let mut ours = || launch_with(spec, &best, &args, ov.__out());
                let mut gemm = || run(&mut gemm_out);
                let mut gemm_epi = || match epi_out.as_mut() {
                    Some(o) => {
                        run(o)?;
                        cb.bias_act(o, b, be)
                    }
                    None => Ok(()),
                };
                let mut lt_run = || match (lt.as_mut(), inp.w_rows()) {
                    (Some((plan, o)), Some(wr)) => cb.lt_matmul(plan, x, wr, bias, o),
                    (Some((plan, o)), None) => cb.lt_matmul(plan, lx, lw, bias, o),
                    (None, _) => Ok(()),
                };
                let mut packed_run = || match packed.as_mut() {
                    Some((pargs, cfg, o)) => launch_with(spec, cfg, pargs, o.__out()),
                    None => Ok(()),
                };
                let mut works: Vec<&mut dyn FnMut() -> Result<(), GemmError>> = vec![&mut ours, &mut gemm];
                if bias_on {
                    works.push(&mut gemm_epi);
                }
                if has_lt {
                    works.push(&mut lt_run);
                }
                if has_packed {
                    works.push(&mut packed_run);
                }
                self.timer.time_together(&mut works)?
            };
            // The sides in `works` order; the optional ones at the end.
            let (lt_at, packed_at) = (2 + bias_on as usize, 2 + bias_on as usize + has_lt as usize);
            row.ours_us = Some(samples[0].median_us);
            note_staged(row);
            row.cublas_gemm_us = Some(samples[1].median_us);
            row.cublas_us = Some(if bias_on {
                samples[2].median_us
            } else {
                samples[1].median_us
            });
            let got = to_f32(&out)?;
            drop(out);
            // The last timed run's result: the GEMM (and epilogue).
            let want = to_f32(epi_out.as_ref().unwrap_or(&gemm_out))?;
            drop((gemm_out, epi_out));
            let cublas_err = sampled_error(&sampled, &want, n);
            row.cublas_max_rel_err = Some(cublas_err);
            // cuBLAS is the reference only while it agrees with the host's.
            let trusted = report::error_limit(&row.dtype).is_some_and(|l| cublas_err <= l);
            let check = |o: &[f32]| {
                if trusted {
                    max_rel_err(o, &want)
                } else {
                    sampled_error(&sampled, o, n)
                }
            };
            row.max_rel_err = Some(check(&got));
            row.err_vs = if trusted { "cublas" } else { "reference" }.into();
            if let Some((_, lt_out)) = &lt {
                row.cublaslt_us = Some(samples[lt_at].median_us);
                row.cublaslt_max_rel_err = Some(check(&to_f32(lt_out)?));
            }
            if let Some((_, _, p_out)) = &packed {
                row.packed_us = Some(samples[packed_at].median_us);
                row.packed_max_rel_err = Some(check(&to_f32(p_out)?));
            }
            if let Some(e) = lt_err {
                row.note_also(&format!("cuBLASLt: {}", e.to_string().lines().next().unwrap_or("")));
            }
            return Ok(());
        }

        let has_packed = packed.is_some();
        let samples = {
            let mut ov = out_view(&mut out, (m, n), batch)?;
            let mut ours = || launch_with(spec, &best, &args, ov.__out());
            let mut packed_run = || match packed.as_mut() {
                Some((pargs, cfg, o)) => launch_with(spec, cfg, pargs, o.__out()),
                None => Ok(()),
            };
            let mut works: Vec<&mut dyn FnMut() -> Result<(), GemmError>> = vec![&mut ours];
            if has_packed {
                works.push(&mut packed_run);
            }
            self.timer.time_together(&mut works)?
        };
        row.ours_us = Some(samples[0].median_us);
        note_staged(row);
        let got = to_f32(&out)?;
        drop(out);

        // No vendor library: the host reference on a sample of the output.
        row.max_rel_err = Some(sampled_error(&sampled, &got, n));
        if let Some((_, _, p_out)) = &packed {
            row.packed_us = Some(samples[1].median_us);
            row.packed_max_rel_err = Some(sampled_error(&sampled, &to_f32(p_out)?, n));
        }
        Ok(())
    }
}

/// The built-in kernel of a case's dtype and epilogue, or why there is none.
fn entry_for<'k>(kernels: &'k [KernelEntry], case: &Case, w_layout: Layout) -> Result<&'k KernelEntry, String> {
    let parsed = (
        <Dtype as clap::ValueEnum>::from_str(&case.dtype, true),
        case.epilogue.parse::<Epilogue>(),
    );
    let (Ok(dtype), Ok(epi)) = parsed else {
        return Err(format!("unknown dtype or epilogue `{} {}`", case.dtype, case.epilogue));
    };
    KernelEntry::find_w(kernels, dtype, epi, w_layout)
}

/// `--prepare`: `prepare` for every kernel the cases use, once each, in case order; what
/// it compiled and how long it took go into the report's notes.
fn prepare_all(bench: &Bench<'_>, cases: &[Case], rep: &mut Report) {
    let mut done: Vec<&'static crossgemm::KernelSpec> = Vec::new();
    let started = Instant::now();
    for case in cases {
        // A case without a kernel says so in its own row.
        let Ok(entry) = entry_for(bench.kernels, case, bench.w_layout) else {
            continue;
        };
        if done.iter().any(|s| std::ptr::eq(*s, entry.spec)) {
            continue;
        }
        done.push(entry.spec);
        let note = match crossgemm::tune::prepare(entry.spec, &bench.dev) {
            Ok(r) => format!(
                "prepare `{}`: {} config(s) and {} row copies compiled, {} failed, {:.0} ms",
                entry.spec.name,
                r.prepared.len(),
                r.helpers.len(),
                r.failed.len() + r.failed_helpers.len(),
                r.ms
            ),
            Err(e) => format!(
                "prepare `{}` failed: {}",
                entry.spec.name,
                e.to_string().lines().next().unwrap_or("")
            ),
        };
        eprintln!("{note}");
        rep.notes.push(note);
    }
    rep.notes.push(format!(
        "--prepare: {} kernel(s) prepared in {:.1} s before the first calls",
        done.len(),
        started.elapsed().as_secs_f64()
    ));
}

impl Bench<'_> {
    /// `--first-call`: one plain launch, timed on the wall clock to its completion, as
    /// the user's first call of the kernel at this shape would be under
    /// `CROSSGEMM_TUNE=cached` (set for the process by [`run`]); then the config
    /// that launch used, by the same lookup.
    fn first_call<T: Element>(
        &self,
        spec: &'static crossgemm::KernelSpec,
        args: &[crossgemm::untyped::Arg<'_>],
        out: &mut Matrix<T>,
        row: &mut Row,
    ) -> Result<crossgemm::TileConfig, GemmError> {
        let before = crossgemm::compile_stats();
        let start = Instant::now();
        launch(spec, args, out.__out())?;
        self.dev.synchronize()?;
        row.first_call_ms = Some(start.elapsed().as_secs_f64() * 1e3);
        row.first_call_kernel = crossgemm::compile_stats().kernels_since(&before).into();
        let l = crossgemm::tune::lookup(spec, args, out.__out(), &self.opts)?;
        row.config_source = l.source.name().into();
        row.tune_cache_hit = l.source == LookupSource::Cache;
        Ok(l.config)
    }
}

/// A warm call of a small generated kernel against a bare launch of an empty kernel,
/// both back to back (µs per call): what the wrapper adds on top of the driver.
fn launch_overhead(b: &Bench<'_>) -> Result<LaunchOverhead, String> {
    let e = |e: GemmError| e.to_string();
    let entry = KernelEntry::find(b.kernels, Dtype::F16, Epilogue::None)?;
    // As examples/launch_overhead.rs: a kernel this small is all launch.
    let (m, n, k) = (1, 8, 8);
    let inp = Inputs::<crossgemm::f16>::new(&b.dev, (m, n, k), false).map_err(e)?;
    let mut out = Matrix::<crossgemm::f16>::zeros(&b.dev, m, n).map_err(e)?;
    let args = inp.args();
    // Any config will do for a launch this small: the tuner's quick choice (the first
    // that passes), not a thorough tune of every candidate; under --first-call nothing
    // is tuned, the first plain launch picks as `cached` does.
    if !b.first_call {
        let quick = TuneOptions {
            thorough: false,
            max_candidates: None,
            // The launch itself is measured, not a config: the plan's first that passes.
            configs: Vec::new(),
            ..b.opts.clone()
        };
        tune_with(entry.spec, &args, out.__out(), &quick).map_err(e)?;
    }
    let iters = 2000;
    let ours_us = back_to_back_us(&b.dev, iters, &mut || launch(entry.spec, &args, out.__out())).map_err(e)?;
    let bare_us = bare_launch_us(&b.dev, iters).map_err(e)?;
    Ok(LaunchOverhead {
        shape: format!("{m}x{n}x{k} f16 none"),
        ours_us,
        bare_us,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bench with a wrong row fails after writing its report, naming the row and side.
    #[test]
    fn wrong_rows_fail_the_command() {
        let mut rep = Report::default();
        let mut ok = Row {
            m: 8,
            n: 8,
            k: 8,
            dtype: "f16".into(),
            epilogue: "none".into(),
            max_rel_err: Some(1e-3),
            ..Row::default()
        };
        ok.judge();
        rep.rows.push(ok.clone());
        assert_eq!(wrong_outputs_fail(&rep), Ok(()));
        let mut bad = Row {
            m: 16,
            cublaslt_max_rel_err: Some(f64::INFINITY),
            ..ok
        };
        bad.judge();
        rep.rows.push(bad);
        let e = wrong_outputs_fail(&rep).unwrap_err();
        assert!(
            e.contains("1 of 2 rows") && e.contains("16x8x8 f16 none: cublaslt (error inf, limit 5.0e-3)"),
            "{e}"
        );
    }
}
