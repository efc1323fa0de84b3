//! Which config a launch uses: remembered per (kernel, device, shape bucket) in the
//! process, read from the tuning cache or the kernel's build-time table, started from
//! the nearest bucket's winner, tuned, or the planner's default, depending on
//! [`TuneMode`].

use super::options::{TuneMode, TuneOptions};
use super::report::DISK_HITS;
use super::search::tune_locked;
use super::{file_key, first_line, table, variant, TUNING};
use crate::cache::{self, DiskCache, FailStage, Winner};
use crate::call::{Arg, Call, OutArg};
use crate::error::{GemmError, Result};
use crate::spec::{KernelSpec, TargetKernel};
use gemm_core::TileConfig;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

/// Where a launch's config came from, remembered per (kernel, device, shape key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Origin {
    /// Tuned, read from the cache, or the table's winner for this device.
    Tuned,
    /// `cached` mode: the winner of the nearest bucket; `full` mode tunes over it.
    Nearest,
    /// `cached` mode found nothing (the planner's default); `full` mode tunes over it.
    NoEntry,
    /// Tuning failed: the nearest winner (as a `cached` launch would run it) or, with
    /// none, the planner's default; not retried in this process.
    TuneFailed {
        /// The config is the nearest winner (checked at each build variant, but never
        /// tuned again there: the tune just failed).
        nearest: bool,
    },
}

impl Origin {
    /// Whether the config is a winner (tuned, cached, nearest or imported), which is
    /// verified at each build variant it runs as ([`super::variant`]); the planner's
    /// default is not, as under `CROSSGEMM_TUNE=off`.
    fn is_winner(self) -> bool {
        matches!(
            self,
            Origin::Tuned | Origin::Nearest | Origin::TuneFailed { nearest: true }
        )
    }
}

pub(super) type MemoKey = (usize, u64, String);

pub(super) fn memo() -> &'static Mutex<HashMap<MemoKey, (TileConfig, Origin)>> {
    static MEMO: std::sync::OnceLock<Mutex<HashMap<MemoKey, (TileConfig, Origin)>>> = std::sync::OnceLock::new();
    MEMO.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The config a launch without an explicit one uses. Called by `launch` on a device.
/// A winner is checked at the call's build variant before its first use there.
pub(crate) fn choose(call: &Call<'_, '_>, tk: &TargetKernel) -> Result<TileConfig> {
    let (c, origin) = pick(call, tk)?;
    if !origin.is_winner() || !call.usable(tk, &c) {
        return Ok(c);
    }
    checked(call, tk, c, !matches!(origin, Origin::TuneFailed { .. }))
}

/// `c` if it passes at `call`'s build variant; else, under `full` and if `may_retune`,
/// the winner of a retune at this shape ([`retune`]); else the planner's default
/// (checked too); each with a warning. An error when none passes.
fn checked(call: &Call<'_, '_>, tk: &TargetKernel, c: TileConfig, may_retune: bool) -> Result<TileConfig> {
    let (stage, why) = match variant::ensure(call, tk, &c)? {
        Ok(()) => return Ok(c),
        Err(f) => f,
    };
    let (m, n, k) = call.mnk();
    let name = call.spec.name;
    let v = variant::describe(call, tk, &c);
    let what = format!(
        "`{name}` winner {c} failed its check at {m}x{n}x{k} [{v}]: {}",
        first_line(&why)
    );
    if may_retune && TuneMode::from_env() == TuneMode::Full {
        if let Some(r) = retune(call, tk, &c, stage, &why, &what)? {
            return Ok(r);
        }
    }
    let fallback = call.default_config(tk)?;
    if fallback != c {
        if let Ok(()) = variant::ensure(call, tk, &fallback)? {
            eprintln!("crossgemm: warning: {what}; using {fallback}");
            return Ok(fallback);
        }
    }
    Err(GemmError::NoCandidatePassed {
        kernel: name.to_string(),
        device: call.device().info().to_string(),
        candidates: if fallback == c { 1 } else { 2 },
        failures: format!("{what}; nor does the planner's default {fallback}"),
    })
}

/// After a launch of `c`, the config [`choose`] gave, failed with `err` (a cached winner
/// the device cannot build or run): the config to launch instead, once. Under `full` the
/// winner is marked failed in the tuning cache and its bucket tuned again ([`retune`]);
/// otherwise (and when that finds nothing) the planner's default, unless that is `c`.
/// The process forgets `c` for the bucket either way, with a warning.
pub(crate) fn launch_failed(
    call: &Call<'_, '_>,
    tk: &TargetKernel,
    c: &TileConfig,
    err: &GemmError,
) -> Result<TileConfig> {
    let (m, n, k) = call.mnk();
    let bucket = cache::problem_key(call.ir(), call.problem, crate::env::flag("CROSSGEMM_TUNE_EXACT"));
    let mkey: MemoKey = (call.spec as *const KernelSpec as usize, call.device().serial(), bucket);
    memo().lock().unwrap_or_else(|e| e.into_inner()).remove(&mkey);
    super::GENERATION.fetch_add(1, Ordering::AcqRel);
    let why = first_line(&err.to_string()).to_string();
    let what = format!("`{}` config {c} failed to launch at {m}x{n}x{k}: {why}", call.spec.name);
    if TuneMode::from_env() == TuneMode::Full {
        if let Some(r) = retune(call, tk, c, FailStage::Launch, &why, &what)? {
            return Ok(r);
        }
    }
    let fallback = call.default_config(tk)?;
    if fallback == *c {
        return Err(GemmError::NoCandidatePassed {
            kernel: call.spec.name.to_string(),
            device: call.device().info().to_string(),
            candidates: 1,
            failures: format!("{what}, and it is the planner's default"),
        });
    }
    eprintln!("crossgemm: warning: {what}; using {fallback}");
    Ok(fallback)
}

/// Under `full`: marks `c` failed in the tuning cache (the bucket loses it as its
/// winner, the config joins the failures, so no later tune picks it) and tunes the
/// bucket again at this call's shape, once. The new winner, checked at this variant
/// (the tune verified it here, or `ensure` does), or `None`.
fn retune(
    call: &Call<'_, '_>,
    tk: &TargetKernel,
    c: &TileConfig,
    stage: FailStage,
    why: &str,
    what: &str,
) -> Result<Option<TileConfig>> {
    let opts = TuneOptions::from_env();
    let (m, n, k) = call.mnk();
    let bucket = cache::problem_key(call.ir(), call.problem, opts.exact_shape);
    if let Some(dir) = &opts.cache_dir {
        let d = DiskCache::new(dir, file_key(call.spec, tk, call.device()));
        if let Err(e) = d.mark_failed(&bucket, c, stage, why) {
            eprintln!(
                "crossgemm: warning: could not record the failure in {}: {e}",
                d.path().display()
            );
        }
    }
    eprintln!("crossgemm: warning: {what}; tuning again");
    let mkey: MemoKey = (call.spec as *const KernelSpec as usize, call.device().serial(), bucket);
    let tuned = {
        let _guard = TUNING.lock().unwrap_or_else(|e| e.into_inner());
        tune_locked(call, tk, &opts)
    };
    let best = match tuned {
        Ok(r) if r.best != *c => r.best,
        Ok(_) => return Ok(None),
        Err(e) => {
            eprintln!(
                "crossgemm: warning: tuning `{}` at {m}x{n}x{k} failed: {}",
                call.spec.name,
                first_line(&e.to_string())
            );
            return Ok(None);
        }
    };
    if variant::ensure(call, tk, &best)?.is_err() {
        return Ok(None);
    }
    memo()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(mkey, (best, Origin::Tuned));
    Ok(Some(best))
}

/// The config of the call's bucket and where it came from, per [`TuneMode`].
fn pick(call: &Call<'_, '_>, tk: &TargetKernel) -> Result<(TileConfig, Origin)> {
    let spec = call.spec;
    let dev = call.device();
    let mode = TuneMode::from_env();
    if mode == TuneMode::Off {
        return Ok((call.default_config(tk)?, Origin::NoEntry));
    }
    let (m, n, k) = call.mnk();
    let bucket = cache::problem_key(call.ir(), call.problem, crate::env::flag("CROSSGEMM_TUNE_EXACT"));
    let mkey: MemoKey = (spec as *const KernelSpec as usize, dev.serial(), bucket.clone());
    // A remembered config is the bucket's; a shape of the same bucket it cannot run (an
    // alignment its family needs) falls back to the planner's default.
    let remembered = |mode: TuneMode| {
        memo()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&mkey)
            .copied()
            .filter(|(_, o)| !(mode == TuneMode::Full && matches!(o, Origin::NoEntry | Origin::Nearest)))
    };
    let runnable = |(c, o): (TileConfig, Origin)| -> Result<(TileConfig, Origin)> {
        if call.usable(tk, &c) {
            Ok((c, o))
        } else {
            Ok((call.default_config(tk)?, Origin::NoEntry))
        }
    };
    if let Some(r) = remembered(mode) {
        return runnable(r);
    }
    let remember = |c: TileConfig, o: Origin| {
        memo()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(mkey.clone(), (c, o));
        (c, o)
    };
    let opts = TuneOptions::from_env();
    if let Some(f) = found_winner(call, tk, &bucket, &opts) {
        if let (LookupSource::Table { entry, .. }, true) = (&f.source, crate::env::log()) {
            eprintln!("crossgemm: `{}` {m}x{n}x{k} uses {entry}: {}", spec.name, f.config);
        }
        return Ok(remember(f.config, Origin::Tuned));
    }
    if mode == TuneMode::Cached {
        if let Some(f) = found_start(call, tk, &bucket, &opts) {
            return Ok(remember(f.config, Origin::Nearest));
        }
        return Ok(remember(call.default_config(tk)?, Origin::NoEntry));
    }
    let _guard = TUNING.lock().unwrap_or_else(|e| e.into_inner());
    // Another thread may have tuned this key while we waited.
    if let Some(r) = remembered(mode) {
        return runnable(r);
    }
    match tune_locked(call, tk, &opts) {
        Ok(r) => Ok(remember(r.best, Origin::Tuned)),
        Err(e) => {
            // What a `cached` launch would run: a winner measured at a nearby shape knows
            // this kernel's kind of problem better than the planner's default does.
            let (fallback, what, nearest) = match &found_start(call, tk, &bucket, &opts) {
                Some(Found {
                    config,
                    source: LookupSource::Nearest(b),
                    ..
                }) => (*config, format!("the nearest winner, of the cache's {b},"), true),
                Some(Found {
                    config,
                    source: LookupSource::Table { entry, .. },
                    ..
                }) => (*config, format!("the nearest winner, {entry},"), true),
                _ => (call.default_config(tk)?, "the planner's default".to_string(), false),
            };
            eprintln!(
                "crossgemm: warning: tuning `{}` at {m}x{n}x{k} failed, using {what} {fallback}: {}",
                spec.name,
                first_line(&e.to_string())
            );
            Ok(remember(fallback, Origin::TuneFailed { nearest }))
        }
    }
}

/// A config found without tuning, where it came from, and its recorded time (ms).
struct Found {
    config: TileConfig,
    source: LookupSource,
    ms: Option<f64>,
}

impl Found {
    /// A table entry: the bucket's winner for this device (`winner`), or a starting point.
    fn from_table(s: &gemm_core::table::Seed, winner: bool) -> Found {
        Found {
            config: s.config,
            source: LookupSource::Table {
                entry: table::describe(s),
                winner,
            },
            ms: Some(s.us / 1e3),
        }
    }
}

/// The bucket's winner: the tuning cache's (measured on this machine), else the kernel's
/// table's for this device (measured on its kind of device). Either way nothing needs
/// tuning. The one order [`pick`] and [`lookup`] both follow.
fn found_winner(call: &Call<'_, '_>, tk: &TargetKernel, bucket: &str, opts: &TuneOptions) -> Option<Found> {
    if let Some(w) = cached_winner(call, tk, bucket, opts) {
        return Some(Found {
            config: w.config,
            source: LookupSource::Cache,
            ms: Some(w.ms),
        });
    }
    table::winner(call, tk, bucket).map(|s| Found::from_table(s, true))
}

/// A starting point for a bucket with no winner: the cache's nearest bucket, else the
/// table's nearest entry (which may be another bucket's winner). Where the call's default
/// is a shape specialist, only a specialist's start counts
/// ([`gemm_core::estimate::start_over_default`]: the nearest bucket by log-distance may be
/// another kind of shape).
///
/// A start measured on rows of another class than the call's (a `/a16` mark against
/// none) is adapted to the call's rows ([`gemm_core::estimate::for_rows`]), as the
/// planner's default is.
fn found_start(call: &Call<'_, '_>, tk: &TargetKernel, bucket: &str, opts: &TuneOptions) -> Option<Found> {
    let default = call.default_config(tk).ok();
    let suits = |c: &TileConfig| default.is_none_or(|d| gemm_core::estimate::start_over_default(c, &d, tk.spec()));
    if let Some((b, w)) = opts
        .cache_dir
        .as_ref()
        .and_then(|dir| nearest_winner(call, tk, dir, bucket))
        .filter(|(_, w)| suits(&w.config))
    {
        return Some(Found {
            config: for_call_rows(call, tk, bucket, &b, w.config),
            source: LookupSource::Nearest(b),
            ms: Some(w.ms),
        });
    }
    table::nearest(call, tk, bucket)
        .filter(|s| suits(&s.config))
        .map(|s| Found {
            config: for_call_rows(call, tk, bucket, &s.bucket, s.config),
            ..Found::from_table(s, false)
        })
}

/// `config`, a winner of bucket `measured`, or where that bucket's rows are of another
/// class than the call's (`bucket`), its variant for the call's rows among the configs
/// the call can run.
fn for_call_rows(
    call: &Call<'_, '_>,
    tk: &TargetKernel,
    bucket: &str,
    measured: &str,
    config: TileConfig,
) -> TileConfig {
    use gemm_core::records::key_align;
    if key_align(measured) == key_align(bucket) {
        return config;
    }
    gemm_core::estimate::for_rows(&call.usable_configs(tk), config, call.ir(), tk.spec(), call.problem)
}

/// The cache's winner of `bucket`, when it can run `problem` on `dev`.
pub(super) fn cached_winner(
    call: &Call<'_, '_>,
    tk: &TargetKernel,
    bucket: &str,
    opts: &TuneOptions,
) -> Option<Winner> {
    let (spec, dev) = (call.spec, call.device());
    let dir = opts.cache_dir.as_ref()?;
    let w = DiskCache::new(dir, file_key(spec, tk, dev))
        .load()
        .winners
        .remove(bucket)?;
    // The key pins device and source, so this only guards a hand-edited file.
    if !call.usable(tk, &w.config) {
        return None;
    }
    DISK_HITS.fetch_add(1, Ordering::Relaxed);
    Some(w)
}

/// The winner of the bucket nearest to `bucket` (see the module doc of [`crate::tune`])
/// among the cache files of `key`'s kernel, target and device name in `dir`, with its
/// bucket. Never the winner of `bucket` in `key`'s own file.
pub(super) fn nearest_winner(
    call: &Call<'_, '_>,
    tk: &TargetKernel,
    dir: &std::path::Path,
    bucket: &str,
) -> Option<(String, Winner)> {
    let key = &file_key(call.spec, tk, call.device());
    let mut best: Option<((u8, f64), String, Winner)> = None;
    for f in cache::read_all(dir) {
        if f.key.kernel != key.kernel || f.key.target != key.target || f.key.device_name != key.device_name {
            continue;
        }
        let same = f.key == *key;
        let rank = u8::from(!same);
        for (b, w) in f.winners {
            // This file's own winner of the bucket is a cache hit, not a start; another
            // driver's or source's is the best template there is.
            if same && b == bucket {
                continue;
            }
            let Some(dist) = cache::bucket_distance(bucket, &b) else {
                continue;
            };
            if !call.usable(tk, &w.config) {
                continue;
            }
            if best.as_ref().is_none_or(|(s, _, _)| (rank, dist) < *s) {
                best = Some(((rank, dist), b, w));
            }
        }
    }
    best.map(|(_, b, w)| (b, w))
}

/// Where the config of a [`lookup`] came from.
#[derive(Clone, Debug, PartialEq)]
pub enum LookupSource {
    /// The cache's winner of the call's bucket.
    Cache,
    /// The winner of another bucket (nearest-record start); its bucket key.
    Nearest(String),
    /// The kernel's build-time table ([`gemm_core::table`]): a winner measured on this
    /// kind of device, or (with `winner` false) the nearest starting point; which entry.
    Table { entry: String, winner: bool },
    /// The default config ([`gemm_core::estimate::default_pick`]): the planner's first
    /// that fits, unless it leaves most of the device idle and is estimated far behind.
    Default,
}

impl LookupSource {
    /// The source's name in reports (`tune --json`'s `source`, the bench's
    /// `config_source`): `cache`, `table` (this bucket's winner on this device),
    /// `nearest`, `table_nearest` or `default`.
    pub fn name(&self) -> &'static str {
        match self {
            LookupSource::Cache => "cache",
            LookupSource::Nearest(_) => "nearest",
            LookupSource::Table { winner: true, .. } => "table",
            LookupSource::Table { winner: false, .. } => "table_nearest",
            LookupSource::Default => "default",
        }
    }
}

/// What a `cached`-mode launch would use for these operands, without tuning.
#[derive(Clone, Debug, PartialEq)]
pub struct Lookup {
    /// The config.
    pub config: TileConfig,
    /// Where it came from.
    pub source: LookupSource,
    /// The cached median time, ms (at the record's own shape), if any.
    pub ms: Option<f64>,
    /// The call's bucket key.
    pub shape_key: String,
    /// The target whose code would run.
    pub target: String,
    /// Whether the launch first copies A and B (`[A, B]`) into aligned scratch
    /// (`CROSSGEMM_STAGE`): the config is then the one for those copies, as the launch
    /// looks it up after staging.
    pub staged: [bool; 2],
}

/// The config a launch would use without tuning. Under `CROSSGEMM_TUNE=off` the
/// planner's default; otherwise what a `cached` launch uses: the bucket's cached winner,
/// else the table's winner for this device, else the nearest bucket's in the cache, else
/// the table's nearest entry, else the planner's default. Tunes nothing.
pub fn lookup(spec: &'static KernelSpec, args: &[Arg<'_>], out: OutArg<'_>, opts: &TuneOptions) -> Result<Lookup> {
    let mut call = Call::new(spec, args, out)?;
    // A launch stages misaligned operands first and looks its config up for the copies,
    // which other configs may take (the decode family and TMA want 16-byte rows): the
    // same problem here, or this reports a config the launch does not run.
    let staged = crate::stage::which(&call);
    call.problem = if gemm_core::split3::splits(call.ir()) {
        // An `acc = tf32x3` launch looks its config up for its split copies (split3.rs).
        gemm_core::split3::split_problem(call.ir(), call.problem)
    } else {
        gemm_core::staging::staged(call.ir(), call.problem, staged)
    };
    let tk = call.target()?;
    let bucket = cache::problem_key(call.ir(), call.problem, opts.exact_shape);
    let mut l = Lookup {
        config: call.default_config(tk)?,
        source: LookupSource::Default,
        ms: None,
        shape_key: bucket.clone(),
        target: tk.target.to_string(),
        staged,
    };
    if TuneMode::from_env() == TuneMode::Off {
        return Ok(l);
    }
    if let Some(f) = found_winner(&call, tk, &bucket, opts).or_else(|| found_start(&call, tk, &bucket, opts)) {
        l.config = f.config;
        l.source = f.source;
        l.ms = f.ms;
    }
    Ok(l)
}
