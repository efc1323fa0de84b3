//! The host contract of a config: what a launch of it needs from the runtime.

use crate::ir::{DType, GemmIr, Layout};

/// The extents of one call (C is `m × n`, the product runs over `k`) and how A and B lie
/// in memory, which decides the alignment-dependent code paths (vector loads, TMA).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Problem {
    /// Rows of C.
    pub m: usize,
    /// Columns of C.
    pub n: usize,
    /// The inner dimension.
    pub k: usize,
    /// How A is stored.
    pub a: Stored,
    /// How B is stored.
    pub b: Stored,
    /// How the output C is stored (row-major: rows of N; column-major: columns of M).
    pub c: Stored,
    /// Independent products of these extents in one launch (the grid's `z`): 1 for a
    /// plain call.
    pub batch: usize,
}

/// Where a view of an operand lies in its buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Stored {
    /// Elements between consecutive stored rows (row-major) or columns (column-major);
    /// 0 for packed storage (the contiguous extent).
    pub ld: usize,
    /// The view's first element, in elements from the buffer's (aligned) start.
    pub offset: usize,
    /// Elements between the matrices of a batch (0: one matrix for every batch).
    pub bstride: usize,
}

impl Stored {
    /// A view `ld` apart from element `offset` on.
    pub const fn new(ld: usize, offset: usize) -> Stored {
        Stored { ld, offset, bstride: 0 }
    }

    /// The same view repeated every `bstride` elements along a batch.
    pub const fn with_bstride(self, bstride: usize) -> Stored {
        Stored { bstride, ..self }
    }

    /// The leading dimension of an operand whose contiguous extent is `extent`.
    pub const fn pitch(self, extent: usize) -> usize {
        if self.ld == 0 {
            extent
        } else {
            self.ld
        }
    }

    /// Whether every stored row (of contiguous extent `extent`) of every matrix of the
    /// batch starts a multiple of `elems` elements from the buffer's start: the pitch, the
    /// offset and the batch stride all divide.
    pub fn rows_aligned(self, extent: usize, elems: usize) -> bool {
        self.pitch(extent).is_multiple_of(elems)
            && self.offset.is_multiple_of(elems)
            && self.bstride.is_multiple_of(elems)
    }
}

impl Problem {
    /// `m × n × k` over packed operands.
    pub const fn new(m: usize, n: usize, k: usize) -> Problem {
        Problem {
            m,
            n,
            k,
            a: Stored::new(0, 0),
            b: Stored::new(0, 0),
            c: Stored::new(0, 0),
            batch: 1,
        }
    }

    /// The same problem `batch` times over in one launch.
    pub const fn batched(self, batch: usize) -> Problem {
        Problem { batch, ..self }
    }

    /// The same extents with A and B stored as `a` and `b`.
    pub const fn stored(self, a: Stored, b: Stored) -> Problem {
        Problem { a, b, ..self }
    }

    /// The same problem with its output stored as `c`.
    pub const fn stored_out(self, c: Stored) -> Problem {
        Problem { c, ..self }
    }

    /// The problem of [`GemmIr::transposed`]: `N × M × K` with A and B exchanged. Every
    /// view keeps its memory (a row-major view is the column-major view of its transpose,
    /// with the same leading dimension, offset and batch stride), the output's included.
    pub const fn transposed(self) -> Problem {
        Problem {
            m: self.n,
            n: self.m,
            a: self.b,
            b: self.a,
            ..self
        }
    }

    /// A's and B's rows as stored for `ir`'s layouts: `(contiguous extent, rows of that
    /// extent)` per matrix. Row-major A is M rows of K, column-major A K columns of M;
    /// row-major B K rows of N, column-major B N columns of K.
    pub fn extents(&self, ir: &GemmIr) -> [(usize, usize); 2] {
        let a = match ir.a_layout() {
            Layout::RowMajor => (self.k, self.m),
            Layout::ColMajor => (self.m, self.k),
        };
        let b = match ir.b_layout() {
            Layout::RowMajor => (self.n, self.k),
            Layout::ColMajor => (self.k, self.n),
        };
        [a, b]
    }
}

/// What the launcher knows about the device beyond a family's own limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Machine {
    /// Multiprocessors / compute units (a persistent grid launches one block per unit).
    pub units: u32,
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
    /// `Some(c)` for a persistent kernel that walks its work by the clusters of `c`
    /// blocks it is launched with (`c` = 1: no cluster; `grid` is then `[c * n, 1, 1]`):
    /// a launcher may lower `grid[0]` to the multiple of `c` that the device keeps resident
    /// at once. A larger grid than that leaves clusters waiting for others to finish their
    /// whole walk, which doubles the time; how many clusters fit depends on the chip's
    /// GPCs and on the kernel's shared memory, which only the driver knows (on the H200,
    /// 30 clusters of 4 blocks of ~210 KB, not 33: bench/results/h200-2026-12-02y, where
    /// the wgmma family's 2x2 clusters took 1.7-1.9x the time without the lowering).
    /// `None`: the grid is the work.
    pub persistent: Option<u32>,
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
    /// How much of K the block's load pipeline holds at once (the k-tile times the ring
    /// depth): a problem with more K than this wraps the ring.
    pub ring_k: u32,
}

/// What a compile of a config needs beyond its source and `-D` defines. Part of the
/// compiled-binary cache key by construction: the runtime derives its compile options
/// from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct CompileNeeds {
    /// Suffix of the CUDA architecture, e.g. `a` for `sm_90a` (wgmma, setmaxnreg: code
    /// that runs on that exact architecture only); empty for the plain `sm_<cc>`.
    pub arch_suffix: &'static str,
}

/// A TMA tensor map the kernel takes by value before its ABI arguments (CUDA's
/// `cuTensorMapEncodeTiled`, rank 2, or 3 for a batched operand, element strides 1,
/// out-of-range elements read as zeros). The runtime encodes it over the operand's device memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TensorMap {
    /// Signature index of the operand it maps, or [`OUT_PARAM`] for the output.
    pub param: u32,
    /// Element type.
    pub dtype: DType,
    /// f32 elements copied as tf32 (`CU_TENSOR_MAP_DATA_TYPE_TFLOAT32`): TMA rounds each
    /// to the nearest tf32 on the way, as `cvt.rna` would (measured on the H200: bit for
    /// bit cuBLAS's tf32 results, where a FLOAT32 map leaves the low bits for the tensor
    /// cores to drop); only with `dtype` f32.
    pub tf32: bool,
    /// Extents in elements, the contiguous dimension first.
    pub dims: [u64; 2],
    /// Bytes between consecutive rows (dimension 1); a multiple of 16.
    pub pitch_bytes: u64,
    /// Where the mapped view starts in the operand's buffer, in bytes (a multiple of 16:
    /// TMA's global address alignment).
    pub offset_bytes: u64,
    /// For an operand of a batch, one matrix per product: `[products, bytes between
    /// them]` (a multiple of 16, at least a matrix's span), and the map is rank 3 with the
    /// product as its outermost coordinate; `None` for one matrix (rank 2).
    pub batch: Option<[u64; 2]>,
    /// The box one copy moves, in elements, the contiguous dimension first.
    pub box_dims: [u32; 2],
    /// Whether boxes land in shared memory with the 128-byte swizzle (else unswizzled).
    pub swizzle_128b: bool,
}

/// [`TensorMap::param`] of a map over the output (which has no signature index).
pub const OUT_PARAM: u32 = u32::MAX;

/// Device scratch memory a launch takes besides its operands: what a split-K reduction
/// keeps between the blocks of one output tile. The runtime keeps one per device, grown
/// to the largest a call has needed, and passes two pointers after the tensor maps:
/// `data` (`bytes` of it, contents undefined at launch) and `flags` (`flags` 32-bit
/// counters, all zero at launch; a kernel that uses them leaves them zero again, so one
/// zeroing at allocation serves every later launch in stream order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Workspace {
    /// Bytes of scratch data.
    pub bytes: u64,
    /// 32-bit counters, zero before and after every launch.
    pub flags: u64,
}

impl Workspace {
    /// The most scratch data a call may take, bytes: a split of K that would keep more
    /// partial sums is refused (a problem with that many outputs fills the machine
    /// without splitting K).
    pub const MAX_BYTES: u64 = 64 << 20;
}
