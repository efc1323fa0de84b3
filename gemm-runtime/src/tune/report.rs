//! What a tuning run reports, and the process-wide counters.

use crate::cache::FailStage;
use gemm_core::TileConfig;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

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

/// What [`tune`](crate::tune::tune) did.
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
    /// What was tried first: the bucket whose cached winner it is (nearest-record start),
    /// or the kernel's table entry (`table <bucket> (<file>: <kernel>)`), if any.
    pub seeded_from: Option<String>,
    /// Candidates that passed verification, in candidate order.
    pub timings: Vec<Timing>,
    /// Candidates that failed (or were skipped as known failures), in candidate order.
    pub failed: Vec<Failure>,
    /// How many candidates the tune set out to time, and why (empty on a cache hit):
    /// small problems time fewer (see [`TuneOptions::max_candidates`](crate::TuneOptions)).
    pub scope: String,
    /// Candidates listed but neither timed nor failed: beyond the scope, or left when the
    /// time budget ran out.
    pub skipped: Vec<TileConfig>,
    /// `true` when [`TuneOptions::budget_ms`](crate::TuneOptions::budget_ms) stopped the
    /// search.
    pub budget_spent: bool,
    /// The candidates whose times tied with the fastest's (within the measured noise of
    /// the comparison, 1% to 5%), the winner first: a tie goes to the planner's first, so that repeated
    /// tunes agree. Just the winner when nothing tied; empty on a cache hit.
    pub tied: Vec<TileConfig>,
    /// The final round: the fastest few candidates of the first pass (up to 6, within
    /// 10% of the fastest) timed again together, one run of each in turn, so that a
    /// clock drifting during the tune slows them alike, and compared round by round: each
    /// time here is the fastest median's times the finalist's median ratio to it in the
    /// same rounds (`measure::paired`), the times the winner was picked by (`timings`
    /// keeps the first pass; the tuning cache stores these for the finalists). Empty when
    /// fewer than two qualified, and on a cache hit.
    pub final_round: Vec<Timing>,
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
    /// How the candidates were checked (empty on a cache hit).
    pub check: String,
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
    /// Checks of a chosen config at a build variant it had not been verified at (see
    /// [`crate::tune`]: first launches of a cached, nearest or tuned winner at a new
    /// shape's `-D` flags or edge class).
    pub variant_checks: u64,
    /// Those of them that failed (the launch fell back to another config).
    pub variant_failures: u64,
}

pub(super) static TUNES: AtomicU64 = AtomicU64::new(0);
pub(super) static DISK_HITS: AtomicU64 = AtomicU64::new(0);
pub(super) static COMPILED: AtomicU64 = AtomicU64::new(0);
pub(super) static VARIANT_CHECKS: AtomicU64 = AtomicU64::new(0);
pub(super) static VARIANT_FAILURES: AtomicU64 = AtomicU64::new(0);

/// The counters so far in this process.
pub fn tune_stats() -> TuneStats {
    TuneStats {
        tunes: TUNES.load(Ordering::Relaxed),
        disk_hits: DISK_HITS.load(Ordering::Relaxed),
        compiled: COMPILED.load(Ordering::Relaxed),
        variant_checks: VARIANT_CHECKS.load(Ordering::Relaxed),
        variant_failures: VARIANT_FAILURES.load(Ordering::Relaxed),
    }
}
