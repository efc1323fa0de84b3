//! How a tuning run behaves: the mode of plain launches, the options of a run, progress
//! reporting and the tests' fault injection.

use gemm_core::TileConfig;
use std::path::PathBuf;
use std::sync::Arc;

/// What a plain launch does about tuning (`CROSSGEMM_TUNE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum TuneMode {
    /// Never tune and never read the cache: the default config (the planner's first that
    /// fits, unless it leaves most of the device idle and is estimated far behind:
    /// [`gemm_core::estimate::default_pick`]).
    Off,
    /// Use a cached winner if there is one, else the nearest one, else the default config
    /// (as under `Off`).
    Cached,
    /// Use a cached winner, and tune (then cache) on a miss. The default.
    #[default]
    Full,
}

impl TuneMode {
    /// `CROSSGEMM_TUNE` = `off` | `cached` | `full` (unset: `full`; anything else is
    /// reported once on stderr, by the environment's one reader, and read as `full`).
    pub fn from_env() -> TuneMode {
        // `tune_mode` gives the canonical name: no second parse (every launch reads it).
        TuneMode::of_name(crate::env::tune_mode())
    }

    /// `off`, `cached` or `full` (case-insensitive; empty is `full`, `0` is `off`):
    /// the spellings `CROSSGEMM_TUNE` accepts (one table, in the environment reader).
    pub fn parse(s: &str) -> Option<TuneMode> {
        crate::env::tune_mode_name(s).map(TuneMode::of_name)
    }

    /// The mode of a canonical name (`full`, `cached`, `off`).
    fn of_name(name: &str) -> TuneMode {
        match name {
            "off" => TuneMode::Off,
            "cached" => TuneMode::Cached,
            _ => TuneMode::Full,
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
    /// GPUs, 6 on CPU devices (whose compilers take about a second per config). A count
    /// given here is timed whatever the problem's size; without one, small problems time
    /// fewer (the first that passes below 8.4 MFLOP, 16 below 1.07 GFLOP: see
    /// [`TuneReport::scope`](crate::TuneReport::scope)).
    pub max_candidates: Option<usize>,
    /// Time every listed candidate whatever the problem's size (`crossgemm bench` and
    /// `crossgemm tune --thorough` do).
    pub thorough: bool,
    /// Time exactly these configs, in this order, instead of the plan's candidates
    /// (`crossgemm tune|bench|diagnose --config`): an experiment's way to measure a config
    /// the build-time plan left out. Each must be valid for the target (its family's rules,
    /// as the planner checks them) and able to run the call, else the tune fails naming
    /// why. Such a run is every listed config's, so it neither reads nor writes the cache's
    /// winners and failures, and its winner does not become what this process's launches
    /// use. Empty (the default): the plan's candidates.
    pub configs: Vec<TileConfig>,
    /// Wall-clock budget of one tune, compiles included, ms (`CROSSGEMM_TUNE_BUDGET_MS`):
    /// once spent, the search stops with the best so far (after the first candidate
    /// that passes, if none has yet). `None`: no limit.
    pub budget_ms: Option<f64>,
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
/// [`TuneReport::candidates`](crate::TuneReport::candidates)). Not a stable API.
#[doc(hidden)]
#[derive(Clone, Debug, Default)]
pub struct Inject {
    /// These candidates' sources get an `#error`, so their compile fails.
    pub compile_error: Vec<usize>,
    /// These candidates' outputs are overwritten after they run, so verification fails.
    pub wrong_result: Vec<usize>,
    /// These candidates' outputs are set to zeros after they run.
    pub zero_output: Vec<usize>,
    /// In these candidates' outputs one block tile of the config in the middle is off by
    /// one after they run (and again after they are timed: a deterministic bug).
    pub wrong_tile: Vec<usize>,
    /// In these candidates' outputs the middle element is off by one.
    pub wrong_element: Vec<usize>,
    /// `(candidate, product)`: in that candidate's output one block tile in the middle of
    /// that product of the batch is off by one after it runs.
    pub wrong_product: Vec<(usize, usize)>,
    /// These candidates' launches run out of device memory (as a split-K workspace the
    /// device cannot grow would): reported, not cached.
    pub out_of_memory: Vec<usize>,
    /// These candidates' measured times are multiplied by 1000, so they count as too slow.
    pub slow: Vec<usize>,
    /// The largest M·N·K verified against the full host reference, instead of
    /// `FULL_MACS` (2^27): a test's way to the sampled mode at a small shape.
    pub full_check_max: Option<u64>,
    /// Random sampled points instead of the default count (corners and edges are always
    /// checked): `Some(0)` leaves the interior of a large output to the whole-output
    /// comparison alone.
    pub sample_count: Option<usize>,
    /// The first this many build-variant checks of launches (`choose`) get a wrong tile.
    pub variant_wrong_tile: usize,
    /// The first this many build-variant checks of launches (`choose`) run out of device
    /// memory at their launch.
    pub variant_out_of_memory: usize,
    /// The first this many launches of a chosen winner fail after it is built, as a
    /// launch the driver refuses would (a record from another driver, a device that
    /// lost a resource): what no config that passes every check does on PoCL.
    pub launch_failure: usize,
    /// The final round's band instead of 10 % of the fastest: a test's way to send every
    /// timed candidate (up to 6) to the final round, whatever the device's noise.
    pub final_band: Option<f64>,
}

impl Inject {
    /// The output fault of candidate `i`.
    pub(crate) fn fault(&self, i: usize) -> super::candidate::Fault {
        use super::candidate::Fault;
        if self.wrong_result.contains(&i) {
            Fault::Fill(0x3C)
        } else if self.zero_output.contains(&i) {
            Fault::Fill(0)
        } else if self.wrong_tile.contains(&i) {
            Fault::Tile(0)
        } else if let Some(&(_, b)) = self.wrong_product.iter().find(|(c, _)| *c == i) {
            Fault::Tile(b)
        } else if self.wrong_element.contains(&i) {
            Fault::Element
        } else if self.out_of_memory.contains(&i) {
            Fault::OutOfMemory
        } else {
            Fault::None
        }
    }

    /// The full-check limit.
    pub(crate) fn full_limit(&self) -> u64 {
        self.full_check_max.unwrap_or(super::verify::FULL_MACS)
    }
}

fn launch_inject() -> &'static std::sync::Mutex<Inject> {
    static I: std::sync::OnceLock<std::sync::Mutex<Inject>> = std::sync::OnceLock::new();
    I.get_or_init(Default::default)
}

/// Sets the faults that [`TuneOptions::from_env`] (what plain launches tune and check
/// with) carries, process-wide. For the crate's tests, in a child process. Not a stable
/// API.
#[doc(hidden)]
pub fn set_launch_inject(inject: Inject) {
    *launch_inject().lock().unwrap_or_else(|e| e.into_inner()) = inject;
}

/// Takes one from [`Inject::variant_wrong_tile`] of the process-wide faults: whether this
/// variant check gets a wrong tile.
pub(crate) fn take_variant_fault() -> bool {
    take(|i| &mut i.variant_wrong_tile)
}

/// Takes one from [`Inject::variant_out_of_memory`] of the process-wide faults: whether
/// this variant check's launch runs out of memory.
pub(crate) fn take_variant_out_of_memory() -> bool {
    take(|i| &mut i.variant_out_of_memory)
}

/// Takes one from [`Inject::launch_failure`] of the process-wide faults: whether this
/// launch of a chosen winner fails.
pub(crate) fn take_launch_failure() -> bool {
    take(|i| &mut i.launch_failure)
}

/// Counts one down from the process-wide counter `field` picks: whether it was above 0.
fn take(field: impl FnOnce(&mut Inject) -> &mut usize) -> bool {
    let mut i = launch_inject().lock().unwrap_or_else(|e| e.into_inner());
    let n = field(&mut i);
    if *n > 0 {
        *n -= 1;
        true
    } else {
        false
    }
}

impl TuneOptions {
    /// From `CROSSGEMM_CACHE_DIR` (else the platform cache folder),
    /// `CROSSGEMM_TUNE_EXACT`, `CROSSGEMM_TUNE_MAX`, `CROSSGEMM_TUNE_BUDGET_MS` and
    /// `CROSSGEMM_ALWAYS_COMPILE`;
    /// progress on.
    pub fn from_env() -> TuneOptions {
        TuneOptions {
            cache_dir: crate::env::cache_dir(),
            exact_shape: crate::env::flag("CROSSGEMM_TUNE_EXACT"),
            max_candidates: crate::env::tune_max(),
            thorough: false,
            configs: Vec::new(),
            budget_ms: crate::env::tune_budget_ms(),
            always_compile: crate::env::flag("CROSSGEMM_ALWAYS_COMPILE"),
            force: false,
            progress: true,
            on_progress: None,
            inject: launch_inject().lock().unwrap_or_else(|e| e.into_inner()).clone(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse() {
        assert_eq!(TuneMode::parse(""), Some(TuneMode::Full));
        assert_eq!(TuneMode::parse(" Full "), Some(TuneMode::Full));
        assert_eq!(TuneMode::parse("off"), Some(TuneMode::Off));
        assert_eq!(TuneMode::parse("cached"), Some(TuneMode::Cached));
        assert_eq!(TuneMode::parse("sometimes"), None);
    }
}
