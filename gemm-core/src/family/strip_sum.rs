//! The end of a kernel whose blocks each own a strip of `CG_NB` columns of C for `CG_TR`
//! rows and whose warps hold partial sums of it (`gemv_n`, `decode_n`): the warps' sums
//! added in warp order, then, with `KSPLIT` > 1 (the grid's `y` splitting K), over the
//! strip's blocks through a workspace. Each split leaves its sums in its slot of the strip
//! (`cg_ws`), and the last split to arrive (`cg_flags`, as the wgmma family's split-K)
//! adds the slots in split order and stores: the same bits whichever arrives last, and no
//! block waits for another. CUDA's text ([`cuda_tail`]) and OpenCL C's
//! ([`OPENCL_SPLIT_HEAD`], [`opencl_split_tail`]). The size of that workspace lives here
//! too, beside the code that lays it out.

use super::Workspace;

/// The most workspace (partial sums) a split-K call may take, bytes.
const MAX_WORKSPACE: u64 = 64 << 20;

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
        Some(w) if w.bytes > MAX_WORKSPACE => Err(format!(
            "{} bytes of split-K partial sums (at most {MAX_WORKSPACE})",
            w.bytes
        )),
        _ => Ok(()),
    }
}

/// Why an OpenCL target may not split K over the work-groups of one launch, or `None`:
/// the last work-group to arrive reads the others' sums, and OpenCL C 1.2 orders nothing
/// between work-groups of a launch. On a CPU the fences are the CPU's own (work-groups
/// are threads; PoCL's `mem_fence` is a fence of the memory model, `atomic_inc` a locked
/// read-modify-write), but a GPU driver may compile `mem_fence` to work-group scope:
/// NVIDIA's OpenCL emits `membar.cta` (the PTX of batch af1), so another work-group's
/// sums may not have reached L2 when the last one reads them.
pub(crate) fn refuses_split(target: &crate::target::TargetSpec) -> Option<String> {
    use crate::target::{Backend, DeviceType};
    (target.backend == Backend::Opencl && target.device_type != DeviceType::Cpu).then(|| {
        format!(
            "split-K on an OpenCL {} target: OpenCL C 1.2 orders nothing between the work-groups of a launch, and its drivers' fences may be work-group scope (NVIDIA's: membar.cta)",
            target.name
        )
    })
}

/// The tail's CUDA text. Before it the kernel defines `CG_TR` (rows of the strip),
/// `CG_NB`, `WARPS`, `CG_THREADS`, `CG_RED(w, i, jj)` (warp `w`'s sum at row `i`, column
/// `jj` of the strip, in shared memory that every thread can read: a `__syncthreads`
/// after the last write), `CG_R`/`CG_C` (rows and columns of C in the kernel's terms) and
/// `tid`; `coords` turns the kernel's `i`, `j` into C's `ci`, `cj`, and `store` stores
/// `sum` there. It ends the kernel's body.
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
        asm volatile("st.global.cg.f32 [%0], %1;" :: "l"(cg_slots + blockIdx.y * (CG_TR * CG_NB) + o), "f"(v) : "memory");
    }
    __threadfence();
    __syncthreads();
    __shared__ unsigned cg_last;
    if (tid == 0) {
        unsigned old;
        asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(cg_flags + cg_strip) : "memory");
        cg_last = old == KSPLIT - 1;
        /* Every split has arrived: the counter is this launch's no more. */
        if (cg_last) asm volatile("st.relaxed.gpu.global.u32 [%0], 0;" :: "l"(cg_flags + cg_strip) : "memory");
    }
    __syncthreads();
    if (!cg_last) return;
    __threadfence();
#endif
    for (int o = tid; o < CG_TR * CG_NB; o += CG_THREADS) {
        const int i = o / CG_NB, jj = o % CG_NB;
        const int j = blockIdx.x * CG_NB + jj;
        if (i < CG_R && j < CG_C) {
            float sum = 0.0f;
#if KSPLIT > 1
            for (int s = 0; s < KSPLIT; ++s) {
                float v;
                asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(cg_slots + s * (CG_TR * CG_NB) + o) : "memory");
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

/// OpenCL C declarations at the top of a kernel's body (a `__local` variable must be
/// declared at the kernel's outermost scope) for [`opencl_split_tail`]: the strip's slots,
/// and `CG_SLOT(i, jj)`, where this split leaves its sum of row `i`, column `jj` of the
/// strip. The kernel takes `__global float* cg_ws, __global uint* cg_flags` first with
/// `KSPLIT > 1`, and defines `CG_TR` and `CG_NB` before it.
pub(crate) const OPENCL_SPLIT_HEAD: &str = r#"#if KSPLIT > 1
    __local int cg_last;
    const long cg_tile = (long)get_group_id(2) * get_num_groups(0) + get_group_id(0);
    __global float* const cg_slots = cg_ws + cg_tile * (KSPLIT * CG_TR * CG_NB);
#define CG_SLOT(i, jj) cg_slots[get_group_id(1) * (CG_TR * CG_NB) + (i) * CG_NB + (jj)]
#endif"#;

/// OpenCL C's end of a split: after every work-item has left its sums in `CG_SLOT`, the
/// last work-group of the strip to arrive ([`OPENCL_ARRIVE`]) adds the slots in split
/// order and stores (as [`cuda_tail`], with `coords` and `store` the same). Before it the
/// kernel defines `CG_R`, `CG_C`, `tid` and `CG_THREADS`.
pub(crate) fn opencl_split_tail(coords: &str, store: &str) -> String {
    OPENCL_TAIL
        .replace("@ARRIVE@", OPENCL_ARRIVE)
        .replace("@COORDS@", coords)
        .replace("@STORE@", store)
}

/// OpenCL C's arrival of a work-group at its output tile's counter `cg_flags[cg_tile]`
/// once every work-item has stored its partial sums: the work-groups but the last of the
/// `KSPLIT` return; the last resets the counter for the next launch and goes on to read
/// the others' sums. The kernel declares `__local int cg_last` at its outermost scope and
/// `tid`. OpenCL C 1.2 has no acquire/release atomics: each work-item's fence orders its
/// stores before the barrier, work-item 0's `atomic_inc` after it, and the last work-group
/// reads the sums through `volatile` after a fence of its own (NVIDIA's OpenCL: `membar.gl`
/// and loads that skip the L1).
pub(crate) const OPENCL_ARRIVE: &str = r#"    mem_fence(CLK_GLOBAL_MEM_FENCE);
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    if (tid == 0) {
        const uint old = atomic_inc(cg_flags + cg_tile);
        cg_last = old == KSPLIT - 1;
        /* Every split has arrived: the counter is this launch's no more. */
        if (cg_last) atomic_xchg(cg_flags + cg_tile, 0u);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!cg_last) return;
    mem_fence(CLK_GLOBAL_MEM_FENCE);"#;

const OPENCL_TAIL: &str = r#"#if KSPLIT > 1
@ARRIVE@
    {
        const volatile __global float* const cg_in = cg_slots;
        for (int o = tid; o < CG_TR * CG_NB; o += CG_THREADS) {
            const int i = o / CG_NB, jj = o % CG_NB;
            const int j = get_group_id(0) * CG_NB + jj;
            if (i < CG_R && j < CG_C) {
                float sum = 0.0f;
                for (int s = 0; s < KSPLIT; ++s) sum += cg_in[s * (CG_TR * CG_NB) + o];
@COORDS@
                @STORE@;
            }
        }
    }
#endif"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family::TileConfig;
    use crate::ir::{AccMode, DType, GemmIr, Layout};
    use crate::plan::plan_target;
    use crate::space::TuneSpace;
    use crate::target::{Targets, BUILTIN_TARGETS};

    /// OpenCL GPUs plan no split of K over work-groups (gemv_n, simt) and refuse one from
    /// disk; CPUs and CUDA do.
    #[test]
    fn only_opencl_gpus_refuse_splits_over_work_groups() {
        let targets = Targets::parse(BUILTIN_TARGETS).unwrap();
        for (name, refused) in [("nvidia_opencl", true), ("opencl_cpu", false), ("h200", false)] {
            let target = targets.get(name).unwrap();
            assert_eq!(refuses_split(target).is_some(), refused, "{name}");
            let ir = GemmIr::matmul("t", DType::F16, AccMode::F32, Layout::ColMajor, Layout::RowMajor);
            let split = plan_target(&ir, target, &TuneSpace::default())
                .configs
                .into_iter()
                .filter(|c| matches!(c, TileConfig::GemvN(_) | TileConfig::Simt(_)) && c.k_split() > 1)
                .count();
            assert_eq!(split == 0, refused, "{name}: {split} split configs planned");
        }
    }
}
