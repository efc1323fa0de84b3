//! The `wgmma` family, Hopper (sm_90a): `wgmma.mma_async` on shared-memory descriptors, fed
//! by TMA (`cp.async.bulk.tensor.2d`) through a `STAGES`-deep ring of mbarriers, one
//! producer warpgroup and one or two consumer warpgroups (warp specialisation with
//! `setmaxnreg`), persistent over the output tiles in grouped (`GROUP_M`) order.
//!
//! The source is header-free CUDA C for NVRTC (`--gpu-architecture=sm_90a`); tile sizes
//! stay preprocessor constants, so one source serves every configuration
//! ([`WgmmaTile::defines`]).
//!
//! # What it serves ([`supports`])
//!
//! - Operands: f16 or bf16 (`ir.ab_dtype`), f32 accumulation; or f32 operands in the
//!   tf32 mode (`AccMode::Tf32`, `wgmma ... m64nNk8.f32.tf32.tf32`), which the hardware
//!   takes **K-major only** (row-major A, column-major B: the `x * w` of a linear layer
//!   with an `nn.Linear` weight). Its maps are of type `TFLOAT32`, so TMA rounds every
//!   element to the nearest tf32 on the way into shared memory (with plain `FLOAT32`
//!   maps the tensor cores would drop the low 13 bits instead: on the H200 that was
//!   3e-3 off cuBLAS, against 0 with TFLOAT32). A k-tile is made of 128-byte swizzle rows
//!   in either case (one by default: `BK` = 64 16-bit or 32 f32 elements, [`bk_for`]), so
//!   the ring, the descriptors and the byte offsets are the same. **Unsupported:** full f32 (no
//!   tensor-core instruction: SIMT), tf32 with an M-major A or N-major B, and tf32 rows
//!   that TMA cannot map (`K % 4 != 0`: the cp.async producer would copy unrounded
//!   bits); mma.sync serves those.
//! - Layouts: every combination. A K-major (row-major A) or M-major (column-major A,
//!   wgmma `imm-trans-a` = 1); B K-major (column-major B, the `nn.Linear` weight case)
//!   or N-major (row-major B, `imm-trans-b` = 1). MN-major operands need their tile
//!   extent to be a multiple of 64 (`BM` for A, `BN` for B; a static_assert says so).
//! - Output: any `ir.out_dtype` and `ir.out_layout`, through the fused epilogue
//!   `cgw_epi(acc, v..)` (the DSL expression over the parameter values; `epilogue.rs`):
//!   `Row` and `Col` parameters are copied once per tile into the consumer's parameter
//!   area (`cp.async` at the tile's start, so they land while the mainloop runs) and read
//!   as pairs from shared memory, row-major residuals by pairs from global memory,
//!   scalars as they are; gelu, sigmoid and silu use `ex2`/`rcp.approx` (`CG_FAST_MATH`).
//!   Each consumer warp stores 16-row × 128-byte chunks: a chunk wholly inside
//!   a row-major output whose rows are 16-byte multiples (and `out` 16-byte aligned,
//!   checked at run time) goes through the warp's shared-memory staging buffer (written
//!   with `stmatrix` for 16-bit outputs, `CG_STSM`: one instruction a 16 × 16 block; not
//!   on three-consumer tiles wider than 128, where it spilled) and
//!   out as 16-byte stores (`CG_EPI_SMEM`, the default); other interior chunks store two
//!   adjacent elements at a time without checks; chunks on the M or N edge store element
//!   by element with bounds checks. Column-major outputs store elements.
//! - Shapes: any `M, N, K >= 1` whose operand rows (the contiguous dimension: K for
//!   K-major, M or N for MN-major) are a multiple of 4 bytes (even extents), with
//!   16-byte aligned bases. Rows of a multiple of 16 bytes (`K % 8 == 0` for K-major
//!   16-bit operands: what `cuTensorMapEncodeTiled` accepts) load by TMA, which
//!   zero-fills every out-of-range element of a box, so M, N and K tails need no special
//!   load code. Other rows ([`tma_ok`] false) take the **cp.async producer**
//!   (`CG_CPASYNC`, set per call by [`Wgmma`]'s `defines`): all 128 producer threads copy
//!   the tiles in 16-, 8- or 4-byte chunks (the largest that divides the row pitch,
//!   [`cpasync_chunks`]) into the same swizzled ring, zero-filling past the extents, and
//!   each arrives on the stage's `full` barrier with `cp.async.mbarrier.arrive.noinc`
//!   (count 128); consumers fence the async proxy before their wgmma. It has no
//!   multicast, so configs with a cluster refuse those calls; odd extents (rows of
//!   2-byte multiples) go to mma.sync. The stores check bounds in every case.
//!
//! # Kernel ABI
//!
//! ```c
//! extern "C" __global__ void __launch_bounds__(CG_THREADS, 1)
//! SYMBOL(const __grid_constant__ CgTmaMap a_map, const __grid_constant__ CgTmaMap b_map,
//!        [float* cg_ws, unsigned* cg_flags,]  // KSPLIT > 1 only (splitk.rs)
//!        int M, int N, int K, OUT* out, p0, p1, ...);
//! ```
//!
//! With `KSPLIT > 1` the kernel takes its [`Workspace`] (f32 partial tiles, then arrival
//! counters that are zero before and after every launch) after the maps
//! ([`splitk::workspace`]); the runtime passes the device's scratch memory there.
//!
//! `SYMBOL` is [`GemmIr::symbol`]; `CgTmaMap` is `struct __align__(64) CgTmaMap {
//! unsigned long long v[16]; }` (128 bytes, the driver's `CUtensorMap` bit for bit);
//! after the two maps comes exactly the ABI of the other CUDA kernels (the prelude's
//! `kernel_params`):
//! `out` and every signature parameter `p<i>`, the A and B parameters included (the TMA
//! kernel never reads them: it loads A and B through the maps; the cp.async producer
//! reads A and B through them, and its maps are placeholders, [`placeholder_map`]).
//!
//! # Launch
//!
//! - Block: `CG_THREADS = 128 * (CONSUMERS + 1)` threads (1 producer warpgroup, then
//!   the consumers): [`WgmmaTile::threads`]. Three consumers (192-row tiles, 160 registers
//!   each after `setmaxnreg`) won the fused rows at 2048×11008×4096 on the H200
//!   (1.00–1.02× cuBLASLt, bench/results/h200-2026-12-02zk), not its plain product.
//! - Dynamic shared memory: [`WgmmaTile::smem_bytes`], i.e. [`smem_bytes`]`(BM, BN,
//!   BK, STAGES, 2)` = `1024 + STAGES * (BM + BN) * BK * 2 + 16 * STAGES` (1024 bytes of
//!   slack to align the base to 1024, the ring of A and B tiles, then one `full` and one
//!   `empty` 8-byte mbarrier per stage), plus, when `CG_EPI_SMEM` is 1 (the default),
//!   `CONSUMERS * EPI_STAGING_BYTES` = `CONSUMERS * 9216` for the epilogue's staging
//!   buffers (whose row padding is the epilogue's parameter area). 128×256×64 with 4
//!   stages and 2 consumers: 197696 + 18432 = 216128 bytes. Above 48 KiB the runtime must
//!   raise
//!   `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` first; the limit on the H200 is
//!   232448 bytes (a static_assert in the source enforces it).
//! - Grid: persistent, `grid = (C * min(tiles, sm_count / C), 1, 1)` for clusters of
//!   `C = CLUSTER_M * CLUSTER_N` blocks ([`WgmmaTile::grid`]), with
//!   `tiles = ceil(M / (BM * CLUSTER_M)) * ceil(N / (BN * CLUSTER_N))`;
//!   without a cluster that is `min(ceil(M / BM) * ceil(N / BN), sm_count)`.
//!   A plain `cuLaunchKernel` works for all: clustered kernels carry
//!   `__cluster_dims__(C, 1, 1)` (the grid must then be a multiple of `C`, as the
//!   formula makes it), lowered at launch to the clusters that run at once
//!   ([`LaunchDims::persistent`]: 30 clusters of 4 on the H200, not 33). Cluster `c`
//!   (block `c` without one) takes items `t = c, c + clusters, ...` in `GROUP_M` order over the
//!   `grid_m = ceil(M / (BM * CLUSTER_M))` by `grid_n = ceil(N / (BN * CLUSTER_N))`
//!   work grid: item `t` lies in group `g = t / (GROUP_M * grid_n)`, whose
//!   `rows = min(GROUP_M, grid_m - g * GROUP_M)` rows sweep the columns together:
//!   `tm = g * GROUP_M + (t % (GROUP_M * grid_n)) % rows`,
//!   `tn = (t % (GROUP_M * grid_n)) / rows`; block `rank` of the cluster computes
//!   output tile row `tm * CLUSTER_M + rank % CLUSTER_M` and column
//!   `tn * CLUSTER_N + rank / CLUSTER_M`. Any grid of at least one cluster is correct.
//!
//! # Tensor maps (how the runtime encodes `a_map` and `b_map`)
//!
//! Both with `cuTensorMapEncodeTiled`, rank 2, element type
//! `CU_TENSOR_MAP_DATA_TYPE_FLOAT16` (f16), `CU_TENSOR_MAP_DATA_TYPE_BFLOAT16` (bf16) or
//! `CU_TENSOR_MAP_DATA_TYPE_TFLOAT32` (tf32, [`TensorMap::tf32`]: f32 in memory, rounded to
//! the nearest tf32 as it is copied),
//! `globalAddress` = the operand's base pointer (16-byte aligned), `elementStrides =
//! {1, 1}`, `CU_TENSOR_MAP_INTERLEAVE_NONE`, `CU_TENSOR_MAP_SWIZZLE_128B`,
//! `CU_TENSOR_MAP_L2_PROMOTION_L2_256B` (any promotion is correct; this one is what the
//! probe measured) and `CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE` (out-of-range elements read
//! as zeros: the kernel relies on it for every tail). Dimension 0 is the contiguous one;
//! `globalStrides` has one entry, the byte pitch of dimension 1 (a multiple of 16).
//!
//! | operand | IR layout | `globalDim` | `globalStrides` (bytes) | `boxDim` |
//! |---|---|---|---|---|
//! | A K-major | `a_layout() == RowMajor` (M×K, K contiguous) | `{K, M}` | `{K * esz}` | `{BK, BM}` = `{64 or 32 (tf32), BM}` |
//! | A M-major | `a_layout() == ColMajor` (K×M storage) | `{M, K}` | `{M * 2}` | `{64, BK}` = `{64, 64}` |
//! | B K-major | `b_layout() == ColMajor` (N×K storage) | `{K, N}` | `{K * esz}` | `{BK, BN}` = `{64 or 32 (tf32), BN}` |
//! | B N-major | `b_layout() == RowMajor` (K×N, N contiguous) | `{N, K}` | `{N * 2}` | `{64, BK}` = `{64, 64}` |
//!
//! K-major tiles arrive in one box per stage; MN-major tiles in `BM / 64` (or `BN / 64`)
//! boxes of 64 (m or n) × 64 (k), 8 KiB each, placed one after the other. The maps do
//! not depend on the cluster: with `CLUSTER_M == 2` the first block of each cluster
//! column issues the B boxes with `.multicast::cluster` to the column's blocks, with
//! `CLUSTER_N == 2` the first block of each row the A boxes to the row's.
//! [`tma_box`] returns the box for a layout and config.
//!
//! # Inside
//!
//! Stage `s` of the ring holds the A tile at `base + s * BM * 128` and the B tile at
//! `base + STAGES * BM * 128 + s * BN * 128`, both as TMA writes them with the 128-byte
//! swizzle (rows of 64 elements = 128 bytes, 8-row atoms of 1024 bytes, 1024-byte
//! aligned). One producer thread waits for `empty[s]`, arms `full[s]` with the stage's
//! byte count and issues the loads; every consumer warpgroup waits for `full[s]`, issues
//! `BK / 16` wgmma `m64n{BN}k16` per 64-row slab it owns (`BM / CONSUMERS` rows,
//! `(BM / CONSUMERS) / 64` slabs of `BN / 2` f32 registers each) and commits; then either
//! keeps that group in flight (`CG_INFLIGHT` = 1: `wait_group 1`, the previous stage is
//! released) or waits for it (`CG_INFLIGHT` = 0: `wait_group 0`, this stage is released),
//! and lane 0 of each consumer warp arrives on the stage's `empty` barrier of every block
//! of the cluster (count `4 * CONSUMERS * CLUSTER_M * CLUSTER_N`: a producer refills a
//! stage, in its own block and the blocks it multicasts to, only when all have read it).
//! The first wgmma of a tile uses `scale-d = 0`, so accumulators are never zeroed by
//! hand. After the last k-tile the consumers store the tile (see
//! `CG_EPI_SMEM`) while the producer already fills the ring with the next tile's stages.
//! With `CG_CPASYNC` the same ring is filled by `cp.async` from all 128 producer threads
//! (see Shapes above); the barriers, descriptors and consumers are the same.
//!
//! **Ping-pong** (`CG_PINGPONG`, two consumers, no split-K): consumer `c` takes the
//! block's work items `c, c + 2, ...`, each the whole tile (`BM / 64` slabs, so `BM / 64 *
//! BN / 2` accumulators of at most 128: 64×64 to 64×256, 128×64, 128×128). The producer
//! fills the ring item after item as before; a consumer skips the other's k-tiles in its
//! ring position, and the two mainloops run strictly in turn (named barriers 3 and 4: a
//! consumer starts its mainloop when the other has finished its own), because an
//! mbarrier parity names a phase only modulo 2: a consumer may wait on a stage only once
//! that stage's previous fill has been consumed. Each stage's `empty` barrier then counts
//! one consumer's warps. The epilogue of one consumer runs under the other's mainloop.
//! On the H200 (bench/results/h200-2026-12-01i, full tune) it won 4096×4096×128 (128×128:
//! 16.8 µs, 1.04× cuBLAS), 1024³ with bias+ReLU and the 32×(512×512×128) batch, and lost
//! to the cooperative 128×256 tile on the large squares and LLM shapes.
//!
//! **Stream-K** in its tail form (`CG_STREAMK`, cooperative, no split-K, no cluster, one
//! product; opt-in through `tune(streamk = 1)`): with `U` work units on `G` blocks, the
//! full waves run whole (block `g` takes units `g, g + G, ...`) and each of the `T = U % G`
//! units of the partial last wave is split `S = min(G / T, k-tiles, 8)` ways by K over
//! the blocks that would idle ([`splitk::streamk_tail`]); the `S` blocks of a unit fold
//! their partial tiles through the workspace in split order as split-K does (a slot per
//! block, [`splitk::workspace`]) and the last to arrive runs the epilogue. The aim is the
//! partial last wave: 2048×11008×4096 in 128×256 tiles is 5.2 waves on 132 SMs, whose
//! sixth runs 28 tiles, here 112 quarter-tiles. Classic stream-K (contiguous equal shares
//! of the last `G + T` units' k-tiles, each block at its own k offset) was correct and
//! 9-27% slower than the whole tiles on an H100 (bench/results/h100-2026-12-07ay); this
//! form keeps the blocks that run together on a few k offsets and is not yet measured.
//!
//! **Turned around** (`SWAP`, [`WgmmaTile::turned`]; opt-in through `tune(turned = 1)`,
//! not yet measured on a GPU): the kernel computes `Cᵀ = Bᵀ · Aᵀ` on the same buffers.
//! It is this generator's kernel for [`GemmIr::transposed`] (A and B exchanged, every
//! matrix in the other layout, `Row` and `Col` parameters exchanged, the output's layout
//! flipped), emitted beside the plain one in the same source under `#if SWAP` with the
//! same symbol and ABI and its `M`, `N` arguments named the other way round; the host
//! contract (acceptance, grid, maps, defines, workspace) is the plain contract of the
//! transposed call ([`Problem::transposed`]), and the config's fields are in the turned
//! product's terms (`bm` columns of C, `bn` rows). What it is for: a product with few rows
//! (32-128) over a wide N puts them on wgmma's N side, so a 64×32 turned tile covers 32
//! rows of C where a plain tile has 64, and a row-major weight (N-contiguous) becomes an
//! M-major A read in 64-column boxes of 128-byte rows, where the plain form's 32-column
//! tiles read 64-byte box rows at half TMA's rate (bench/results/h200-2026-12-04aa1). The
//! planner offers four (32 or 64 rows of C by 64 or 128 columns, K whole, the deepest ring
//! that fits), each a plan class of its own after every plain config.
//!
//! **Split-K** (`KSPLIT` 2 or 4, tiles of at most 128×128): the persistent grid walks
//! `tiles * KSPLIT` items, item `i` being split `i % KSPLIT` of tile `i / KSPLIT` over
//! its share of the k-tiles; the last split of a tile to arrive adds the partials in split
//! order and runs the epilogue ([`splitk`]). On the H200 (bench/results/h200-2026-12-01d,
//! full tune beside cuBLAS) it took 16×4096×11008 from 46.4 to 35.3 µs, 16×4096×4096 from
//! 20.2 to 18.2 and 128×4096×11008 from 41.9 to 38.2 (f16, no epilogue): level with cuBLAS, which those
//! shapes' memory traffic also holds to ~2.5 TB/s (diagnose: load-only is 93 % of the
//! time). **Deep k-tiles** (`BK` of 2 or 4 swizzle rows, 64-row tiles, K-major A and B):
//! longer runs of each B row per stage; they won some 128-row LLM rows, by 1–2 %.
//!
//! Measured on the H200 (bench/wgmma-probe.md, ours and cuBLAS alternating run by run):
//! the default config (128×256×64, 4 stages, 2 consumers, `CG_INFLIGHT` 0, staged
//! epilogue) is at 0.99× cuBLAS at 4096³ (bf16 174.3 vs 172.5 µs, 789 TFLOP/s) and at
//! 1.01–1.03× at 8192³ (power-capped, 1.35–1.6 GHz); without the staged epilogue the
//! same tile is 10% slower. Small problems want small tiles (64×128, one consumer, is
//! 0.91–1.02× cuBLAS at 1000³, 1024×1024×2048 and 128×8192×8192; that probe predates
//! split-K, and there is no stream-K). The fused epilogue (run 6, f16, against cuBLASLt's own
//! RELU_BIAS / GELU_BIAS): bias+relu 1.00–1.05× cuBLASLt (4096×4096×128 18.7 vs 19.7 µs),
//! bias+gelu 0.97–1.03× (4096³ 191.8 vs 191.1). The cp.async producer serves
//! 3000×5000×700 in 121 µs (1.03× cuBLAS, which has no TMA for it either; 8-byte copies;
//! with 4-byte copies, K = 702, 208 µs, 0.6×).
//!

mod config;
mod defines;
mod emit;
mod epilogue;
mod operands;
mod producer;
mod ptx;
mod rules;
pub mod splitk;
mod tiles;

pub use config::{
    bk_for, smem_bytes, WgmmaTile, CLUSTER2D_CLASS, DEEP_RING_CLASS, EPI_PARAM_BYTES, EPI_STAGING_BYTES,
    PINGPONG_CLASS, REUSE_CLASS, SM90_SMEM_LIMIT, STREAMK_CLASS, THREE_CONSUMERS_CLASS, TMA_STORE_CLASS, TURNED_CLASS,
};
pub use defines::DEFINES;

pub use emit::emit_variant;
pub use operands::{cpasync_chunks, out_tma_ok, placeholder_map, tma_box, tma_ok};
pub use tiles::WAVE_FIT_BN;

use super::shape_flags::{row_align, row_class};
use super::{CompileNeeds, KernelFamily, LaunchDims, Machine, PlanCtx, Problem, Resources, Rule, TensorMap, Workspace};
use crate::codegen::Variant;
use crate::ir::{AccMode, DType, GemmIr, Layout};
use crate::space::{TuneSpace, SMEM_SOFT_SHARE};
use crate::target::{Backend, Instr, InstrType, TargetSpec};

/// Whether the wgmma generator can serve `ir`, and why not when it cannot.
pub fn supports(ir: &GemmIr) -> Result<(), String> {
    match (ir.ab_dtype, ir.acc) {
        (DType::F16 | DType::Bf16, _) => Ok(()),
        (DType::F32, AccMode::Tf32 | AccMode::Tf32x3) => {
            if ir.a_layout() == Layout::RowMajor && ir.b_layout() == Layout::ColMajor {
                Ok(())
            } else {
                Err(format!(
                    "wgmma .tf32 reads K-major operands only (it has no transpose), and this product's {} is MN-major (A {}, B {}); mma.sync serves it",
                    if ir.a_layout() == Layout::RowMajor { "B" } else { "A" },
                    ir.a_layout().name(),
                    ir.b_layout().name()
                ))
            }
        }
        (DType::F32, AccMode::F32) => {
            Err("f32 operands with f32 products have no tensor-core instruction; use the SIMT family".into())
        }
    }
}

/// The kernel that `t`'s form computes: `ir`, or for a turned config its transpose
/// ([`GemmIr::transposed`]), in whose terms every other field of the config is.
pub(super) fn form_ir<'a>(t: &WgmmaTile, ir: &'a GemmIr) -> std::borrow::Cow<'a, GemmIr> {
    if t.turned {
        std::borrow::Cow::Owned(ir.transposed())
    } else {
        std::borrow::Cow::Borrowed(ir)
    }
}

/// The call that `t`'s form computes: `p`, or for a turned config its transpose
/// ([`Problem::transposed`]).
fn form_problem(t: &WgmmaTile, p: Problem) -> Problem {
    if t.turned {
        p.transposed()
    } else {
        p
    }
}

/// [`form_ir`] and [`form_problem`] together.
fn form<'a>(t: &WgmmaTile, ir: &'a GemmIr, p: Problem) -> (std::borrow::Cow<'a, GemmIr>, Problem) {
    (form_ir(t, ir), form_problem(t, p))
}

/// The kernel source for `ir` ([`Variant::Full`]).
pub fn emit(ir: &GemmIr) -> String {
    emit_variant(ir, Variant::Full)
}

/// The `wgmma` family.
pub struct Wgmma;

impl KernelFamily for Wgmma {
    type Tile = WgmmaTile;
    const ID: super::FamilyId = super::FamilyId::Wgmma;

    fn instr(&self) -> Instr {
        Instr::Wgmma
    }

    fn serves(&self, target: &TargetSpec, ir: &GemmIr) -> Result<(), String> {
        if target.backend != Backend::Cuda {
            return Err("wgmma is CUDA only".into());
        }
        let ty = InstrType::of(ir.ab_dtype, ir.acc);
        if !target.offers(Instr::Wgmma, ty) {
            return Err(format!("{} has no wgmma for {ty:?} operands", target.name));
        }
        supports(ir)
    }

    /// TMA needs 16-byte row pitches: some shapes (an odd K with K-major operands) go to
    /// the families after this one.
    fn complete(&self) -> bool {
        false
    }

    /// TMA maps need every operand's rows (its contiguous extent) to be a multiple of 16
    /// bytes; the cp.async producer (`CG_CPASYNC`, configs without a cluster) takes rows
    /// of any multiple of 4 bytes. K at least 1. Base addresses are 16-byte aligned, all
    /// that TMA and the 16-byte cp.async need (crossgemm allocates every buffer 256-byte
    /// aligned; views of a caller's CUDA memory are checked to start 16-byte aligned).
    fn accepts(&self, t: &WgmmaTile, ir: &GemmIr, p: Problem) -> Result<(), String> {
        let (ir, p) = form(t, ir, p);
        let ir = &*ir;
        if p.k == 0 {
            return Err("K = 0 has no tile to load".into());
        }
        splitk::accepts(t, p)?;
        if (t.tiles(p.m, p.n) as u128) * t.ksplit.max(1) as u128 * p.batch as u128 > i32::MAX as u128 {
            return Err(format!(
                "{} tiles in each of {} products exceed the persistent grid's 32-bit work-item index",
                t.tiles(p.m, p.n),
                p.batch
            ));
        }
        if t.tma_store && !out_tma_ok(ir, p) {
            return Err(format!(
                "the TMA-store epilogue needs the output's rows on 16-byte boundaries (leading dimension {}, view offset {}, batch stride {} elements of {} bytes)",
                p.c.pitch(p.n),
                p.c.offset,
                p.c.bstride,
                ir.out_dtype.size()
            ));
        }
        if tma_ok(ir, p) {
            return Ok(());
        }
        if ir.acc.tf32_products() {
            return Err(format!(
                "tf32 rows that TMA cannot map (K = {}, a view whose rows do not start on 16-byte boundaries, or a batch) would reach the tensor cores unrounded through the cp.async producer",
                p.k
            ));
        }
        operands::check_rows(ir, p)?;
        if t.cluster() != 1 {
            return Err("rows that do not start on 16-byte boundaries, and batches whose matrices overlap, take the cp.async producer, which has no multicast (a cluster)".into());
        }
        Ok(())
    }

    /// Room for its split-K variants and deeper k-tiles (17 plan classes of their own:
    /// `splitk::with_splits`, `k_tiles`), which the runtime refuses at the large shapes a
    /// full tune times (their workspace would be too large), so a large tune still times
    /// about 50; for the ping-pong schedule of the 6 block tiles it serves (64×64 to
    /// 64×256, 128×64, 128×128); and, where `tune(streamk = 1)` asks for them, for the
    /// stream-K variant of each cooperative block tile (its plan classes among the
    /// configs the rules pass: 13 for K-major 16-bit operands on the H200, 10 for
    /// MN-major), so that asking for them takes no config away from the plan.
    ///
    /// And for the whole-tile classes of the tiles planned apart (`tiles::apart`), so
    /// that they take nothing away from the tiles a plan kept before them.
    fn plan_extra(&self, cx: &PlanCtx, space: &TuneSpace) -> usize {
        let streamk_asked = space.pick("streamk", &[0]).contains(&1);
        let turned_asked = space.pick("turned", &[0]).contains(&1);
        let reuse_asked = space.pick("reuse", &[0]).contains(&1);
        let extra: std::collections::HashSet<_> = self
            .space(cx, space)
            .into_iter()
            .filter(|t| {
                (t.streamk && streamk_asked)
                    || (t.turned && turned_asked)
                    || (t.reuse && reuse_asked)
                    || (!t.streamk && !t.turned && !t.reuse && (tiles::apart(t) || t.cluster_n > 1 || t.tma_store))
            })
            .filter(|t| super::first_broken_rule(self, cx, t).is_none())
            .map(|t| (self.block_mn(&t), self.plan_class(&t)))
            .collect();
        16 + 6 + extra.len()
    }

    fn space(&self, cx: &PlanCtx, space: &TuneSpace) -> Vec<WgmmaTile> {
        tiles::space(cx, space)
    }

    fn rules(&self) -> &'static [Rule<WgmmaTile>] {
        &rules::RULES
    }

    /// Arithmetic intensity of the block tile, with what the H200 runs showed
    /// (bench/wgmma-probe.md): two consumers beat one on tiles of 128 rows or more; a
    /// deeper ring helps small tiles (64x128 was best at 8 stages) and 3 stages are a
    /// little slower; the B multicast of a 2-block cluster and GROUP_M 16 are within 1%,
    /// so they rank below every other tile's best and the tuner tries them last.
    fn score(&self, cx: &PlanCtx, t: &WgmmaTile) -> f64 {
        let (bm, bn) = (t.bm as f64, t.bn as f64);
        let mut s = bm * bn / (bm + bn);
        if t.bm >= 128 && t.consumers == 1 {
            s *= 0.85;
        }
        s *= if t.stages <= 3 {
            0.97
        } else {
            1.0 + 0.005 * t.stages.min(8) as f64
        };
        if t.cluster_m == 2 {
            s *= 0.97;
        }
        // The 2x2 clusters (both operands multicast) are a plan class of their own per
        // block tile, with room made for it (`plan_extra`); the rest rank after every
        // other config, so that they take none of those out of a plan.
        if t.cluster_n == 2 {
            s *= 0.25;
        }
        if t.group_m != 8 {
            s *= 0.985;
        }
        // Split-K only pays where the output tiles leave SMs idle: the estimate brings
        // these first for such shapes; for the rest they rank last.
        if t.ksplit > 1 {
            s *= 0.5;
        }
        // The wave-fitting widths are for the shapes whose last wave they fill, where the
        // estimate brings them forward; in the plan each keeps its best config (a block
        // tile of its own, with room made for it) and the rest rank after the usual
        // widths' configs, so that they take none of those out of a plan.
        if tiles::apart(t) {
            s *= 0.25;
        }
        // Stream-K is opt-in and unproven (its classic form lost on an H100): each
        // of its block tiles keeps its best config (a plan class of its own, with room
        // made for it), and the rest rank after every data-parallel config, so that asking
        // for it takes none of those away.
        if t.streamk {
            s *= 0.25;
        }
        // Deeper k-tiles are for decode-size problems too (fewer stages in the same
        // shared memory): after the one-row k-tile of the same tile.
        if t.bk > bk_for(cx.dtype) {
            s *= 0.99;
        }
        if t.smem_bytes(cx.dtype) as f64 > SMEM_SOFT_SHARE * cx.target.smem_per_block_optin as f64 {
            s *= 0.999;
        }
        // The TMA-store twin of a tile right after it (a plan class of its own).
        if t.tma_store {
            s *= 0.999;
        }
        // The turned form is asked for (`tune(turned = 1)`) and unmeasured: each of its
        // block tiles keeps its config (a plan class of its own, with room made for it)
        // after every plain config.
        if t.turned {
            s *= 0.25;
        }
        // Operand reuse is asked for (`tune(reuse = 1)`) and won one shape of five on an
        // H100 (h100-2026-12-06ao2..ao5): likewise.
        if t.reuse {
            s *= 0.25;
        }
        s
    }

    fn resources(&self, t: &WgmmaTile, dtype: DType) -> Resources {
        Resources {
            threads: t.threads(),
            smem_bytes: t.smem_bytes(dtype),
            est_regs: t.est_regs(),
            // Each split streams its own share of K through the ring.
            ring_k: t.bk * t.stages * t.ksplit.max(1),
        }
    }

    fn turned(&self, t: &WgmmaTile) -> bool {
        t.turned
    }

    /// In C's terms: a turned tile's `bm` rows of `Cᵀ` are columns of C.
    fn block_mn(&self, t: &WgmmaTile) -> (u32, u32) {
        if t.turned {
            (t.bn, t.bm)
        } else {
            (t.bm, t.bn)
        }
    }

    fn k_split(&self, t: &WgmmaTile) -> u32 {
        t.ksplit.max(1)
    }

    /// Split-K, k-tiles of several swizzle rows and the ping-pong schedule: each its own
    /// entry in the plan (the second value is the k-tile, plus [`PINGPONG_CLASS`] for
    /// ping-pong), so that the best ping-pong config of a block tile is kept beside the
    /// best cooperative one.
    /// Stream-K splits the partial last wave's units by K over the blocks that would idle.
    fn balances_waves(&self, t: &WgmmaTile) -> bool {
        t.streamk
    }

    /// Three consumers in ping-pong pay where a tile's epilogue outlasts its mainloop, so
    /// that two storing beat one: on the H200 (bench/results/h200-2026-12-03p5) they won
    /// the fused rows at K = 128 by 7-8% and lost elsewhere (plain 4096x4096x128 by 5%,
    /// K of 200-330 by 0-10%). Estimated one band of [`crate::estimate::by_estimate`]
    /// (10%) ahead of the same tile's roofline up to K = 128, where short lists should
    /// hold them, and one behind past it, where they would displace the tiles that win.
    ///
    /// Clusters share their operand loads by multicast, which is what rows starting
    /// mid-sector want: TMA reads those from L2 at 40-46% less than aligned
    /// ones, near 5-6 TB/s for the chip (h200-2026-12-03u1, -u5), so a tile's time follows
    /// the box rows it asks of L2. On K + 8 views of 2048x11008x4096 the 128x256 tile took
    /// 394 µs alone, 281 in 2-block clusters and 267.5 in 2x2 (packed: 262-267 all three,
    /// h200-2026-12-03u8): clusters first there. On sector-aligned rows the 2x2 clusters
    /// lost 12-17% (-02y, -02z): partly the 12 SMs that the 30 clusters of 4 running at
    /// once leave idle, which the estimate's waves count (`resident_clusters` in
    /// targets.toml), partly the multicast itself (7.5% at 1000³, whose 16 clusters all
    /// run at once); they go behind.
    fn estimate_factor(&self, t: &WgmmaTile, ir: &GemmIr, p: Problem) -> f64 {
        let (ir, p) = form(t, ir, p);
        let ir = &*ir;
        let schedule = match (t.pingpong && t.consumers == 3, p.k <= 128) {
            (true, true) => 1.0 / 1.1,
            (true, false) => 1.1,
            _ => 1.0,
        };
        let mid_sector = row_class(row_align(ir, p)) == 16 && tma_ok(ir, p);
        let cluster = match (mid_sector, t.cluster()) {
            (true, 1) => 1.0,
            (true, 2) => 0.75,
            (true, _) => 0.7,
            (false, 4) => 1.15,
            (false, _) => 1.0,
        };
        schedule * cluster
    }

    /// On rows that start mid-sector, a tile of one block takes its 2-block cluster twin
    /// (B multicast to the two blocks of a column), whose L2 reads of B are half: on the
    /// H200 at K + 8 views (8208-byte rows) the 128x256 tile ran 4096³ in 191.5 µs as
    /// twins against 282.4 alone (packed 181.1), 2048x11008x4096 in 283 against 391, 8192³
    /// in 1682 against 2383 (bench/results/h200-2026-12-07aw7, aw10). The table's and the
    /// planner's first picks are sector-aligned rows' (their winners take one block), and
    /// a first call on such views ran at 0.63-0.75x cuBLAS (aw7: below a full wave the
    /// twins lost, which [`crate::estimate::for_rows`] leaves to the one block).
    fn for_rows(&self, t: &WgmmaTile, ir: &GemmIr, p: Problem) -> Option<WgmmaTile> {
        let (fir, fp) = form(t, ir, p);
        let mid_sector = row_class(row_align(&fir, fp)) == 16 && tma_ok(&fir, fp);
        (mid_sector && t.cluster() == 1).then_some(WgmmaTile { cluster_m: 2, ..*t })
    }

    fn cluster_blocks(&self, t: &WgmmaTile) -> u32 {
        t.cluster()
    }

    fn plan_class(&self, t: &WgmmaTile) -> (u32, u32) {
        let schedule = if t.pingpong { PINGPONG_CLASS } else { 0 }
            + if t.streamk { STREAMK_CLASS } else { 0 }
            + if t.cluster_n > 1 { CLUSTER2D_CLASS } else { 0 }
            + if t.tma_store { TMA_STORE_CLASS } else { 0 }
            + if t.consumers == 3 { THREE_CONSUMERS_CLASS } else { 0 }
            + if tiles::deep_ring(t) { DEEP_RING_CLASS } else { 0 }
            + if t.turned { TURNED_CLASS } else { 0 }
            + if t.reuse { REUSE_CLASS } else { 0 };
        (t.ksplit.max(1), t.bk + schedule)
    }

    /// Split-K and stream-K configs reduce through device scratch memory
    /// ([`splitk::workspace`]).
    fn workspace(&self, t: &WgmmaTile, _ir: &GemmIr, p: Problem, machine: Machine) -> Option<Workspace> {
        splitk::workspace(t, form_problem(t, p), machine)
    }

    /// Persistent: at most one block (cluster) per multiprocessor ([`WgmmaTile::grid`]).
    fn launch(&self, t: &WgmmaTile, ir: &GemmIr, p: Problem, machine: Machine) -> LaunchDims {
        let p = form_problem(t, p);
        LaunchDims {
            grid: [t.grid(p.m, p.n, p.batch, machine.units), 1, 1],
            block: [t.threads(), 1, 1],
            smem_bytes: t.smem_bytes(ir.ab_dtype),
            persistent: Some(t.cluster()),
        }
    }

    /// A's and B's maps, as the module docs lay out: K-major operands in one box of
    /// `{BK, rows}` per stage, MN-major ones in `{64, BK}` boxes; 128-byte swizzle. For a
    /// call that the cp.async producer serves ([`cpasync_chunks`]) the kernel reads no
    /// map: both are placeholders over the operand's first 16 bytes ([`placeholder_map`]).
    fn tensor_maps(&self, t: &WgmmaTile, ir: &GemmIr, p: Problem) -> Vec<TensorMap> {
        let (ir, p) = form(t, ir, p);
        operands::maps(t, &ir, p)
    }

    /// The tile's defines; for a call whose rows TMA cannot map, `CG_CPASYNC` and the
    /// copy sizes of [`cpasync_chunks`]; `CG_A_TMA3`/`CG_B_TMA3` for rank-3 (batched) maps.
    fn defines(&self, t: &WgmmaTile, ir: &GemmIr, _backend: Backend, p: Problem) -> Vec<(&'static str, u32)> {
        let (ir, p) = form(t, ir, p);
        let ir = &*ir;
        let mut d = t.defines();
        if let Some([a, b]) = cpasync_chunks(ir, p) {
            d.extend([("CG_CPASYNC", 1), ("CG_CPA_A", a), ("CG_CPA_B", b)]);
        }
        let [a3, b3] = operands::rank3(ir, p);
        let c3 = t.tma_store && p.batch > 1;
        d.extend(
            [
                ("CG_A_TMA3", a3 as u32),
                ("CG_B_TMA3", b3 as u32),
                ("CG_C_TMA3", c3 as u32),
            ]
            .into_iter()
            .filter(|&(_, v)| v == 1),
        );
        d
    }

    /// wgmma and setmaxnreg exist on `sm_90a` only.
    fn compile_needs(&self, _t: &WgmmaTile) -> CompileNeeds {
        CompileNeeds { arch_suffix: "a" }
    }

    fn emit(&self, ir: &GemmIr, _backend: Backend, variant: Variant) -> String {
        emit_variant(ir, variant)
    }

    /// One stage more or less, the other consumer count, the other cluster size and the
    /// other `CG_INFLIGHT`, on the same block tile.
    fn neighbours(&self, t: &WgmmaTile) -> Vec<(String, WgmmaTile)> {
        let mut v = Vec::new();
        for s in [t.stages.saturating_sub(1), t.stages + 1] {
            if s >= 2 {
                v.push((format!("stages {s}"), WgmmaTile { stages: s, ..*t }));
            }
        }
        let c = 3 - t.consumers.clamp(1, 2);
        v.push((
            format!("consumers {c}"),
            WgmmaTile {
                consumers: c,
                inflight: c == 1,
                pingpong: false,
                ..*t
            },
        ));
        if t.consumers == 2 {
            v.push((
                format!("pingpong {}", u32::from(!t.pingpong)),
                WgmmaTile {
                    pingpong: !t.pingpong,
                    ..*t
                },
            ));
        }
        let x = 3 - t.cluster_m.clamp(1, 2);
        v.push((format!("cluster {x}"), WgmmaTile { cluster_m: x, ..*t }));
        if t.ksplit == 1 && !t.streamk {
            let y = 3 - t.cluster_n.clamp(1, 2);
            v.push((format!("cluster_n {y}"), WgmmaTile { cluster_n: y, ..*t }));
        }
        v.push((
            format!("inflight {}", u32::from(!t.inflight)),
            WgmmaTile {
                inflight: !t.inflight,
                ..*t
            },
        ));
        for k in [t.ksplit / 2, t.ksplit * 2] {
            if (1..=splitk::MAX_KSPLIT).contains(&k) {
                v.push((format!("ksplit {k}"), WgmmaTile { ksplit: k, ..*t }));
            }
        }
        // The other store path, with the stages that fit (16-bit operands have k-tiles
        // of 64 elements).
        let dtype = if t.bk.is_multiple_of(64) {
            DType::F16
        } else {
            DType::F32
        };
        let twin = t.with_tma_store(!t.tma_store, dtype);
        v.push((
            format!("tmastore {} stages {}", u32::from(twin.tma_store), twin.stages),
            twin,
        ));
        v
    }

    fn group_m(&self, t: &WgmmaTile) -> u32 {
        t.group_m
    }

    fn with_group_m(&self, t: &WgmmaTile, group_m: u32) -> WgmmaTile {
        WgmmaTile { group_m, ..*t }
    }

    fn describe(&self, t: &WgmmaTile) -> String {
        format!(
            "wgmma {}x{}x{} stages {} consumers {} cluster {} inflight {} group {}{}{}{}{}{}{}{}",
            t.bm,
            t.bn,
            t.bk,
            t.stages,
            t.consumers,
            if t.cluster_n > 1 {
                format!("{}x{}", t.cluster_m, t.cluster_n)
            } else {
                t.cluster_m.to_string()
            },
            u32::from(t.inflight),
            t.group_m,
            if t.epi_smem { "" } else { " direct-stores" },
            if t.pingpong { " pingpong" } else { "" },
            if t.streamk { " streamk" } else { "" },
            if t.tma_store { " tmastore" } else { "" },
            if t.turned { " turned" } else { "" },
            if t.reuse { " reuse" } else { "" },
            if t.ksplit > 1 {
                format!(" ksplit {}", t.ksplit)
            } else {
                String::new()
            }
        )
    }
}
