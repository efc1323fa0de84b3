//! The end of a kernel whose blocks each own a strip of `CG_NB` columns of C for `CG_TR`
//! rows and whose warps hold partial sums of it (`gemv_n`, `decode_n`; `simt`'s OpenCL
//! splits share the two-kernel launch): the warps' sums added in warp order, then, with
//! `KSPLIT` > 1 (the grid's `y` splitting K), over the strip's blocks through a
//! workspace. Each split leaves its sums in its slot of the strip (`cg_ws`), and the
//! slots are added in split order: the same bits whichever split finishes last. In CUDA
//! ([`cuda_tail`]) the last split to arrive adds them, so no block waits for another: the
//! arrival protocol ([`CUDA_ARRIVE`]) lives here for every CUDA split of K in the crate
//! (`simt`'s tiles and the wgmma family's split-K as well). In OpenCL C a second kernel
//! adds them ([`SUM_KERNEL_SUFFIX`], [`opencl_sum_kernel`]). The size of that workspace
//! lives here too, beside the code that lays it out.

use super::Workspace;

/// The workspace of a launch of `strips` strips (every product's) of `tile` outputs
/// (`CG_TR * CG_NB`) split over `ksplit` blocks: the tail's `KSPLIT` f32 slots of a tile
/// per strip and one arrival counter per strip. `None` without a split.
pub(crate) fn workspace(strips: usize, ksplit: u32, tile: u32) -> Option<Workspace> {
    if ksplit <= 1 {
        return None;
    }
    let strips = strips as u64;
    Some(Workspace {
        bytes: strips * ksplit as u64 * tile as u64 * 4,
        flags: strips,
    })
}

/// `Err` when `w` is more than a call may take.
pub(crate) fn check_workspace(w: Option<Workspace>) -> Result<(), String> {
    match w {
        Some(w) if w.bytes > Workspace::MAX_BYTES => Err(format!(
            "{} bytes of split-K partial sums (at most {})",
            w.bytes,
            Workspace::MAX_BYTES
        )),
        _ => Ok(()),
    }
}

/// CUDA text at file scope, before a strip kernel or `simt`'s (the families that split K
/// over the grid's `y`): `KSPLIT`'s default and bounds and, with `KSPLIT` > 1,
/// [`CUDA_ARRIVE`] and `cg_block_last_to_arrive(flag, leader)`, a whole block's arrival
/// as one of `KSPLIT` (every thread calls it after storing its slots with `CG_STCG`;
/// true in every thread of the last block, which may then read every slot).
pub(crate) fn cuda_split_head() -> String {
    format!(
        r#"#ifndef KSPLIT
#define KSPLIT 1
#endif
static_assert(KSPLIT >= 1 && KSPLIT <= 32, "KSPLIT: 1 to 32 blocks along K");
#if KSPLIT > 1
{CUDA_ARRIVE}{BLOCK_ARRIVE}#endif
"#
    )
}

/// The arrival protocol of every CUDA split of K in the crate (the strip tail here,
/// `simt`'s tiles, the wgmma family's split-K and stream-K units), emitted at file scope
/// where a kernel splits: a split writes its slots with `CG_STCG` (`.cg`: to L2, where no
/// other SM's L1 line can stand in for them), fences, and one thread counts it on the
/// tile's counter with `cg_arrive_last` (`acq_rel` at GPU scope). The split that sees
/// every other counted is the last: it resets the counter for the next launch (the
/// runtime zeroes the counters once, when it allocates them) and, after a fence, reads
/// the slots with `CG_LDCG` and adds them in split order. No block waits for another.
/// The macros are `#ifndef` so that `gemm-core/tests/simt_cuda_on_host.rs` can run a
/// kernel on host atomics.
pub(crate) const CUDA_ARRIVE: &str = r#"#ifndef CG_STCG
#define CG_STCG(p, v) asm volatile("st.global.cg.f32 [%0], %1;" :: "l"(p), "f"(v) : "memory")
#define CG_LDCG(p, v) asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory")
#define CG_ARRIVE(p, old) asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(p) : "memory")
#define CG_RESET(p) asm volatile("st.relaxed.gpu.global.u32 [%0], 0;" :: "l"(p) : "memory")
#endif
/* One thread's arrival at a tile's counter, after the splits' slots are fenced: whether
   it is the last of n (which resets the counter: this launch's no more). */
static __device__ __forceinline__ bool cg_arrive_last(unsigned* flag, unsigned n) {
    unsigned old;
    CG_ARRIVE(flag, old);
    const bool last = old == n - 1;
    if (last) CG_RESET(flag);
    return last;
}
"#;

const BLOCK_ARRIVE: &str = r#"static __device__ __forceinline__ bool cg_block_last_to_arrive(unsigned* flag, bool leader) {
    __shared__ unsigned cg_last;
    __threadfence();
    __syncthreads();
    if (leader) cg_last = cg_arrive_last(flag, KSPLIT);
    __syncthreads();
    if (!cg_last) return false;
    __threadfence();
    return true;
}
"#;

/// The tail's CUDA text. Before the kernel the source holds [`cuda_split_head`]; the
/// kernel defines `CG_TR` (rows of the strip), `CG_NB`, `WARPS`, `CG_THREADS`,
/// `CG_RED(w, i, jj)` (warp `w`'s sum at row `i`, column `jj` of the strip, in shared
/// memory that every thread can read: a `__syncthreads` after the last write),
/// `CG_R`/`CG_C` (rows and columns of C in the kernel's terms) and `tid`; `coords` turns
/// the kernel's `i`, `j` into C's `ci`, `cj`, and `store` stores `sum` there. It ends the
/// kernel's body.
pub(crate) fn cuda_tail(coords: &str, store: &str) -> String {
    TAIL.replace("@COORDS@", coords).replace("@STORE@", store)
}

const TAIL: &str = r#"#if KSPLIT > 1
    const long cg_strip = (long)blockIdx.z * gridDim.x + blockIdx.x;
    float* const cg_slots = cg_ws + cg_strip * (KSPLIT * CG_TR * CG_NB);
    for (int o = tid; o < CG_TR * CG_NB; o += CG_THREADS) {
        float v = 0.0f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) v += CG_RED(w, o / CG_NB, o % CG_NB);
        CG_STCG(cg_slots + blockIdx.y * (CG_TR * CG_NB) + o, v);
    }
    if (!cg_block_last_to_arrive(cg_flags + cg_strip, tid == 0)) return;
#endif
    for (int o = tid; o < CG_TR * CG_NB; o += CG_THREADS) {
        const int i = o / CG_NB, jj = o % CG_NB;
        const int j = blockIdx.x * CG_NB + jj;
        if (i < CG_R && j < CG_C) {
            float sum = 0.0f;
#if KSPLIT > 1
            for (int s = 0; s < KSPLIT; ++s) {
                float v;
                CG_LDCG(cg_slots + s * (CG_TR * CG_NB) + o, v);
                sum += v;
            }
#else
#pragma unroll
            for (int w = 0; w < WARPS; ++w) sum += CG_RED(w, i, jj);
#endif
@COORDS@
            @STORE@;
        }
    }"#;

/// The suffix of an OpenCL split launch's second kernel: an OpenCL program that holds a
/// kernel `{symbol}_sum` beside `{symbol}` is launched as both, in order on one queue,
/// with the same arguments, the second over [`sum_pass`]'s grid.
///
/// Why two kernels: the sums of a split meet only after every work-group of the strip
/// has left its own, and OpenCL C 1.2 orders nothing between the work-groups of one
/// launch (CUDA's tail uses `acq_rel.gpu` atomics for it). The one
/// ordering it promises is a kernel boundary on an in-order queue. A single kernel whose
/// last work-group adds the others' sums was right in every run on NVIDIA's OpenCL, but
/// that driver compiles `mem_fence` to `membar.cta` (work-group scope: batch af1's PTX),
/// so it was right by luck.
pub const SUM_KERNEL_SUFFIX: &str = "_sum";

/// The launch of a split's second kernel (see [`SUM_KERNEL_SUFFIX`]) after the first's
/// `dims`: one work-group per strip (the grid's `y`, the split, is 1), the same
/// work-group size.
pub fn sum_pass(dims: crate::family::LaunchDims) -> crate::family::LaunchDims {
    crate::family::LaunchDims {
        grid: [dims.grid[0], 1, dims.grid[2]],
        ..dims
    }
}

/// OpenCL C's kernel signature, the same for a split's two kernels (`name` is the symbol,
/// or the symbol and [`SUM_KERNEL_SUFFIX`]): the workspace first with `KSPLIT > 1` (the
/// counters, which OpenCL's splits do not use, keep the ABI CUDA's), then the ABI.
pub(crate) fn opencl_signature(name: &str, params: &str) -> String {
    format!(
        r#"void {name}(
#if KSPLIT > 1
    __global float* cg_ws, __global uint* cg_flags,
#endif
    int M, int N, int K, {params})"#
    )
}

/// A split's second kernel, [`SUM_KERNEL_SUFFIX`], emitted with `KSPLIT > 1` only:
/// `attrs` are the first kernel's (its work-group size), `body` reads the strip's slots
/// in split order and stores.
pub(crate) fn opencl_sum_kernel(sym: &str, attrs: &str, params: &str, body: &str) -> String {
    format!(
        r#"
#if KSPLIT > 1
/* The split's second pass (strip_sum::SUM_KERNEL_SUFFIX): every work-group of the first
   has left its sums in its slot of the workspace, in order before this launch. */
__kernel {attrs}
{signature}
{{
{body}
}}
#endif
"#,
        signature = opencl_signature(&format!("{sym}{SUM_KERNEL_SUFFIX}"), params)
    )
}

/// OpenCL C declarations of the strip's slots in both kernels of a split: `cg_slots`,
/// and `CG_SLOT(i, jj)`, where split `get_group_id(1)` leaves its sum of row `i`, column
/// `jj` of the strip. The kernel defines `CG_TR` and `CG_NB` before it.
pub(crate) const OPENCL_SPLIT_HEAD: &str = r#"#if KSPLIT > 1
    const long cg_tile = (long)get_group_id(2) * get_num_groups(0) + get_group_id(0);
    __global float* const cg_slots = cg_ws + cg_tile * (KSPLIT * CG_TR * CG_NB);
#define CG_SLOT(i, jj) cg_slots[get_group_id(1) * (CG_TR * CG_NB) + (i) * CG_NB + (jj)]
#endif"#;

/// The body of a strip's second kernel ([`opencl_sum_kernel`]) after
/// [`OPENCL_SPLIT_HEAD`]: per output of the strip, the `KSPLIT` slots added in split
/// order and stored (as [`cuda_tail`], with `coords` and `store` the same). Before it the
/// kernel defines `CG_R`, `CG_C`, `tid` and `CG_THREADS`.
pub(crate) fn opencl_strip_sum(coords: &str, store: &str) -> String {
    OPENCL_STRIP_SUM.replace("@COORDS@", coords).replace("@STORE@", store)
}

const OPENCL_STRIP_SUM: &str = r#"    for (int o = tid; o < CG_TR * CG_NB; o += CG_THREADS) {
        const int i = o / CG_NB, jj = o % CG_NB;
        const int j = get_group_id(0) * CG_NB + jj;
        if (i < CG_R && j < CG_C) {
            float sum = 0.0f;
            for (int s = 0; s < KSPLIT; ++s) sum += cg_slots[s * (CG_TR * CG_NB) + o];
@COORDS@
            @STORE@;
        }
    }"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family::TileConfig;
    use crate::ir::{AccMode, DType, GemmIr, Layout};
    use crate::plan::plan_target;
    use crate::space::TuneSpace;
    use crate::target::{Targets, BUILTIN_TARGETS};

    /// Every OpenCL target plans splits of K over work-groups (gemv_n, simt), as two
    /// kernels: no atomics, nothing read across the work-groups of one launch.
    #[test]
    fn opencl_targets_plan_splits_as_two_kernels() {
        let targets = Targets::parse(BUILTIN_TARGETS).unwrap();
        for name in ["nvidia_opencl", "opencl_cpu"] {
            let target = targets.get(name).unwrap();
            let ir = GemmIr::matmul("t", DType::F16, AccMode::F32, Layout::ColMajor, Layout::RowMajor);
            let split = plan_target(&ir, target, &TuneSpace::default())
                .configs
                .into_iter()
                .filter(|c| matches!(c, TileConfig::GemvN(_) | TileConfig::Simt(_)) && c.k_split() > 1)
                .count();
            assert!(split > 0, "{name}: no split config planned");
        }
        for ir in [
            GemmIr::matmul("t", DType::F16, AccMode::F32, Layout::ColMajor, Layout::RowMajor),
            GemmIr::matmul("t", DType::F16, AccMode::F32, Layout::RowMajor, Layout::RowMajor),
        ] {
            for family in ["simt", "gemv_n"] {
                let id = crate::family::FamilyId::from_name(family).unwrap();
                let src = id.emit(&ir, crate::target::Backend::Opencl, crate::codegen::Variant::Full);
                assert!(
                    src.contains(&format!("void {}{SUM_KERNEL_SUFFIX}(", ir.symbol())),
                    "{family}"
                );
                assert!(!src.contains("atomic_"), "{family}: an atomic in the OpenCL split");
            }
        }
    }
}
