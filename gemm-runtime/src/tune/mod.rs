//! The autotuner: on a cache miss, compile the target's planned configs that fit the
//! device (in parallel), check each against the host reference, time the survivors and
//! keep the fastest, on disk (see [`crate::cache`]) and in the process.
//!
//! `CROSSGEMM_TUNE` decides what a plain launch does: `full` (the default) tunes on a
//! miss, `cached` uses only the cache and otherwise the planner's first fitting config,
//! `off` always uses that config. [`tune`](crate::__private::tune) tunes on request
//! whatever the mode says, and reports what happened ([`TuneReport`]).
//!
//! **Nearest-record start.** When the cache has no winner for a shape's bucket but has
//! winners for other buckets of the same kernel on the same device (tuned here, or
//! imported from a tuning record, see [`crate::records`]), the winner of the nearest
//! bucket (smallest sum of |log M - log M'| over M, N, K) is the starting point:
//! `cached` launches use it instead of the planner's default, and a tuning run tries it
//! first (it is put first among the candidates). Winners of the same cache file come
//! first; then those of files for the same kernel, target and device name under
//! another driver or source (imported templates). A config that does not fit the device
//! is never used.

pub(crate) mod timer;

use crate::cache::{self, DiskCache, FailedConfig, FileKey, Winner};
use crate::device::{Device, DeviceKind, RawBuffer};
use crate::error::{GemmError, Result};
use crate::launch::{self, Arg, OutArg};
use crate::reference::{self, SampledRef};
use crate::spec::{KernelSpec, TargetKernel};
use gemm_core::target::DeviceType;
use gemm_core::{AccMode, DType, GemmIr, Layout, TileConfig};
use serde::{Deserialize, Serialize};
use std::any::Any;
use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What a plain launch does about tuning (`CROSSGEMM_TUNE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum TuneMode {
    /// Never tune and never read the cache: the planner's first config that fits.
    Off,
    /// Use a cached winner if there is one, else the planner's first fitting config.
    Cached,
    /// Use a cached winner, and tune (then cache) on a miss. The default.
    #[default]
    Full,
}

impl TuneMode {
    /// `CROSSGEMM_TUNE` = `off` | `cached` | `full` (unset: `full`; anything else is
    /// reported once on stderr and read as `full`).
    pub fn from_env() -> TuneMode {
        let v = std::env::var("CROSSGEMM_TUNE").unwrap_or_default();
        TuneMode::parse(&v).unwrap_or_else(|| {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                eprintln!("crossgemm: warning: CROSSGEMM_TUNE={v:?} is not off, cached or full; using full")
            });
            TuneMode::Full
        })
    }

    /// `off`, `cached` or `full` (case-insensitive; empty is `full`, `0` is `off`).
    pub fn parse(s: &str) -> Option<TuneMode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "full" | "1" => Some(TuneMode::Full),
            "off" | "0" => Some(TuneMode::Off),
            "cached" => Some(TuneMode::Cached),
            _ => None,
        }
    }
}

/// How a tuning run behaves. [`TuneOptions::from_env`] gives what launches use.
#[derive(Clone, Debug, Default)]
pub struct TuneOptions {
    /// Where winners and failures are stored; `None` keeps them in the process only.
    pub cache_dir: Option<PathBuf>,
    /// Key winners by the exact shape instead of its power-of-two bucket
    /// (`CROSSGEMM_TUNE_EXACT=1`).
    pub exact_shape: bool,
    /// Most candidates to try, best-ranked first (`CROSSGEMM_TUNE_MAX`); `None`: 48 on
    /// GPUs, 6 on CPU devices (whose compilers take about a second per config).
    pub max_candidates: Option<usize>,
    /// Retry configs the cache records as failed (`CROSSGEMM_ALWAYS_COMPILE=1`).
    pub always_compile: bool,
    /// Tune even when a winner is cached (the new winner replaces it).
    pub force: bool,
    /// Show progress on stderr when it is a terminal (never on a pipe).
    pub progress: bool,
    /// Called with the run's progress instead of the built-in stderr line (whatever
    /// `progress` says); a CLI draws its own bar with it.
    pub on_progress: Option<ProgressHook>,
    /// Fault injection for the crate's tests. Not a stable API.
    #[doc(hidden)]
    pub inject: Inject,
}

/// Faults the tests inject into a tuning run, by candidate index (position in
/// [`TuneReport::candidates`]). Not a stable API.
#[doc(hidden)]
#[derive(Clone, Debug, Default)]
pub struct Inject {
    /// These candidates' sources get an `#error`, so their compile fails.
    pub compile_error: Vec<usize>,
    /// These candidates' outputs are overwritten after they run, so verification fails.
    pub wrong_result: Vec<usize>,
    /// These candidates' measured times are multiplied by 1000, so they count as too slow.
    pub slow: Vec<usize>,
}

fn env_flag(name: &str) -> bool {
    matches!(
        std::env::var(name).as_deref().map(str::trim),
        Ok("1") | Ok("true") | Ok("yes")
    )
}

impl TuneOptions {
    /// From `CROSSGEMM_CACHE_DIR` (else the platform cache folder),
    /// `CROSSGEMM_TUNE_EXACT`, `CROSSGEMM_TUNE_MAX` and `CROSSGEMM_ALWAYS_COMPILE`;
    /// progress on.
    pub fn from_env() -> TuneOptions {
        TuneOptions {
            cache_dir: cache::cache_dir(),
            exact_shape: env_flag("CROSSGEMM_TUNE_EXACT"),
            max_candidates: std::env::var("CROSSGEMM_TUNE_MAX")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .filter(|&n: &usize| n > 0),
            always_compile: env_flag("CROSSGEMM_ALWAYS_COMPILE"),
            force: false,
            progress: true,
            on_progress: None,
            inject: Inject::default(),
        }
    }
}

/// A tuning run's progress, as [`TuneOptions::on_progress`] receives it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TuneProgress {
    /// What the run is doing.
    pub stage: TuneStage,
    /// Steps of this stage done so far.
    pub done: usize,
    /// Steps of this stage in all.
    pub total: usize,
    /// The best median time so far, ms (timing only).
    pub best_ms: Option<f64>,
}

/// The stages of a tuning run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TuneStage {
    /// Compiling candidates (in parallel).
    Compiling,
    /// Verifying and timing candidates, one at a time.
    Timing,
    /// Finished (successfully or not).
    Done,
}

/// A progress callback (see [`TuneOptions::on_progress`]).
#[derive(Clone)]
pub struct ProgressHook(pub Arc<dyn Fn(&TuneProgress) + Send + Sync>);

impl std::fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressHook(..)")
    }
}

/// Where a candidate failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailStage {
    /// The driver's compiler rejected it.
    Compile,
    /// It compiled but a launch (or reading its output back) failed.
    Launch,
    /// It ran but its output disagreed with the host reference.
    WrongResult,
    /// It ran, correctly, but its first timed run took more than `TOO_SLOW_FACTOR`
    /// times the best time so far. Kept in the report, not in the cache: at another
    /// shape the same config may be the fastest.
    TooSlow,
}

/// A candidate that cannot win, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// The config.
    pub config: TileConfig,
    /// Where it failed.
    pub stage: FailStage,
    /// The compiler log's first lines, the driver error, or the mismatching elements.
    pub reason: String,
    /// `true` when the failure was read from the cache and the config was not retried.
    pub from_cache: bool,
}

/// A candidate that passed verification, with its median time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// The config.
    pub config: TileConfig,
    /// Median device time of one launch, ms.
    pub ms: f64,
}

/// What [`tune`](crate::__private::tune) did.
#[derive(Clone, Debug)]
pub struct TuneReport {
    /// Kernel name.
    pub kernel: String,
    /// The target whose code ran.
    pub target: String,
    /// The device (`name (id, platform)`).
    pub device: String,
    /// (M, N, K) of the call.
    pub shape: (usize, usize, usize),
    /// The cache key of the shape (`pow2:MxNxK` or `exact:MxNxK`).
    pub shape_key: String,
    /// `true` when the winner came from the cache and nothing was tuned.
    pub cache_hit: bool,
    /// The candidates considered, best-ranked first (empty on a cache hit).
    pub candidates: Vec<TileConfig>,
    /// The bucket whose cached winner was tried first (nearest-record start), if any.
    pub seeded_from: Option<String>,
    /// Candidates that passed verification, in candidate order.
    pub timings: Vec<Timing>,
    /// Candidates that failed (or were skipped as known failures), in candidate order.
    pub failed: Vec<Failure>,
    /// The winner.
    pub best: TileConfig,
    /// The winner's median time, ms (the cached time on a hit).
    pub best_ms: f64,
    /// Wall time of the whole call, ms.
    pub tune_ms: f64,
    /// Kernels compiled by this call.
    pub compiled: usize,
    /// The cache file read and written, if any.
    pub cache_file: Option<PathBuf>,
}

/// Process-wide counters, for tests and diagnostics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TuneStats {
    /// Tuning runs (cache misses that tuned).
    pub tunes: u64,
    /// Winners read from the disk cache.
    pub disk_hits: u64,
    /// Candidate kernels compiled by the tuner.
    pub compiled: u64,
}

static TUNES: AtomicU64 = AtomicU64::new(0);
static DISK_HITS: AtomicU64 = AtomicU64::new(0);
static COMPILED: AtomicU64 = AtomicU64::new(0);

/// The counters so far in this process.
pub fn tune_stats() -> TuneStats {
    TuneStats {
        tunes: TUNES.load(Ordering::Relaxed),
        disk_hits: DISK_HITS.load(Ordering::Relaxed),
        compiled: COMPILED.load(Ordering::Relaxed),
    }
}

/// Where a launch's config came from, remembered per (kernel, device, shape key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// Tuned or read from the cache.
    Tuned,
    /// `cached` mode found nothing; `full` mode tunes over it.
    NoEntry,
    /// Tuning failed; not retried in this process.
    TuneFailed,
}

type MemoKey = (usize, u64, String);

/// A kernel as `Backend::compile` returns it.
type Compiled = Arc<dyn Any + Send + Sync>;

fn memo() -> &'static Mutex<HashMap<MemoKey, (TileConfig, Origin)>> {
    static MEMO: std::sync::OnceLock<Mutex<HashMap<MemoKey, (TileConfig, Origin)>>> = std::sync::OnceLock::new();
    MEMO.get_or_init(|| Mutex::new(HashMap::new()))
}

/// One tuning run at a time per process: concurrent runs would time each other.
static TUNING: Mutex<()> = Mutex::new(());

fn source_hash(spec: &KernelSpec, tk: &TargetKernel) -> String {
    let id = format!(
        "{:016x}\0{}\0{}\0{}\0{}",
        spec.ir_hash,
        tk.target,
        tk.source,
        env!("CARGO_PKG_VERSION"),
        timer::PROTOCOL
    );
    format!("{:016x}", gemm_core::ir::fnv1a(id.as_bytes()))
}

fn file_key(spec: &KernelSpec, tk: &TargetKernel, dev: &Device) -> FileKey {
    let i = dev.info();
    FileKey {
        kernel: spec.name.to_string(),
        target: tk.target.to_string(),
        device_name: i.name.clone(),
        device_id: i.id.clone(),
        driver: i.driver.clone(),
        source_hash: source_hash(spec, tk),
    }
}

/// The target's planned configs that fit the device's queried limits, best first,
/// at most `max`.
fn candidates(tk: &TargetKernel, dev: &Device, dtype: DType, max: Option<usize>) -> Vec<TileConfig> {
    let info = dev.info();
    let max = max.unwrap_or(if info.device_type == DeviceType::Cpu { 6 } else { 48 });
    let mut out: Vec<TileConfig> = Vec::new();
    for c in &tk.plan().configs {
        if launch::fits(c, info, dtype) && !out.contains(c) {
            out.push(*c);
        }
    }
    out.truncate(max);
    out
}

/// The config a launch without an explicit one uses. Called by `launch` on a device.
pub(crate) fn choose(
    spec: &'static KernelSpec,
    tk: &TargetKernel,
    args: &[Arg<'_>],
    out: &OutArg<'_>,
    mnk: (usize, usize, usize),
) -> Result<TileConfig> {
    let dev = &out.buf.device;
    let dtype = spec.ir().ab_dtype;
    let mode = TuneMode::from_env();
    if mode == TuneMode::Off {
        return launch::default_config(tk, dev.info(), dtype);
    }
    let (m, n, k) = mnk;
    let bucket = cache::shape_key(m, n, k, env_flag("CROSSGEMM_TUNE_EXACT"));
    let mkey: MemoKey = (spec as *const KernelSpec as usize, dev.serial(), bucket.clone());
    let remembered = |mode: TuneMode| {
        memo()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&mkey)
            .copied()
            .filter(|(_, o)| !(mode == TuneMode::Full && *o == Origin::NoEntry))
    };
    if let Some((c, _)) = remembered(mode) {
        return Ok(c);
    }
    let remember = |c: TileConfig, o: Origin| {
        memo()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(mkey.clone(), (c, o));
        c
    };
    let opts = TuneOptions::from_env();
    if mode == TuneMode::Cached {
        if let Some(w) = cached_winner(spec, tk, dev, &bucket, &opts) {
            return Ok(remember(w.config, Origin::Tuned));
        }
        if let Some(dir) = &opts.cache_dir {
            if let Some((_, w)) = nearest_winner(dir, &file_key(spec, tk, dev), &bucket, dev, dtype) {
                return Ok(remember(w.config, Origin::NoEntry));
            }
        }
        return Ok(remember(
            launch::default_config(tk, dev.info(), dtype)?,
            Origin::NoEntry,
        ));
    }
    let _guard = TUNING.lock().unwrap_or_else(|e| e.into_inner());
    // Another thread may have tuned this key while we waited.
    if let Some((c, _)) = remembered(mode) {
        return Ok(c);
    }
    match tune_locked(spec, tk, args, out, &opts) {
        Ok(r) => Ok(remember(r.best, Origin::Tuned)),
        Err(e) => {
            let fallback = launch::default_config(tk, dev.info(), dtype)?;
            eprintln!(
                "crossgemm: warning: tuning `{}` at {m}x{n}x{k} failed, using {fallback}: {}",
                spec.name,
                first_line(&e.to_string())
            );
            Ok(remember(fallback, Origin::TuneFailed))
        }
    }
}

fn cached_winner(
    spec: &KernelSpec,
    tk: &TargetKernel,
    dev: &Device,
    bucket: &str,
    opts: &TuneOptions,
) -> Option<Winner> {
    let dir = opts.cache_dir.as_ref()?;
    let w = DiskCache::new(dir, file_key(spec, tk, dev))
        .load()
        .winners
        .remove(bucket)?;
    // The key pins device and source, so this only guards a hand-edited file.
    if !launch::fits(&w.config, dev.info(), spec.ir().ab_dtype) {
        return None;
    }
    DISK_HITS.fetch_add(1, Ordering::Relaxed);
    Some(w)
}

/// The winner of the bucket nearest to `bucket` (see the module doc) among the cache
/// files of `key`'s kernel, target and device name in `dir`, with its bucket. Never
/// the winner of `bucket` in `key`'s own file.
pub(crate) fn nearest_winner(
    dir: &std::path::Path,
    key: &FileKey,
    bucket: &str,
    dev: &Device,
    dtype: DType,
) -> Option<(String, Winner)> {
    let want = cache::bucket_dims(bucket)?;
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
            let Some(d) = cache::bucket_dims(&b) else { continue };
            if !launch::fits(&w.config, dev.info(), dtype) {
                continue;
            }
            let dist = cache::log_distance(want, d);
            if best.as_ref().map_or(true, |(s, _, _)| (rank, dist) < *s) {
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
    /// The planner's first config that fits.
    Default,
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
}

/// The config a launch in `cached` mode would use: the bucket's cached winner, else the
/// nearest bucket's, else the planner's default. Tunes nothing.
pub fn lookup(spec: &'static KernelSpec, args: &[Arg<'_>], out: OutArg<'_>, opts: &TuneOptions) -> Result<Lookup> {
    launch::check_devices(spec, args, &out)?;
    let (m, n, k) = launch::dims(spec, args)?;
    launch::check_out(spec, &out, m, n)?;
    let dev = &out.buf.device;
    let tk = launch::target_for(spec, dev.info())?;
    let dtype = spec.ir().ab_dtype;
    let bucket = cache::shape_key(m, n, k, opts.exact_shape);
    let mut l = Lookup {
        config: launch::default_config(tk, dev.info(), dtype)?,
        source: LookupSource::Default,
        ms: None,
        shape_key: bucket.clone(),
        target: tk.target.to_string(),
    };
    if let Some(w) = cached_winner(spec, tk, dev, &bucket, opts) {
        l.config = w.config;
        l.source = LookupSource::Cache;
        l.ms = Some(w.ms);
    } else if let Some(dir) = &opts.cache_dir {
        if let Some((b, w)) = nearest_winner(dir, &file_key(spec, tk, dev), &bucket, dev, dtype) {
            l.config = w.config;
            l.source = LookupSource::Nearest(b);
            l.ms = Some(w.ms);
        }
    }
    Ok(l)
}

/// What identifies the compiler of a device's kernels: the NVRTC version for CUDA, the
/// OpenCL driver (which compiles) otherwise.
pub(crate) fn compiler_version(dev: &Device) -> String {
    let i = dev.info();
    match i.kind {
        #[cfg(feature = "cuda")]
        DeviceKind::Cuda => {
            let (mut major, mut minor) = (0, 0);
            // SAFETY: writes two ints; a CUDA device is only listed when NVRTC is loaded.
            let ok = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
            if ok == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
                format!("NVRTC {major}.{minor}")
            } else {
                "NVRTC (version unknown)".into()
            }
        }
        DeviceKind::Opencl => format!("OpenCL driver {} ({})", i.driver, i.platform),
        _ => format!("{} {}", i.platform, i.driver),
    }
}

/// Tunes the kernel for the call's device and shape bucket (unless the cache has a
/// winner and `opts.force` is off), stores the result, and reports. The winner is then
/// what launches of this bucket use in this process.
pub fn tune_with(
    spec: &'static KernelSpec,
    args: &[Arg<'_>],
    out: OutArg<'_>,
    opts: &TuneOptions,
) -> Result<TuneReport> {
    launch::check_devices(spec, args, &out)?;
    let (m, n, _k) = launch::dims(spec, args)?;
    launch::check_out(spec, &out, m, n)?;
    let dev = &out.buf.device;
    if dev.info().kind == DeviceKind::Host {
        return Err(GemmError::Unsupported(
            "the host device runs the reference; there is nothing to tune".into(),
        ));
    }
    if m == 0 || n == 0 {
        return Err(GemmError::Unsupported(format!(
            "`{}`: an empty {m}x{n} output has nothing to tune",
            spec.name
        )));
    }
    let tk = launch::target_for(spec, dev.info())?;
    let _guard = TUNING.lock().unwrap_or_else(|e| e.into_inner());
    let r = tune_locked(spec, tk, args, &out, opts)?;
    let mkey: MemoKey = (spec as *const KernelSpec as usize, dev.serial(), r.shape_key.clone());
    // Launches read the bucket of their own `CROSSGEMM_TUNE_EXACT` setting.
    if opts.exact_shape == env_flag("CROSSGEMM_TUNE_EXACT") {
        memo()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(mkey, (r.best, Origin::Tuned));
    }
    Ok(r)
}

/// [`tune_with`] with [`TuneOptions::from_env`].
pub fn tune(spec: &'static KernelSpec, args: &[Arg<'_>], out: OutArg<'_>) -> Result<TuneReport> {
    tune_with(spec, args, out, &TuneOptions::from_env())
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
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

struct Progress {
    on: bool,
    label: String,
    start: Instant,
    hook: Option<ProgressHook>,
}

impl Progress {
    fn new(opts: &TuneOptions, label: String) -> Progress {
        Progress {
            on: opts.on_progress.is_none() && opts.progress && std::io::stderr().is_terminal(),
            label,
            start: Instant::now(),
            hook: opts.on_progress.clone(),
        }
    }
    fn event(&self, p: TuneProgress) {
        if let Some(h) = &self.hook {
            (h.0)(&p);
            return;
        }
        match p.stage {
            TuneStage::Compiling => self.show(&format!("compiling {}/{}", p.done, p.total)),
            TuneStage::Timing => self.show(&format!(
                "timing {}/{} (best {})",
                p.done,
                p.total,
                match p.best_ms {
                    Some(ms) => format!("{ms:.4} ms"),
                    None => "-".into(),
                }
            )),
            TuneStage::Done => {}
        }
    }
    fn show(&self, what: &str) {
        if self.on {
            let mut e = std::io::stderr().lock();
            let _ = write!(
                e,
                "\r\x1b[2Kcrossgemm: tuning {} {what} ({:.1} s)",
                self.label,
                self.start.elapsed().as_secs_f64()
            );
            let _ = e.flush();
        }
    }
    fn done(&self) {
        if let Some(h) = &self.hook {
            (h.0)(&TuneProgress {
                stage: TuneStage::Done,
                done: 0,
                total: 0,
                best_ms: None,
            });
        }
        if self.on {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
        }
    }
}

fn tune_locked(
    spec: &'static KernelSpec,
    tk: &TargetKernel,
    args: &[Arg<'_>],
    out: &OutArg<'_>,
    opts: &TuneOptions,
) -> Result<TuneReport> {
    let start = Instant::now();
    // A (re)tune may change the winner of shapes whose warm launches were resolved.
    launch::forget_plans();
    let dev = &out.buf.device;
    let ir = spec.ir();
    let (m, n, k) = launch::dims(spec, args)?;
    let bucket = cache::shape_key(m, n, k, opts.exact_shape);
    let disk = opts
        .cache_dir
        .as_ref()
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
        best: launch::default_config(tk, dev.info(), ir.ab_dtype)?,
        best_ms: f64::NAN,
        tune_ms: 0.0,
        compiled: 0,
        cache_file: disk.as_ref().map(|d| d.path().to_path_buf()),
    };
    let hit = |loaded: &Option<cache::CacheFile>| {
        loaded
            .as_ref()
            .and_then(|f| f.winners.get(&bucket))
            .filter(|w| launch::fits(&w.config, dev.info(), ir.ab_dtype))
            .cloned()
    };
    let cached = |report: &mut TuneReport, w: cache::Winner| {
        DISK_HITS.fetch_add(1, Ordering::Relaxed);
        report.cache_hit = true;
        report.best = w.config;
        report.best_ms = w.ms;
        report.tune_ms = start.elapsed().as_secs_f64() * 1e3;
    };
    if !opts.force {
        if let Some(w) = hit(&loaded) {
            cached(&mut report, w);
            return Ok(report);
        }
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
            cached(&mut report, w);
            return Ok(report);
        }
    }
    TUNES.fetch_add(1, Ordering::Relaxed);
    let mut cands = candidates(tk, dev, ir.ab_dtype, opts.max_candidates);
    // Nearest-record start: the winner of the nearest other bucket is tried first.
    let has_winner = loaded.as_ref().is_some_and(|f| f.winners.contains_key(&bucket));
    if let (Some(dir), false) = (opts.cache_dir.as_ref(), has_winner) {
        if let Some((b, w)) = nearest_winner(dir, &file_key(spec, tk, dev), &bucket, dev, ir.ab_dtype) {
            cands.retain(|c| *c != w.config);
            cands.insert(0, w.config);
            cands.truncate(opts.max_candidates.unwrap_or(usize::MAX).max(1));
            report.seeded_from = Some(b);
        }
    }
    report.candidates = cands.clone();
    let known: Vec<FailedConfig> = if opts.always_compile {
        Vec::new()
    } else {
        loaded.map(|f| f.failed).unwrap_or_default()
    };
    let progress = Progress::new(opts, format!("`{}` {m}x{n}x{k} on {}", spec.name, dev.info().id));

    // 1. Compile everything not known to fail, on a bounded pool.
    let symbol = ir.symbol();
    let todo: Vec<usize> = (0..cands.len())
        .filter(|&i| !known.iter().any(|f| f.config == cands[i]))
        .collect();
    let defines: Vec<Vec<(String, u32)>> = cands
        .iter()
        .map(|c| launch::all_defines(ir, tk, c, (m, n, k)))
        .collect();
    let broken_source = format!("{}\n#error crossgemm test: injected compile failure\n", tk.source);
    let compiled: Vec<Mutex<Option<Result<Compiled>>>> = cands.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 8)
        .min(todo.len().max(1));
    progress.event(TuneProgress {
        stage: TuneStage::Compiling,
        done: 0,
        total: todo.len(),
        best_ms: None,
    });
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let t = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = todo.get(t) else { break };
                let src = if opts.inject.compile_error.contains(&i) {
                    broken_source.as_str()
                } else {
                    tk.source
                };
                let r = dev.backend().compile(src, &symbol, &defines[i]);
                *compiled[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                progress.event(TuneProgress {
                    stage: TuneStage::Compiling,
                    done: d,
                    total: todo.len(),
                    best_ms: None,
                });
            });
        }
    });
    report.compiled = todo.len();
    COMPILED.fetch_add(todo.len() as u64, Ordering::Relaxed);

    // 2. Verify, then time, one candidate at a time.
    let data = launch::download_operands(ir, args)?;
    let ops = launch::host_operands(ir, args, &data);
    let points = sample_points(m, n, spec.ir_hash);
    let refs = reference::gemm_sampled(ir, &ops, k, &points);
    let flush = RawBuffer::new(
        dev,
        timer::flush_bytes(tk.spec().l2_bytes, dev.info().device_type, dev.info().global_mem_bytes),
    )
    .ok();
    let mut new_failures: Vec<FailedConfig> = Vec::new();
    let mut winner: Option<(usize, Compiled)> = None;
    let mut best_ms = f64::INFINITY;
    let mut aborted: Option<GemmError> = None;
    for (i, cfg) in cands.iter().enumerate() {
        if let Some(f) = known.iter().find(|f| f.config == *cfg) {
            report.failed.push(Failure {
                config: *cfg,
                stage: f.stage,
                reason: f.reason.clone(),
                from_cache: true,
            });
            continue;
        }
        progress.event(TuneProgress {
            stage: TuneStage::Timing,
            done: i,
            total: cands.len(),
            best_ms: best_ms.is_finite().then_some(best_ms),
        });
        let kernel = match compiled[i]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .expect("every candidate to do was compiled")
        {
            Ok(kern) => kern,
            // Module loading (CUDA) is part of `compile`; its errors are the config's too.
            Err(e @ GemmError::Compile { .. }) | Err(e @ GemmError::Driver { .. }) if is_build_error(&e) => {
                record(
                    &mut report,
                    &mut new_failures,
                    FailedConfig {
                        config: *cfg,
                        stage: FailStage::Compile,
                        reason: short_reason(&e),
                    },
                );
                continue;
            }
            Err(e) => {
                aborted = Some(e);
                break;
            }
        };
        match run_candidate(
            dev,
            ir,
            &*kernel,
            cfg,
            args,
            out,
            (m, n, k),
            &ops,
            &points,
            &refs,
            flush.as_ref(),
            opts.inject.wrong_result.contains(&i),
            timer::TOO_SLOW_FACTOR * best_ms,
            if opts.inject.slow.contains(&i) { 1000.0 } else { 1.0 },
        ) {
            Ok(Outcome::Timed(ms)) => {
                report.timings.push(Timing { config: *cfg, ms });
                if ms < best_ms {
                    best_ms = ms;
                    winner = Some((i, kernel));
                }
            }
            Ok(Outcome::Wrong(why)) => record(
                &mut report,
                &mut new_failures,
                FailedConfig {
                    config: *cfg,
                    stage: FailStage::WrongResult,
                    reason: why,
                },
            ),
            // Reported, not stored: `record` would persist it for every shape.
            Ok(Outcome::TooSlow(ms)) => report.failed.push(Failure {
                config: *cfg,
                stage: FailStage::TooSlow,
                reason: format!(
                    "first timed run {ms:.3} ms > {}x the best so far ({best_ms:.3} ms)",
                    timer::TOO_SLOW_FACTOR
                ),
                from_cache: false,
            }),
            Ok(Outcome::LaunchFailed(e)) => record(
                &mut report,
                &mut new_failures,
                FailedConfig {
                    config: *cfg,
                    stage: FailStage::Launch,
                    reason: short_reason(&e),
                },
            ),
            // Not the config's fault (no memory for its output, a dead context after an
            // earlier fault): stop, keep what was learnt, and do not blame this config.
            Err(e) => {
                aborted = Some(e);
                break;
            }
        }
    }
    progress.done();

    // 3. Store and report. After an abort the winner is of a partial run: not stored,
    // so that the next process tunes again (skipping the failures recorded now).
    let winner = if aborted.is_some() { None } else { winner };
    let found = winner.map(|(i, kern)| {
        dev.cache_kernel(tk.source, &symbol, &defines[i], kern);
        Winner {
            config: cands[i],
            ms: best_ms,
            shape: [m, n, k],
            candidates: report.timings.len(),
        }
    });
    if let Some(d) = &disk {
        if found.is_some() || !new_failures.is_empty() {
            let stored = d.update(|f| {
                f.target_spec = serde_json::from_str(tk.spec_json).ok();
                f.compiler = Some(compiler_version(dev));
                if let Some(w) = &found {
                    f.winners.insert(bucket.clone(), w.clone());
                }
                for nf in &new_failures {
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
    }
    report.tune_ms = start.elapsed().as_secs_f64() * 1e3;
    if let Some(e) = aborted {
        return Err(e);
    }
    let Some(w) = found else {
        let why: Vec<String> = report
            .failed
            .iter()
            .take(3)
            .map(|f| format!("{} ({:?}): {}", f.config, f.stage, first_line(&f.reason)))
            .collect();
        return Err(GemmError::Unsupported(format!(
            "no candidate of `{}` for {} passed ({} candidates; first failures: {})",
            spec.name,
            dev.info(),
            cands.len(),
            if why.is_empty() {
                "none tried".into()
            } else {
                why.join("; ")
            }
        )));
    };
    report.best = w.config;
    report.best_ms = w.ms;
    if std::env::var_os("CROSSGEMM_LOG").is_some() {
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

/// Whether a `compile` error is the config's (a rejected source, a module the driver
/// will not load) rather than the device's (no context).
fn is_build_error(e: &GemmError) -> bool {
    match e {
        GemmError::Compile { .. } => true,
        GemmError::Driver { op, .. } => op.contains("module"),
        _ => false,
    }
}

/// What running one candidate showed.
enum Outcome {
    /// Verified; median time, ms.
    Timed(f64),
    /// Its output disagreed with the reference.
    Wrong(String),
    /// Its launch (or timing) failed.
    LaunchFailed(GemmError),
    /// Correct but its first timed run (ms) passed the limit.
    TooSlow(f64),
}

fn record(report: &mut TuneReport, new: &mut Vec<FailedConfig>, f: FailedConfig) {
    report.failed.push(Failure {
        config: f.config,
        stage: f.stage,
        reason: f.reason.clone(),
        from_cache: false,
    });
    new.push(f);
}

/// Runs one compiled candidate into its own poisoned output, checks it, and times it.
/// `Err` is for failures that are not the candidate's (its output cannot be allocated).
#[allow(clippy::too_many_arguments)]
fn run_candidate(
    dev: &Device,
    ir: &GemmIr,
    kern: &(dyn Any + Send + Sync),
    cfg: &TileConfig,
    args: &[Arg<'_>],
    out: &OutArg<'_>,
    mnk: (usize, usize, usize),
    ops: &[reference::HostOperand<'_>],
    points: &[(usize, usize)],
    refs: &[SampledRef],
    flush: Option<&RawBuffer>,
    corrupt: bool,
    limit_ms: f64,
    time_scale: f64,
) -> Result<Outcome> {
    let (m, n, k) = mnk;
    // Its own buffer, NaN-filled: nothing left by another candidate can pass for its
    // result, and an element it never writes fails (Triton #9230).
    let own = RawBuffer::new(dev, out.buf.bytes)?;
    own.fill(0xFF)?;
    let kargs = launch::kernel_args(args, &own, mnk);
    let dims = cfg.launch(m, n, ir.ab_dtype);
    let mut bytes = vec![0u8; own.bytes];
    // Errors surface at the launch or at the first wait after it (asynchronous APIs).
    let ran = dev
        .backend()
        .launch(kern, dims, &kargs)
        .and_then(|_| dev.synchronize())
        .and_then(|_| {
            if corrupt {
                own.fill(0x3C)?;
            }
            own.download(&mut bytes)
        });
    if let Err(e) = ran {
        return Ok(Outcome::LaunchFailed(e));
    }
    if let Err(why) = verify(ir, ops, &bytes, m, n, k, points, refs) {
        return Ok(Outcome::Wrong(why));
    }
    // The verification run was the first warm-up.
    Ok(
        match timer::measure(dev, kern, dims, &kargs, flush, 1, limit_ms, time_scale) {
            Ok(timer::Measured::Median(ms)) => Outcome::Timed(ms),
            Ok(timer::Measured::TooSlow(ms)) => Outcome::TooSlow(ms),
            Err(e) => Outcome::LaunchFailed(e),
        },
    )
}

/// Up to 512 pseudo-random elements, the four corners and (evenly spaced) the last
/// row and column, where ragged-tile bugs show; every element of a small output.
fn sample_points(m: usize, n: usize, seed: u64) -> Vec<(usize, usize)> {
    if m * n <= 4096 {
        return (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).collect();
    }
    let mut p = vec![(0, 0), (0, n - 1), (m - 1, 0), (m - 1, n - 1)];
    let edge = 32;
    p.extend((0..edge).map(|t| (m - 1, t * (n - 1) / (edge - 1))));
    p.extend((0..edge).map(|t| (t * (m - 1) / (edge - 1), n - 1)));
    let mut s = seed | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    p.extend((0..512).map(|_| ((next() % m as u64) as usize, (next() % n as u64) as usize)));
    p
}

fn eps(d: DType) -> f32 {
    match d {
        DType::F32 => f32::EPSILON,
        DType::F16 => 2f32.powi(-10),
        DType::Bf16 => 2f32.powi(-7),
    }
}

fn value_at(dtype: DType, bytes: &[u8], idx: usize) -> f32 {
    let s = dtype.size() as usize;
    launch::decode(dtype, &bytes[idx * s..(idx + 1) * s])[0]
}

/// Compares the sampled elements with the reference, with the tolerance of the test
/// suite's `assert_close` made scale-aware: two output ulps of the reference, plus the
/// accumulator's summation-order error (calibrated there for terms of magnitude ~1/4)
/// scaled by the actual mean |term| and carried through the kernel's own epilogue (so a
/// `* alpha` or a saturating activation widens or narrows it as it should).
#[allow(clippy::too_many_arguments)]
fn verify(
    ir: &GemmIr,
    ops: &[reference::HostOperand<'_>],
    bytes: &[u8],
    m: usize,
    n: usize,
    k: usize,
    points: &[(usize, usize)],
    refs: &[SampledRef],
) -> std::result::Result<(), String> {
    let e = eps(ir.out_dtype);
    let acc_eps = if ir.acc == AccMode::Tf32 { 2e-3 } else { 1e-5 };
    let mut bad = Vec::new();
    let mut stack = Vec::new();
    for (&(i, j), r) in points.iter().zip(refs) {
        let idx = match ir.out_layout {
            Layout::RowMajor => i * n + j,
            Layout::ColMajor => j * m + i,
        };
        let got = value_at(ir.out_dtype, bytes, idx);
        // The reference rounded to the output type, as the kernel stores it.
        let want = launch::decode(ir.out_dtype, &launch::encode(ir.out_dtype, &[r.value]))[0];
        if got == want || want.is_nan() {
            continue;
        }
        let delta = acc_eps * ((k as f64).sqrt() + 1.0) * 4.0 * (r.abs_sum / k.max(1) as f64);
        let mut through = |d: f64| {
            let v = reference::epilogue(ir, ops, (r.acc + d) as f32, i, j, &mut stack);
            (v - r.value).abs()
        };
        let spread = through(delta).max(through(-delta));
        // The epilogue's own f32 evaluation (tanh, exp, erf on the device) errs by a few
        // ulps of its intermediates, which scale with |acc|: gelu(-15) is -1.7e-7 on a
        // device and -0 on the host, both right.
        let own = 4.0 * f32::EPSILON * (r.acc.abs() as f32 + 1.0);
        let tol = 2.0 * e * want.abs() + 4.0 * f32::EPSILON * want.abs() + spread + own + e * 1e-3;
        if !(got - want).abs().le(&tol) {
            bad.push(format!("({i},{j}): got {got}, reference {want}, tolerance {tol:.3e}"));
        }
    }
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "wrong result at {} of {} sampled elements; first: {}",
            bad.len(),
            points.len(),
            bad[..bad.len().min(3)].join("; ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::{EpOp, Func, Param};
    use reference::HostOperand;

    #[test]
    fn modes_parse() {
        assert_eq!(TuneMode::parse(""), Some(TuneMode::Full));
        assert_eq!(TuneMode::parse(" Full "), Some(TuneMode::Full));
        assert_eq!(TuneMode::parse("off"), Some(TuneMode::Off));
        assert_eq!(TuneMode::parse("cached"), Some(TuneMode::Cached));
        assert_eq!(TuneMode::parse("sometimes"), None);
    }

    #[test]
    fn samples_cover_edges_and_stay_in_range() {
        let all = sample_points(3, 5, 1);
        assert_eq!(all.len(), 15);
        let (m, n) = (5000, 3);
        let p = sample_points(m, n, 42);
        assert!(p.len() >= 512 + 4);
        assert!(p.iter().all(|&(i, j)| i < m && j < n));
        for corner in [(0, 0), (0, n - 1), (m - 1, 0), (m - 1, n - 1)] {
            assert!(p.contains(&corner));
        }
        assert!(p.iter().filter(|&&(i, _)| i == m - 1).count() >= 32);
        assert_eq!(sample_points(m, n, 42), p, "deterministic");
    }

    fn ir(out: DType, epilogue: Vec<EpOp>) -> GemmIr {
        GemmIr {
            name: "t".into(),
            params: vec![
                Param::matrix("a", DType::F32, Layout::RowMajor),
                Param::matrix("b", DType::F32, Layout::RowMajor),
                Param::scalar("alpha"),
            ],
            a: 0,
            a_t: false,
            b: 1,
            b_t: false,
            ab_dtype: DType::F32,
            acc: AccMode::F32,
            out_dtype: out,
            out_layout: Layout::ColMajor,
            epilogue,
        }
    }

    /// The check passes what a kernel with another summation order produces, and fails
    /// unwritten (NaN), stale (zero) and slightly-off-by-a-term outputs.
    #[test]
    fn verification_tolerance() {
        let (m, n, k) = (4, 3, 200);
        let a: Vec<f32> = (0..m * k)
            .map(|x| ((x * 7919 % 1000) as f32 / 500.0 - 1.0) * 100.0)
            .collect();
        let b: Vec<f32> = (0..k * n).map(|x| (x * 104729 % 1000) as f32 / 500.0 - 1.0).collect();
        let scaled = ir(
            DType::F32,
            vec![EpOp::Param(2), EpOp::Acc, EpOp::Mul, EpOp::Call(Func::Gelu)],
        );
        for (g, alpha) in [
            (ir(DType::F32, vec![EpOp::Acc]), 1.0),
            (ir(DType::F16, vec![EpOp::Acc]), 1.0),
            (scaled, 0.01),
        ] {
            let ops = [
                HostOperand::Matrix {
                    data: &a,
                    rows: m,
                    cols: k,
                    layout: Layout::RowMajor,
                },
                HostOperand::Matrix {
                    data: &b,
                    rows: k,
                    cols: n,
                    layout: Layout::RowMajor,
                },
                HostOperand::Scalar(alpha),
            ];
            let points = sample_points(m, n, 0);
            let refs = reference::gemm_sampled(&g, &ops, k, &points);
            // A kernel's f32 sum in reverse order, stored in the output type.
            let mut vals = vec![0f32; m * n];
            for &(i, j) in &points {
                let acc: f32 = (0..k).rev().map(|kk| a[i * k + kk] * b[kk * n + j]).sum();
                vals[j * m + i] = reference::epilogue(&g, &ops, acc, i, j, &mut Vec::new());
            }
            let enc = |v: &[f32]| launch::encode(g.out_dtype, v);
            assert_eq!(verify(&g, &ops, &enc(&vals), m, n, k, &points, &refs), Ok(()));
            let mut nan = vals.clone();
            nan[5] = f32::NAN;
            assert!(verify(&g, &ops, &enc(&nan), m, n, k, &points, &refs)
                .unwrap_err()
                .contains("1 of 12"));
            assert!(verify(&g, &ops, &enc(&vec![0.0; m * n]), m, n, k, &points, &refs).is_err());
            // The largest product term missing from one element.
            let mut off = vals.clone();
            let (i, j) = (2, 1);
            let term = |kk: usize| a[i * k + kk] * b[kk * n + j];
            let big = (0..k).max_by(|&x, &y| term(x).abs().total_cmp(&term(y).abs())).unwrap();
            let acc: f32 = (0..k).filter(|&kk| kk != big).map(term).sum();
            off[j * m + i] = reference::epilogue(&g, &ops, acc, i, j, &mut Vec::new());
            assert!(
                verify(&g, &ops, &enc(&off), m, n, k, &points, &refs).is_err(),
                "{:?}",
                g.epilogue
            );
        }
    }

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
