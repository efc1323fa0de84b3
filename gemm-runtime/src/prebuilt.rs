//! CUBINs built ahead of time by `#[gemm_kernel]` (crossgemm's `aot` feature): the
//! configs of a kernel's build-time table, compiled by the macro with the options a
//! launch would give NVRTC, so that the first call of a shape the table covers loads a
//! module instead of compiling one (a wgmma kernel's NVRTC build takes 0.5–1.8 s on a
//! machine whose CUDA compute cache has not seen it).
//!
//! A build is found by its source (the same static string the macro embedded), its
//! symbol and its exact NVRTC options (architecture and defines), so it is only ever
//! used where NVRTC would have been given the same input; anything else, or a CUBIN the
//! driver refuses, compiles as before.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// One CUBIN the macro built: a config of the table, for one architecture.
#[derive(Debug)]
pub struct Prebuilt {
    family: &'static str,
    symbol: &'static str,
    options: &'static [&'static str],
    cubin: &'static [u8],
    log: &'static str,
}

impl Prebuilt {
    #[doc(hidden)]
    pub const fn __new(
        family: &'static str,
        symbol: &'static str,
        options: &'static [&'static str],
        cubin: &'static [u8],
        log: &'static str,
    ) -> Self {
        Prebuilt {
            family,
            symbol,
            options,
            cubin,
            log,
        }
    }

    /// The kernel family whose source it was built from.
    pub fn family(&self) -> &'static str {
        self.family
    }

    /// The kernel's entry point.
    pub fn symbol(&self) -> &'static str {
        self.symbol
    }

    /// The NVRTC options it was built with (`--gpu-architecture=sm_90a`, the defines).
    pub fn options(&self) -> &'static [&'static str] {
        self.options
    }

    /// The CUBIN.
    pub fn cubin(&self) -> &'static [u8] {
        self.cubin
    }

    /// NVRTC's log of the build (ptxas's register and spill report).
    pub fn log(&self) -> &'static str {
        self.log
    }

    /// ptxas's report in [`Prebuilt::log`], read.
    #[cfg(feature = "cuda")]
    pub fn ptxas(&self) -> crate::PtxasInfo {
        crate::PtxasInfo::parse(self.log)
    }
}

/// Where a source lives (its address and length: the macro's string, never a copy), the
/// symbol, and the options joined by newlines.
type Key = (usize, usize, String, String);

fn registry() -> &'static Mutex<HashMap<Key, &'static Prebuilt>> {
    static R: OnceLock<Mutex<HashMap<Key, &'static Prebuilt>>> = OnceLock::new();
    R.get_or_init(Default::default)
}

fn key<S: AsRef<str>>(source: &str, symbol: &str, options: &[S]) -> Key {
    let opts = options.iter().map(|o| o.as_ref()).collect::<Vec<_>>().join("\n");
    (source.as_ptr() as usize, source.len(), symbol.to_string(), opts)
}

/// Makes a target's prebuilt CUBINs findable (`sources` are its families' sources).
/// Idempotent; [`TargetKernel`](crate::TargetKernel) calls it the first time anything reads its plan.
pub(crate) fn register(prebuilt: &'static [Prebuilt], sources: &'static [(&'static str, &'static str)]) {
    if prebuilt.is_empty() {
        return;
    }
    let mut r = registry().lock().unwrap_or_else(|e| e.into_inner());
    for p in prebuilt {
        // A build whose family the target lacks cannot be reached by any launch.
        if let Some(source) = sources.iter().find(|(f, _)| *f == p.family).map(|(_, s)| *s) {
            r.insert(key(source, p.symbol, p.options), p);
        }
    }
}

/// The prebuilt CUBIN for exactly this compile, if the macro made one.
#[cfg(feature = "cuda")]
pub(crate) fn find(source: &str, symbol: &str, options: &[String]) -> Option<&'static Prebuilt> {
    let r = registry().lock().unwrap_or_else(|e| e.into_inner());
    if r.is_empty() {
        return None;
    }
    r.get(&key(source, symbol, options)).copied()
}

static LOADED: AtomicU64 = AtomicU64::new(0);

/// Called by the CUDA backend when a prebuilt CUBIN became a working kernel.
#[cfg(feature = "cuda")]
pub(crate) fn count_loaded() {
    LOADED.fetch_add(1, Ordering::Relaxed);
}

/// Prebuilt CUBINs loaded in this process so far.
pub(crate) fn loaded() -> u64 {
    LOADED.load(Ordering::Relaxed)
}
