//! The autotuner: on a cache miss, compile the target's planned configs that fit the
//! device (in parallel), check each, time the survivors and keep the fastest (a tie within
//! noise going to the planner's first), on disk (see `crate::cache`) and in the process.
//!
//! `CROSSGEMM_TUNE` decides what a plain launch does: `full` (the default) tunes on a
//! miss, `cached` uses only the cache and otherwise the default config (the planner's
//! first that fits, unless it leaves most of the device idle and the estimate puts it far
//! behind: `gemm_core::estimate::default_pick`), `off` always uses that config. [`tune`] tunes on request
//! whatever the mode says, and reports what happened ([`TuneReport`]).
//!
//! **What a candidate is checked on.** Not the caller's data (zeros or padding there
//! would make any check vacuous, and zeros run faster on tensor cores): the tuner's own
//! operands, of the call's shapes, dtypes and layouts, random with a fixed seed and never
//! zero (`operands.rs`). Each candidate runs into a NaN-filled output. Up to M·N·K = 2^27
//! every element is checked against the host reference; above, sampled elements are,
//! and the whole output is compared on the device with the first verified candidate's,
//! disputes being settled by the host reference (`candidate.rs`, `verify.rs`,
//! `compare.rs`). The same operands time the candidates.
//!
//! **Build variants.** A winner is keyed by a shape bucket but runs as one compile per
//! exact shape (its `-D` shape flags) and edge class; its first launch at a variant not
//! verified in this process checks it there, and a failure falls back to the planner's
//! default (`variant.rs`). Tuned, cached, nearest-bucket and imported winners alike.
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

//! **Config tables.** The macro embeds, per target, the winners of tuning records (the
//! shipped `records/`, `records = ".."` files, `CROSSGEMM_RECORDS`) that apply to the
//! kernel ([`gemm_core::table`]). A launch whose bucket has no winner in the cache uses
//! the table's winner for its device name and bucket as if it were cached (in `full` and
//! `cached` mode alike, checked at its build variant); `cached` launches without one use
//! the table's nearest entry after the cache's nearest winner, and a tune without a
//! cached start times the table's entry first.
//!
//! **Preparing.** [`prepare`] (the generated `k::prepare(&device)`) compiles the table's
//! configs for a device ahead of the first calls, in parallel, so that those calls skip the
//! JIT; the compiled-kernel cache keeps them for later processes.
//!
//! **How many are timed.** Small problems time fewer candidates than large ones
//! (`scope.rs`: the first that passes below 8.4 MFLOP, 16 below 1.07 GFLOP, else all),
//! unless a count is given or the tune is thorough; `CROSSGEMM_TUNE_BUDGET_MS` stops a
//! tune with the best so far.
//!
//! **Ties.** Candidates whose medians lie within the fastest's measured noise tie, and a
//! tie goes to the planner's first (`pick.rs`), so that repeated tunes agree.
//!
//! The run itself (`search.rs`) compiles the candidates in waves on a bounded pool, then
//! verifies and times (with `crate::measure`) one at a time.

mod candidate;
mod choose;
mod compare;
mod operands;
mod options;
mod pick;
mod pool;
mod prepare;
mod progress;
mod report;
mod scope;
mod search;
mod table;
mod variant;
mod verify;

pub(crate) use choose::{choose, launch_failed};
pub use choose::{lookup, Lookup, LookupSource};
pub(crate) use options::take_launch_failure;
pub use options::{set_launch_inject, Inject, ProgressHook, TuneMode, TuneOptions, TuneProgress, TuneStage};
pub use prepare::{prepare, PrepareReport};
pub use report::{tune_stats, Failure, Timing, TuneReport, TuneStats};

use crate::cache::FileKey;
use crate::call::{Arg, Call, OutArg};
use crate::device::Device;
use crate::error::{GemmError, Result};
use crate::spec::{KernelSpec, TargetKernel};
use choose::{memo, MemoKey, Origin};
use gemm_core::Backend;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// One tuning run at a time per process: concurrent runs would time each other.
static TUNING: Mutex<()> = Mutex::new(());

/// Counts tuning runs; launch plans made under an older count are resolved again, since
/// a run may have changed a winner.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// The current tuning generation (see [`GENERATION`]).
pub(crate) fn generation() -> u64 {
    GENERATION.load(Ordering::Acquire)
}

/// What identifies a kernel's generated code in the tuning cache: IR, target, every
/// family's source, the runtime's version and the timing protocol.
fn source_hash(spec: &KernelSpec, tk: &TargetKernel) -> String {
    let sources: Vec<&str> = tk.sources().iter().map(|(_, s)| *s).collect();
    let id = format!(
        "{:016x}\0{}\0{}\0{}\0{}",
        spec.ir_hash,
        tk.target,
        sources.join("\0"),
        env!("CARGO_PKG_VERSION"),
        crate::measure::PROTOCOL
    );
    format!("{:016x}", gemm_core::ir::fnv1a(id.as_bytes()))
}

fn file_key(spec: &KernelSpec, tk: &TargetKernel, dev: &Device) -> FileKey {
    let i = dev.info();
    FileKey {
        kernel: spec.name.to_string(),
        target: tk.target.to_string(),
        device_name: i.name.clone(),
        driver: i.driver.clone(),
        source_hash: source_hash(spec, tk),
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
    let call = Call::new(spec, args, out)?;
    let (m, n, _k) = call.mnk();
    let dev = call.device();
    if dev.info().kind == Backend::Host {
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
    // The problem launches run (stage.rs): misaligned operands as their aligned copies.
    crate::stage::with_staged(call, |call| tune_call(call, opts))
}

/// [`tune_with`] past the checks and staging.
fn tune_call(call: &Call<'_, '_>, opts: &TuneOptions) -> Result<TuneReport> {
    let (spec, dev) = (call.spec, call.device());
    let tk = call.target()?;
    let _guard = TUNING.lock().unwrap_or_else(|e| e.into_inner());
    let r = search::tune_locked(call, tk, opts)?;
    let mkey: MemoKey = (spec as *const KernelSpec as usize, dev.serial(), r.shape_key.clone());
    // Launches read the bucket of their own `CROSSGEMM_TUNE_EXACT` setting; the winner of
    // the caller's own configs is not the bucket's.
    if opts.configs.is_empty() && opts.exact_shape == crate::env::flag("CROSSGEMM_TUNE_EXACT") {
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
