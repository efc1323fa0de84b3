//! The host contract of a config: what a launch of it needs from the runtime.

/// The extents of one call: C is `m × n`, the product runs over `k`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Problem {
    /// Rows of C.
    pub m: usize,
    /// Columns of C.
    pub n: usize,
    /// The inner dimension.
    pub k: usize,
}

impl Problem {
    /// `m × n × k`.
    pub const fn new(m: usize, n: usize, k: usize) -> Problem {
        Problem { m, n, k }
    }
}

/// Grid, block and dynamic shared memory of one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchDims {
    /// Blocks (work-groups) per dimension.
    pub grid: [u32; 3],
    /// Threads (work-items) per block per dimension.
    pub block: [u32; 3],
    /// Dynamic shared memory, bytes (0 for OpenCL: its local arrays are static).
    pub smem_bytes: u32,
}

/// What one block of a config takes from a multiprocessor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resources {
    /// Threads per block.
    pub threads: u32,
    /// Shared (local) memory per block, bytes.
    pub smem_bytes: u32,
    /// Estimated 32-bit registers per thread (the compiler's count may differ).
    pub est_regs: u32,
}

/// What a compile of a config needs beyond its source and `-D` defines. Part of the
/// compiled-binary cache key by construction: the runtime derives its compile options
/// from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct CompileNeeds {
    /// Suffix of the CUDA architecture, e.g. `a` for `sm_90a` (wgmma, setmaxnreg);
    /// empty for the plain `sm_<cc>`.
    pub arch_suffix: &'static str,
}
