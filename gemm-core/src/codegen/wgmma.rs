//! Hopper (sm_90a) GEMM generator: `wgmma.mma_async` on shared-memory descriptors, fed
//! by TMA (`cp.async.bulk.tensor.2d`) through a `STAGES`-deep ring of mbarriers, one
//! producer warpgroup and one or two consumer warpgroups (warp specialisation with
//! `setmaxnreg`), persistent over the output tiles in grouped (`GROUP_M`) order.
//!
//! The source is header-free CUDA C for NVRTC (`--gpu-architecture=sm_90a`); tile sizes
//! stay preprocessor constants, so one source serves every configuration
//! ([`WgmmaConfig::defines`]).
//!
//! # What it serves ([`supports`])
//!
//! - Operands: f16 or bf16 (`ir.ab_dtype`), f32 accumulation. **Unsupported:** f32
//!   operands (neither full f32, which has no tensor-core instruction, nor the tf32
//!   mode `AccMode::Tf32`, which would need `wgmma ... .tf32` with K-major operands
//!   only and an 8-wide k-step; route both to the mma.sync/SIMT families).
//! - Layouts: every combination. A K-major (row-major A) or M-major (column-major A,
//!   wgmma `imm-trans-a` = 1); B K-major (column-major B, the `nn.Linear` weight case)
//!   or N-major (row-major B, `imm-trans-b` = 1). MN-major operands need their tile
//!   extent to be a multiple of 64 (`BM` for A, `BN` for B; a static_assert says so).
//! - Output: any `ir.out_dtype` and `ir.out_layout`, through the fused epilogue
//!   `cg_epilogue(acc, i, j, M, N, p..)` of the prelude (parameters read element by
//!   element). Each consumer warp stores 16-row × 128-byte chunks: a chunk wholly inside
//!   a row-major output whose rows are 16-byte multiples (and `out` 16-byte aligned,
//!   checked at run time) goes through the warp's shared-memory staging buffer and out
//!   as 16-byte stores (`CG_EPI_SMEM`, the default); other interior chunks store two
//!   adjacent elements at a time without checks; chunks on the M or N edge store element
//!   by element with bounds checks. Column-major outputs store elements.
//! - Shapes: any `M, N, K >= 1` whose operand rows (the contiguous dimension: K for
//!   K-major, M or N for MN-major) are a multiple of 16 bytes (`K % 8 == 0` for K-major
//!   16-bit operands) with 16-byte aligned bases: what `cuTensorMapEncodeTiled`
//!   accepts. TMA zero-fills every out-of-range element of a box, so M, N and K tails
//!   (K = 8: one partial k-tile) need no special load code; the stores check bounds.
//!
//! # Kernel ABI
//!
//! ```c
//! extern "C" __global__ void __launch_bounds__(CG_THREADS, 1)
//! SYMBOL(const __grid_constant__ CgTmaMap a_map, const __grid_constant__ CgTmaMap b_map,
//!        int M, int N, int K, OUT* out, p0, p1, ...);
//! ```
//!
//! `SYMBOL` is [`GemmIr::symbol`]; `CgTmaMap` is `struct __align__(64) CgTmaMap {
//! unsigned long long v[16]; }` (128 bytes, the driver's `CUtensorMap` bit for bit);
//! after the two maps comes exactly the ABI of the other CUDA kernels (the prelude's
//! `kernel_params`):
//! `out` and every signature parameter `p<i>`, the A and B parameters included (the
//! kernel never reads them: it loads A and B through the maps; the runtime still
//! passes their pointers so that the argument list is the same for every family).
//!
//! # Launch
//!
//! - Block: `CG_THREADS = 128 * (CONSUMERS + 1)` threads (1 producer warpgroup, then
//!   the consumers): [`WgmmaConfig::threads`].
//! - Dynamic shared memory: [`WgmmaConfig::smem_bytes`], i.e. [`smem_bytes`]`(BM, BN,
//!   BK, STAGES, 2)` = `1024 + STAGES * (BM + BN) * BK * 2 + 16 * STAGES` (1024 bytes of
//!   slack to align the base to 1024, the ring of A and B tiles, then one `full` and one
//!   `empty` 8-byte mbarrier per stage), plus, when `CG_EPI_SMEM` is 1 (the default),
//!   `CONSUMERS * EPI_STAGING_BYTES` = `CONSUMERS * 9216` for the epilogue's staging
//!   buffers. 128×256×64 with 4 stages and 2 consumers: 197696 + 18432 = 216128 bytes.
//!   Above 48 KiB the runtime must raise `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`
//!   first; the limit on the H200 is 232448 bytes (a static_assert in the source enforces
//!   it).
//! - Grid: persistent, `grid = (CLUSTER_M * min(tiles, sm_count / CLUSTER_M), 1, 1)`
//!   ([`WgmmaConfig::grid`]) with `tiles = ceil(M / (BM * CLUSTER_M)) * ceil(N / BN)`;
//!   with `CLUSTER_M == 1` that is `min(ceil(M / BM) * ceil(N / BN), sm_count)`. A plain
//!   `cuLaunchKernel` works for both: `CLUSTER_M == 2` kernels carry
//!   `__cluster_dims__(2, 1, 1)` (the grid must then be even, as the formula makes it).
//!   Cluster `c` (block `c` when `CLUSTER_M == 1`) takes tiles `t = c, c + clusters, ...`
//!   in `GROUP_M` order over the `grid_m = ceil(M / (BM * CLUSTER_M))` by `grid_n =
//!   ceil(N / BN)` work grid: tile `t` lies in group `g = t / (GROUP_M * grid_n)`, whose
//!   `rows = min(GROUP_M, grid_m - g * GROUP_M)` rows sweep the columns together:
//!   `tm = g * GROUP_M + (t % (GROUP_M * grid_n)) % rows`, `tn = (t % (GROUP_M * grid_n)) / rows`;
//!   block `rank` of the cluster computes output tile row `tm * CLUSTER_M + rank`. Any
//!   grid of at least one cluster is correct.
//!
//! # Tensor maps (how the runtime encodes `a_map` and `b_map`)
//!
//! Both with `cuTensorMapEncodeTiled`, rank 2, element type
//! `CU_TENSOR_MAP_DATA_TYPE_FLOAT16` (f16) or `CU_TENSOR_MAP_DATA_TYPE_BFLOAT16` (bf16),
//! `globalAddress` = the operand's base pointer (16-byte aligned), `elementStrides =
//! {1, 1}`, `CU_TENSOR_MAP_INTERLEAVE_NONE`, `CU_TENSOR_MAP_SWIZZLE_128B`,
//! `CU_TENSOR_MAP_L2_PROMOTION_L2_256B` (any promotion is correct; this one is what the
//! probe measured) and `CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE` (out-of-range elements read
//! as zeros: the kernel relies on it for every tail). Dimension 0 is the contiguous one;
//! `globalStrides` has one entry, the byte pitch of dimension 1 (a multiple of 16).
//!
//! | operand | IR layout | `globalDim` | `globalStrides` (bytes) | `boxDim` |
//! |---|---|---|---|---|
//! | A K-major | `a_layout() == RowMajor` (M×K, K contiguous) | `{K, M}` | `{K * 2}` | `{BK, BM}` = `{64, BM}` |
//! | A M-major | `a_layout() == ColMajor` (K×M storage) | `{M, K}` | `{M * 2}` | `{64, BK}` = `{64, 64}` |
//! | B K-major | `b_layout() == ColMajor` (N×K storage) | `{K, N}` | `{K * 2}` | `{BK, BN}` = `{64, BN}` |
//! | B N-major | `b_layout() == RowMajor` (K×N, N contiguous) | `{N, K}` | `{N * 2}` | `{64, BK}` = `{64, 64}` |
//!
//! K-major tiles arrive in one box per stage; MN-major tiles in `BM / 64` (or `BN / 64`)
//! boxes of 64 (m or n) × 64 (k), 8 KiB each, placed one after the other. The maps do
//! not depend on `CLUSTER_M` (with 2, block 0 of a pair issues the B boxes with
//! `.multicast::cluster` to both blocks).
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
//! and lane 0 of each consumer warp arrives on the stage's `empty` barrier (count `4 *
//! CONSUMERS * CLUSTER_M`). The first wgmma of a tile uses `scale-d = 0`, so accumulators
//! are never zeroed by hand. After the last k-tile the consumers store the tile (see
//! `CG_EPI_SMEM`) while the producer already fills the ring with the next tile's stages.
//!
//! Measured on the H200 (bench/wgmma-probe.md, ours and cuBLAS alternating run by run):
//! the default config (128×256×64, 4 stages, 2 consumers, `CG_INFLIGHT` 0, staged
//! epilogue) is at 0.99× cuBLAS at 4096³ (bf16 174.3 vs 172.5 µs, 789 TFLOP/s) and at
//! 1.01–1.03× at 8192³ (power-capped, 1.35–1.6 GHz); without the staged epilogue the
//! same tile is 10% slower. Small problems want small tiles (64×128, one consumer, is
//! 0.91–1.02× cuBLAS at 1000³, 1024×1024×2048 and 128×8192×8192); this kernel has no
//! split-K or stream-K for them.
//!

use super::prelude::{epilogue_args, epilogue_fn, helpers, kernel_params, store_out, Dialect};
use super::Variant;
use crate::ir::{AccMode, DType, GemmIr, Layout};
use std::fmt::Write;

/// Every preprocessor constant the source reads, with its meaning, default and limits.
/// The source defines each under `#ifndef`, so a compile without `-D` flags builds the
/// default configuration ([`WgmmaConfig::default`]).
pub const DEFINES: &[(&str, &str)] = &[
    (
        "BM",
        "CTA tile rows; default 128. (BM / CONSUMERS) must be a multiple of 64, BM <= 256.",
    ),
    (
        "BN",
        "CTA tile columns = wgmma N; default 256. A multiple of 16 in [16, 256]; a multiple of 64 when B is N-major.",
    ),
    (
        "BK",
        "k-tile depth; default 64 and only 64 (one 128-byte swizzle row of 16-bit elements).",
    ),
    (
        "STAGES",
        "depth of the TMA ring; default 4. At least 2; the shared memory of smem_bytes() must fit 232448 bytes.",
    ),
    (
        "CONSUMERS",
        "consumer warpgroups, 1 or 2; default 2. Each owns BM / CONSUMERS rows of the tile (3 would leave 128 registers a thread at launch, too few for an m64n256 wgmma).",
    ),
    (
        "GROUP_M",
        "tile rows that sweep the columns together (grouped raster for L2 reuse); default 8, at least 1.",
    ),
    (
        "CLUSTER_M",
        "blocks per cluster along M, 1 or 2; default 1. With 2, the kernel is declared __cluster_dims__(2, 1, 1), block 0 of each pair loads the shared B tile once and multicasts it to both, and the grid must be a multiple of 2.",
    ),
    (
        "CG_PRODUCER_REGS",
        "setmaxnreg.dec value of the producer warpgroup when CONSUMERS > 1; default 24 (multiple of 8 in [24, 256]).",
    ),
    (
        "CG_CONSUMER_REGS",
        "setmaxnreg.inc value of each consumer warpgroup when CONSUMERS > 1; default 240. 128 * (producer + 2 * consumer) must stay <= 65536.",
    ),
    (
        "CG_INFLIGHT",
        "1: keep one wgmma group in flight across k-tiles (a stage is released one k-tile late); 0: wait for each k-tile's group and release its stage at once (the other consumer keeps the tensor cores busy meanwhile); default 1 with one consumer, 0 with two.",
    ),
    (
        "CG_EPI_SMEM",
        "1: row-major outputs leave through a per-warp shared-memory staging buffer as 16-byte stores (CONSUMERS * 9216 more bytes of shared memory: EPI_STAGING_BYTES per consumer); 0: 2-element stores straight from registers; default 1.",
    ),
    (
        "CG_WATCHDOG",
        "debug only: when non-zero, every mbarrier wait traps after about 2^26 polls instead of hanging; default 0.",
    ),
];

/// One tile configuration of the wgmma kernel: the values of its `-D` constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WgmmaConfig {
    /// CTA tile rows.
    pub bm: u32,
    /// CTA tile columns (the wgmma N).
    pub bn: u32,
    /// k-tile depth (64).
    pub bk: u32,
    /// TMA ring depth.
    pub stages: u32,
    /// Consumer warpgroups (1 or 2).
    pub consumers: u32,
    /// Grouped raster height.
    pub group_m: u32,
    /// Blocks per cluster along M (1 or 2; 2 multicasts B).
    pub cluster_m: u32,
    /// `CG_INFLIGHT`: one wgmma group kept in flight across k-tiles.
    pub inflight: bool,
    /// `CG_EPI_SMEM`: the staged, 16-byte-store epilogue.
    pub epi_smem: bool,
}

impl Default for WgmmaConfig {
    /// The source's own defaults: 128×256×64, 4 stages, 2 consumers
    /// ([`WgmmaConfig::new`]).
    fn default() -> Self {
        WgmmaConfig::new(128, 256, 4, 2)
    }
}

/// The opt-in shared memory limit of one block on sm_90 (H100, H200).
pub const SM90_SMEM_LIMIT: u32 = 232_448;

impl WgmmaConfig {
    /// A `bm × bn × 64` tile with `stages` and `consumers`, and the source's defaults for
    /// the rest: GROUP_M 8, no cluster, `CG_INFLIGHT` on only with one consumer, the
    /// staged epilogue.
    pub fn new(bm: u32, bn: u32, stages: u32, consumers: u32) -> WgmmaConfig {
        WgmmaConfig {
            bm,
            bn,
            bk: 64,
            stages,
            consumers,
            group_m: 8,
            cluster_m: 1,
            inflight: consumers == 1,
            epi_smem: true,
        }
    }

    /// The `-D` definitions for NVRTC, in a fixed order.
    pub fn defines(&self) -> Vec<(&'static str, u32)> {
        vec![
            ("BM", self.bm),
            ("BN", self.bn),
            ("BK", self.bk),
            ("STAGES", self.stages),
            ("CONSUMERS", self.consumers),
            ("GROUP_M", self.group_m),
            ("CLUSTER_M", self.cluster_m),
            ("CG_INFLIGHT", self.inflight as u32),
            ("CG_EPI_SMEM", self.epi_smem as u32),
        ]
    }

    /// Threads per block: `128 * (CONSUMERS + 1)`.
    pub fn threads(&self) -> u32 {
        128 * (self.consumers + 1)
    }

    /// Dynamic shared memory bytes for `dtype` operands: [`smem_bytes`] plus, with
    /// `epi_smem`, [`EPI_STAGING_BYTES`] per consumer warpgroup.
    pub fn smem_bytes(&self, dtype: DType) -> u32 {
        smem_bytes(self.bm, self.bn, self.bk, self.stages, dtype.size())
            + if self.epi_smem {
                self.consumers * EPI_STAGING_BYTES
            } else {
                0
            }
    }

    /// Work items of an `m × n` product: clusters of `CLUSTER_M` vertically adjacent
    /// output tiles, `ceil(m / (BM * CLUSTER_M)) * ceil(n / BN)` of them (plain tiles
    /// when `CLUSTER_M == 1`).
    pub fn tiles(&self, m: usize, n: usize) -> usize {
        m.div_ceil((self.bm * self.cluster_m) as usize) * n.div_ceil(self.bn as usize)
    }

    /// The persistent grid (`grid.x`; y = z = 1): `CLUSTER_M * min(tiles, sm_count /
    /// CLUSTER_M)` blocks, at least `CLUSTER_M`.
    pub fn grid(&self, m: usize, n: usize, sm_count: u32) -> u32 {
        let cm = self.cluster_m.max(1);
        let clusters = self.tiles(m, n).min((sm_count / cm) as usize).max(1) as u32;
        clusters * cm
    }

    /// Whether the config is one the source accepts for `ir` (the same rules as its
    /// static_asserts), with the reason when not.
    pub fn validate(&self, ir: &GemmIr) -> Result<(), String> {
        supports(ir)?;
        let c = self;
        if c.bk != 64 {
            return Err(format!(
                "BK = {} (only 64, one 128-byte swizzle row of 16-bit elements)",
                c.bk
            ));
        }
        if !(c.consumers == 1 || c.consumers == 2) {
            return Err(format!("CONSUMERS = {} (1 or 2)", c.consumers));
        }
        if c.bm == 0 || c.bm > 256 || c.bm % (64 * c.consumers) != 0 {
            return Err(format!(
                "BM = {} (BM / CONSUMERS must be a multiple of 64, BM <= 256)",
                c.bm
            ));
        }
        if c.bn < 16 || c.bn > 256 || c.bn % 16 != 0 {
            return Err(format!("BN = {} (a multiple of 16 in [16, 256])", c.bn));
        }
        if ir.b_layout() == Layout::RowMajor && c.bn % 64 != 0 {
            return Err(format!("BN = {} (N-major B needs a multiple of 64)", c.bn));
        }
        let acc_regs = (c.bm / c.consumers / 64) * c.bn / 2;
        if acc_regs > 128 {
            return Err(format!(
                "{acc_regs} accumulator registers per thread (at most 128: BM / CONSUMERS / 64 * BN / 2)"
            ));
        }
        if c.stages < 2 {
            return Err(format!("STAGES = {} (at least 2)", c.stages));
        }
        if c.group_m < 1 {
            return Err("GROUP_M = 0 (at least 1)".into());
        }
        if !(c.cluster_m == 1 || c.cluster_m == 2) {
            return Err(format!("CLUSTER_M = {} (1 or 2)", c.cluster_m));
        }
        let smem = c.smem_bytes(ir.ab_dtype);
        if smem > SM90_SMEM_LIMIT {
            return Err(format!("{smem} bytes of shared memory (limit {SM90_SMEM_LIMIT})"));
        }
        Ok(())
    }
}

/// Shared memory of the `CG_EPI_SMEM` staging buffers of one consumer warpgroup: 4
/// warps of 16 rows of 144 bytes.
pub const EPI_STAGING_BYTES: u32 = 4 * 16 * 144;

/// Dynamic shared memory of one block with `CG_EPI_SMEM = 0`, in bytes: 1024 bytes of alignment slack (the
/// 128-byte swizzle needs a 1024-byte aligned base, and the dynamic window's start is
/// only 16-byte aligned by contract), `stages` A tiles of `bm × bk` and B tiles of `bn
/// × bk` elements of `dtype_size` bytes, and `2 * stages` mbarriers of 8 bytes.
pub fn smem_bytes(bm: u32, bn: u32, bk: u32, stages: u32, dtype_size: u32) -> u32 {
    1024 + stages * (bm + bn) * bk * dtype_size + 16 * stages
}

/// The TMA box (`boxDim`, dimension 0 first) of an operand tile: `{64, rows}` for a
/// K-major operand (`rows` = BM for A, BN for B), `{64, BK}` for an MN-major one (the
/// tile then arrives as `rows / 64` boxes).
pub fn tma_box(k_major: bool, rows: u32, bk: u32) -> [u32; 2] {
    if k_major {
        [bk, rows]
    } else {
        [64, bk]
    }
}

/// Whether the wgmma generator can serve `ir`, and why not when it cannot.
pub fn supports(ir: &GemmIr) -> Result<(), String> {
    match (ir.ab_dtype, ir.acc) {
        (DType::F16 | DType::Bf16, _) => Ok(()),
        (DType::F32, AccMode::Tf32) => Err(
            "tf32 operands are not generated by the wgmma family yet (wgmma .tf32 needs K-major operands and k8 steps); use mma.sync"
                .into(),
        ),
        (DType::F32, AccMode::F32) => {
            Err("f32 operands with f32 products have no tensor-core instruction; use the SIMT family".into())
        }
    }
}

/// The kernel source for `ir` ([`Variant::Full`]).
pub fn emit(ir: &GemmIr) -> String {
    emit_variant(ir, Variant::Full)
}

/// The source of diagnosis variant `variant` (same symbol, ABI, defines and launch):
/// - `LoadOnly`: no wgmma; consumers wait for each stage and release it; the
///   accumulators stay zero and the epilogue and stores run.
/// - `NoEpilogue`: stores the raw accumulator converted to the output type.
/// - `ComputeOnly`: no TMA loads; the producer arrives on `full` without a byte count,
///   so the ring, barriers and wgmma (on whatever shared memory holds) all run.
///
/// Panics if [`supports`] rejects `ir`.
pub fn emit_variant(ir: &GemmIr, variant: Variant) -> String {
    if let Err(why) = supports(ir) {
        panic!("wgmma::emit_variant: {why}");
    }
    let a_kmajor = ir.a_layout() == Layout::RowMajor;
    let b_kmajor = ir.b_layout() == Layout::ColMajor;
    let ty = match ir.ab_dtype {
        DType::F16 => "f16",
        _ => "bf16",
    };
    let mut s = variant.marker();
    let _ = writeln!(
        s,
        "/* crossgemm: {} = {} (wgmma sm_90a {ty}, A {} {}, B {} {}, out {} {}) */",
        ir.symbol(),
        ir.epilogue_text(),
        ir.a_layout().name(),
        if a_kmajor { "K-major" } else { "M-major" },
        ir.b_layout().name(),
        if b_kmajor { "K-major" } else { "N-major" },
        ir.out_dtype.name(),
        ir.out_layout.name(),
    );
    s.push_str(&helpers(Dialect::Cuda));
    if variant != Variant::NoEpilogue {
        s.push_str(&epilogue_fn(ir, Dialect::Cuda));
    }
    s.push_str(CONFIG);
    let _ = writeln!(s, "#define CG_A_KMAJOR {}", a_kmajor as u32);
    let _ = writeln!(s, "#define CG_B_KMAJOR {}", b_kmajor as u32);
    s.push_str(CHECKS);
    s.push_str(PTX);
    s.push_str(&wgmma_fns(ty, !a_kmajor, !b_kmajor));
    s.push_str(&store_fns(ir));
    let subs = [
        ("SYM", ir.symbol()),
        ("PARAMS", kernel_params(ir, Dialect::Cuda)),
        ("PRODUCE", produce(variant)),
        ("MMA", mma(variant)),
        ("EPILOGUE", epilogue(ir, variant)),
    ];
    s.push_str(&fill(KERNEL, &subs));
    s
}

/// Replaces every `@KEY@` of `tpl`.
fn fill(tpl: &str, subs: &[(&str, String)]) -> String {
    let mut s = tpl.to_string();
    for (k, v) in subs {
        s = s.replace(&format!("@{k}@"), v);
    }
    s
}

const CONFIG: &str = r#"
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 256
#endif
#ifndef BK
#define BK 64
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef CONSUMERS
#define CONSUMERS 2
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef CG_PRODUCER_REGS
#define CG_PRODUCER_REGS 24
#endif
#ifndef CG_CONSUMER_REGS
#define CG_CONSUMER_REGS 240
#endif
#ifndef CG_INFLIGHT
#define CG_INFLIGHT (CONSUMERS == 1)
#endif
#ifndef CG_EPI_SMEM
#define CG_EPI_SMEM 1
#endif
#ifndef CLUSTER_M
#define CLUSTER_M 1
#endif
#ifndef CG_WATCHDOG
#define CG_WATCHDOG 0
#endif
#define CG_THREADS (128 * (CONSUMERS + 1))
#define CG_WG_M (BM / CONSUMERS)
#define CG_MI (CG_WG_M / 64)
#define CG_ESZ 2
#define A_STAGE_BYTES (BM * BK * CG_ESZ)
#define B_STAGE_BYTES (BN * BK * CG_ESZ)
#define CG_STAGE_BYTES (A_STAGE_BYTES + B_STAGE_BYTES)
#define CG_STG_PITCH 144
#define CG_CW (128 / CG_OSZ)
#define CG_SMEM_BYTES (1024 + STAGES * CG_STAGE_BYTES + 16 * STAGES + (CG_EPI_SMEM ? CONSUMERS * 4 * 16 * CG_STG_PITCH : 0))
"#;

const CHECKS: &str = r#"
static_assert(BK == 64, "BK must be 64: one 128-byte swizzle row of 16-bit elements");
static_assert(CONSUMERS == 1 || CONSUMERS == 2, "CONSUMERS must be 1 or 2");
static_assert(BM <= 256 && BM % (64 * CONSUMERS) == 0, "BM / CONSUMERS must be a multiple of 64, BM <= 256");
static_assert(BN >= 16 && BN <= 256 && BN % 16 == 0, "BN must be a multiple of 16 in [16, 256]");
static_assert(CG_B_KMAJOR || BN % 64 == 0, "an N-major B tile arrives in 64-column boxes: BN must be a multiple of 64");
static_assert(CG_MI * BN / 2 <= 128, "at most 128 accumulator registers per consumer thread");
static_assert(STAGES >= 2, "the TMA ring needs at least two stages");
static_assert(GROUP_M >= 1, "GROUP_M must be at least 1");
static_assert(CLUSTER_M == 1 || CLUSTER_M == 2, "CLUSTER_M must be 1 or 2");
static_assert(CG_SMEM_BYTES <= 232448, "the ring does not fit the 232448 bytes of shared memory of sm_90");
static_assert(CG_PRODUCER_REGS % 8 == 0 && CG_CONSUMER_REGS % 8 == 0 && CG_PRODUCER_REGS >= 24 && CG_CONSUMER_REGS <= 256,
              "setmaxnreg counts are multiples of 8 in [24, 256]");
static_assert(CONSUMERS == 1 || 128 * (CG_PRODUCER_REGS + CONSUMERS * CG_CONSUMER_REGS) <= 65536,
              "the register budget of producer plus consumers exceeds the register file");
"#;

/// Barriers, TMA, descriptors, fences: every Hopper feature as inline PTX.
const PTX: &str = r#"
struct __align__(64) CgTmaMap { unsigned long long v[16]; };
struct __align__(8) cg_f2 { float x, y; };
struct __align__(16) cg_u4 { unsigned x, y, z, w; };

static __device__ __forceinline__ unsigned cg_smem_u32(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}
static __device__ __forceinline__ void cg_mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(bar), "r"(count) : "memory");
}
/* Arrives once and adds `bytes` to the transaction count the phase waits for. */
static __device__ __forceinline__ void cg_mbar_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(bar), "r"(bytes) : "memory");
}
static __device__ __forceinline__ void cg_mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(bar) : "memory");
}
/* Waits until the phase of parity `parity` has completed. A fresh barrier is in phase
   0, and parity 1 names the (complete) phase before it: waiting for parity 1 returns at
   once, which is how the producer's first pass over the ring finds every slot empty. */
static __device__ __forceinline__ void cg_mbar_wait(unsigned bar, unsigned parity) {
    unsigned done;
#if CG_WATCHDOG
    unsigned polls = 0;
#endif
    do {
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
#if CG_WATCHDOG
        if (++polls > (1u << 26)) asm volatile("trap;");
#endif
    } while (!done);
}
#if CLUSTER_M > 1
static __device__ __forceinline__ unsigned cg_cluster_rank() { unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r)); return r; }
static __device__ __forceinline__ unsigned cg_cluster_id() { unsigned r; asm volatile("mov.u32 %0, %%clusterid.x;\n" : "=r"(r)); return r; }
static __device__ __forceinline__ unsigned cg_cluster_count() { unsigned r; asm volatile("mov.u32 %0, %%nclusterid.x;\n" : "=r"(r)); return r; }
static __device__ __forceinline__ void cg_cluster_sync() {
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
#endif
/* The producer's wait for an empty slot. With clusters the arrivals come from the
   consumers of every block of the cluster; as in CUTLASS's ClusterBarrier, a CTA-scope
   acquire suffices (the wgmma reads were complete before each arrival), and avoids the
   L1 invalidation that a cluster-scope acquire costs. */
static __device__ __forceinline__ void cg_mbar_wait_cluster(unsigned bar, unsigned parity) {
    cg_mbar_wait(bar, parity);
}
/* A consumer warp gives stage barrier `bar` back: to its own block, and with clusters to
   every block of the cluster (each multicasts into the others' shared memory). */
static __device__ __forceinline__ void cg_release(unsigned bar) {
#if CLUSTER_M > 1
#pragma unroll
    for (unsigned r = 0; r < CLUSTER_M; ++r)
        asm volatile("{\n .reg .b32 ra;\n mapa.shared::cluster.u32 ra, %0, %1;\n mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n"
                     :: "r"(bar), "r"(r) : "memory");
#else
    cg_mbar_arrive(bar);
#endif
}
/* One 2-D TMA box into shared memory, completing on `bar` (bytes counted). */
static __device__ __forceinline__ void cg_tma_load(unsigned dst, const CgTmaMap* map, unsigned bar, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n"
                 :: "r"(dst), "l"((unsigned long long)map), "r"(bar), "r"(c0), "r"(c1) : "memory");
}
#if CLUSTER_M > 1
/* The same box into the same offsets of every block in `mask`, completing on each one's `bar`. */
static __device__ __forceinline__ void cg_tma_load_mc(unsigned dst, const CgTmaMap* map, unsigned bar, int c0, int c1, unsigned short mask) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;\n"
                 :: "r"(dst), "l"((unsigned long long)map), "r"(bar), "r"(c0), "r"(c1), "h"(mask) : "memory");
}
#endif
static __device__ __forceinline__ void cg_tma_prefetch(const CgTmaMap* map) {
    asm volatile("prefetch.tensormap [%0];\n" :: "l"((unsigned long long)map) : "memory");
}
/* Shared-memory matrix descriptor, 128-byte swizzle: start address, leading and stride
   byte offsets (all >> 4), base offset 0 (every pattern starts 1024-aligned). */
static __device__ __forceinline__ unsigned long long cg_desc(unsigned addr, unsigned lbo, unsigned sbo) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)(lbo >> 4) << 16) |
           ((unsigned long long)(sbo >> 4) << 32) | (1ull << 62);
}
static __device__ __forceinline__ void cg_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
static __device__ __forceinline__ void cg_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
static __device__ __forceinline__ void cg_wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory");
}
/* Tells the compiler that the accumulator changes here, so that no read of it moves
   above the wgmma wait before it and no write below the wgmma after it. */
static __device__ __forceinline__ void cg_fence_acc(float& r) { asm volatile("" : "+f"(r) :: "memory"); }

/* Triton's grouped order: GROUP_M consecutive tile rows sweep the columns together, so
   the A rows they share stay in L2. */
static __device__ __forceinline__ void cg_tile_coords(int tile, int grid_m, int grid_n, int* tm, int* tn) {
    const int width = GROUP_M * grid_n;
    const int group = tile / width;
    const int first_m = group * GROUP_M;
    const int rows = grid_m - first_m < GROUP_M ? grid_m - first_m : GROUP_M;
    const int in = tile - group * width;
    *tm = first_m + in % rows;
    *tn = in / rows;
}
"#;

/// `cg_wgmma(d, desc_a, desc_b, scale_d)`: one `wgmma.mma_async.m64n{BN}k16` with f32
/// accumulators `d[0..BN/2]`, one `#if` branch per supported BN.
fn wgmma_fns(ty: &str, trans_a: bool, trans_b: bool) -> String {
    let mut s = String::from("/* d += A(64x16) * B(16xBN), both from shared memory; scale_d == 0 overwrites d. */\n");
    let (ta, tb) = (trans_a as u32, trans_b as u32);
    for (idx, n) in (16..=256).step_by(16).enumerate() {
        let regs = n / 2;
        let _ = writeln!(s, "#{} BN == {n}", if idx == 0 { "if" } else { "elif" });
        let _ = writeln!(
            s,
            "static __device__ __forceinline__ void cg_wgmma(float* d, unsigned long long da, unsigned long long db, int scale_d) {{"
        );
        let list: Vec<String> = (0..regs).map(|r| format!("%{r}")).collect();
        let _ = writeln!(
            s,
            "    asm volatile(\"{{\\n .reg .pred p;\\n setp.ne.b32 p, %{}, 0;\\n wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{ty}.{ty} {{{}}}, %{}, %{}, p, 1, 1, {ta}, {tb};\\n}}\\n\"",
            regs + 2,
            list.join(", "),
            regs,
            regs + 1
        );
        let outs: Vec<String> = (0..regs).map(|r| format!("\"+f\"(d[{r}])")).collect();
        let _ = writeln!(s, "        : {}", outs.join(", "));
        let _ = writeln!(s, "        : \"l\"(da), \"l\"(db), \"r\"(scale_d));\n}}");
    }
    s.push_str("#else\n#error \"BN must be a multiple of 16 in [16, 256]\"\n#endif\n");
    s
}

/// `cg_st2(p, v0, v1)`: output elements `p[0]`, `p[1]` in one 4-byte (16-bit) or
/// 8-byte (f32) store; `p` is 4 or 8-byte aligned (row-major output, even N, even
/// column). Works on global and shared pointers alike.
fn store_fns(ir: &GemmIr) -> String {
    let st = Dialect::Cuda.storage(ir.out_dtype);
    let body = match ir.out_dtype {
        DType::F32 => "    cg_f2 v; v.x = v0; v.y = v1;\n    *reinterpret_cast<cg_f2*>(p) = v;".to_string(),
        d => {
            let cvt = if d == DType::F16 { "f16x2" } else { "bf16x2" };
            format!(
                "    unsigned u;\n    asm(\"cvt.rn.{cvt}.f32 %0, %1, %2;\\n\" : \"=r\"(u) : \"f\"(v1), \"f\"(v0));\n    *reinterpret_cast<unsigned*>(p) = u;"
            )
        }
    };
    format!(
        "#define CG_OSZ {}\ntypedef {st} cg_out_t;\nstatic __device__ __forceinline__ void cg_st2({st}* p, float v0, float v1) {{\n{body}\n}}\n",
        ir.out_dtype.size()
    )
}

/// The producer's work for one stage (`@PRODUCE@`): TMA boxes, or for
/// [`Variant::ComputeOnly`] a bare arrival.
fn produce(variant: Variant) -> String {
    if variant == Variant::ComputeOnly {
        return "                /* Diagnosis variant compute_only: no loads, the stage is marked full as is. */
                cg_mbar_arrive(full);"
            .into();
    }
    "                cg_mbar_expect_tx(full, CG_STAGE_BYTES);
#if CG_A_KMAJOR
                cg_tma_load(a_s, &a_map, full, k0, m0);
#else
#pragma unroll
                for (int c = 0; c < BM / 64; ++c) cg_tma_load(a_s + c * 8192, &a_map, full, m0 + c * 64, k0);
#endif
#if CLUSTER_M > 1
                /* Block 0 of the cluster fetches the shared B tile for all of them. */
                if (rank == 0) {
#if CG_B_KMAJOR
                    cg_tma_load_mc(b_s, &b_map, full, k0, n0, (unsigned short)((1u << CLUSTER_M) - 1));
#else
#pragma unroll
                    for (int c = 0; c < BN / 64; ++c)
                        cg_tma_load_mc(b_s + c * 8192, &b_map, full, n0 + c * 64, k0, (unsigned short)((1u << CLUSTER_M) - 1));
#endif
                }
#else
#if CG_B_KMAJOR
                cg_tma_load(b_s, &b_map, full, k0, n0);
#else
#pragma unroll
                for (int c = 0; c < BN / 64; ++c) cg_tma_load(b_s + c * 8192, &b_map, full, n0 + c * 64, k0);
#endif
#endif"
        .into()
}

/// The consumers' math on one stage (`@MMA@`).
fn mma(variant: Variant) -> String {
    if variant == Variant::LoadOnly {
        return "                /* Diagnosis variant load_only: no wgmma. */
                (void)a_s; (void)b_s;"
            .into();
    }
    "                cg_wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < BK / 16; ++kk) {
#pragma unroll
                    for (int mi = 0; mi < CG_MI; ++mi) {
#if CG_A_KMAJOR
                        /* K-major: rows of 128 bytes, 8-row groups 1024 apart; k16 = 32 bytes. */
                        const unsigned long long da = cg_desc(a_s + (c * CG_WG_M + mi * 64) * 128 + kk * 32, 16, 1024);
#else
                        /* M-major: 64-row boxes of 8 KiB; k16 = 16 rows of 128 bytes. */
                        const unsigned long long da = cg_desc(a_s + (c * CG_MI + mi) * 8192 + kk * 2048, 8192, 1024);
#endif
#if CG_B_KMAJOR
                        const unsigned long long db = cg_desc(b_s + kk * 32, 16, 1024);
#else
                        /* N-major: 64-column boxes 8 KiB apart (LBO), 8-row k groups 1024 apart (SBO). */
                        const unsigned long long db = cg_desc(b_s + kk * 2048, 8192, 1024);
#endif
                        cg_wgmma(acc[mi], da, db, (kt > 0 || kk > 0) ? 1 : 0);
                    }
                }
                cg_wgmma_commit();"
        .into()
}

/// The consumer's epilogue for one tile (`@EPILOGUE@`): every accumulator through
/// `cg_epilogue` (raw for [`Variant::NoEpilogue`]) into the output.
///
/// The work is cut into chunks of 16 rows (one warp's) by `CG_CW` columns. A chunk
/// wholly inside the output takes the fast path: no bounds checks and, with
/// `CG_EPI_SMEM` (row-major outputs whose rows are 16-byte multiples and a 16-byte
/// aligned `out`), a trip through the warp's own staging buffer in shared memory so that
/// the global stores are 16 bytes wide and each row's 128 bytes go out together; without
/// it, two adjacent elements per store. Chunks on the M or N edge store element by
/// element with checks.
fn epilogue(ir: &GemmIr, variant: Variant) -> String {
    let epi = |acc: &str, i: &str, j: &str| {
        if variant == Variant::NoEpilogue {
            acc.to_string()
        } else {
            format!("cg_epilogue({acc}, {i}, {j}, M, N{})", epilogue_args(ir))
        }
    };
    let row_major = ir.out_layout == Layout::RowMajor;
    let fast_store = if row_major {
        "cg_st2(out + (long)i * N + j, v0, v1);".to_string()
    } else {
        format!(
            "{}; {};",
            store_out(ir, "i", "j", "v0"),
            store_out(ir, "i", "j + 1", "v1")
        )
    };
    let checked_store = if row_major {
        format!(
            "if (two && pair_ok) cg_st2(out + (long)i * N + j, v0, v1);
                                else {{ {}; if (two) {}; }}",
            store_out(ir, "i", "j", "v0"),
            store_out(ir, "i", "j + 1", "v1")
        )
    } else {
        format!(
            "{}; if (two) {};",
            store_out(ir, "i", "j", "v0"),
            store_out(ir, "i", "j + 1", "v1")
        )
    };
    let staged = if row_major {
        EPI_STAGED.to_string()
    } else {
        String::new()
    };
    fill(
        EPI_TEMPLATE,
        &[
            ("STAGED", staged),
            ("V0", epi("acc[mi][r]", "i", "j")),
            ("V1", epi("acc[mi][r + 1]", "i", "j + 1")),
            ("FAST_STORE", fast_store),
            ("CHECKED_STORE", checked_store),
            ("ROW_MAJOR", (row_major as u32).to_string()),
        ],
    )
}

/// Register r of slab mi of a consumer thread holds row
/// `16 * warp + lane / 4 + 8 * ((r >> 1) & 1)` and column
/// `8 * (r >> 2) + 2 * (lane & 3) + (r & 1)` of the slab: pairs (r, r + 1) are adjacent
/// columns, and columns `[q * CG_CW, (q + 1) * CG_CW)` are registers
/// `[q * CG_CW / 2, (q + 1) * CG_CW / 2)`.
const EPI_TEMPLATE: &str = r#"            const bool pair_ok = (N & 1) == 0;
#if CG_EPI_SMEM && @ROW_MAJOR@
            const bool vec_ok = (N * CG_OSZ) % 16 == 0 && ((unsigned long long)out & 15) == 0;
#else
            const bool vec_ok = @ROW_MAJOR@ ? pair_ok : true;
#endif
#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi) {
                const int wrow = m0 + c * CG_WG_M + mi * 64 + warp * 16;
#pragma unroll
                for (int q = 0; q < (BN + CG_CW - 1) / CG_CW; ++q) {
                    const int r_lo = q * CG_CW / 2;
                    const int r_hi = ((q + 1) * CG_CW < BN ? (q + 1) * CG_CW : BN) / 2;
                    if (vec_ok && (q + 1) * CG_CW <= BN && wrow + 16 <= M && n0 + (q + 1) * CG_CW <= N) {
@STAGED@#if !(CG_EPI_SMEM && @ROW_MAJOR@)
#pragma unroll
                        for (int p = 0; p < CG_CW / 4; ++p) {
                            const int r = r_lo + 2 * p;
                            if (r >= r_hi) break;
                            const int i = wrow + (lane >> 2) + 8 * ((r >> 1) & 1);
                            const int j = n0 + 8 * (r >> 2) + 2 * (lane & 3);
                            const float v0 = @V0@;
                            const float v1 = @V1@;
                            @FAST_STORE@
                        }
#endif
                    } else {
#pragma unroll
                        for (int p = 0; p < CG_CW / 4; ++p) {
                            const int r = r_lo + 2 * p;
                            if (r >= r_hi) break;
                            const int i = wrow + (lane >> 2) + 8 * ((r >> 1) & 1);
                            const int j = n0 + 8 * (r >> 2) + 2 * (lane & 3);
                            if (i < M && j < N) {
                                const bool two = j + 1 < N;
                                const float v0 = @V0@;
                                const float v1 = two ? @V1@ : 0.0f;
                                @CHECKED_STORE@
                            }
                        }
                    }
                }
            }
"#;

/// The staged fast path of [`EPI_TEMPLATE`] (row-major outputs): the warp writes its 16 x
/// CG_CW chunk (128 bytes a row) to its buffer, rows CG_STG_PITCH = 144 bytes apart (no
/// bank conflicts for either access), then copies it out 16 bytes a lane, 8 lanes a row.
const EPI_STAGED: &str = r#"#if CG_EPI_SMEM
#pragma unroll
                        for (int p = 0; p < CG_CW / 4; ++p) {
                            const int r = r_lo + 2 * p;
                            if (r >= r_hi) break;
                            const int i = wrow + (lane >> 2) + 8 * ((r >> 1) & 1);
                            const int j = n0 + 8 * (r >> 2) + 2 * (lane & 3);
                            const float v0 = @V0@;
                            const float v1 = @V1@;
                            cg_st2(reinterpret_cast<cg_out_t*>(stg + ((lane >> 2) + 8 * ((r >> 1) & 1)) * CG_STG_PITCH +
                                                               (8 * ((r - r_lo) >> 2) + 2 * (lane & 3)) * CG_OSZ),
                                   v0, v1);
                        }
                        __syncwarp();
#pragma unroll
                        for (int t = 0; t < 4; ++t) {
                            const int row = t * 4 + (lane >> 3), c16 = lane & 7;
                            const cg_u4 v = *reinterpret_cast<const cg_u4*>(stg + row * CG_STG_PITCH + c16 * 16);
                            *reinterpret_cast<cg_u4*>(out + (long)(wrow + row) * N + n0 + q * CG_CW + c16 * (16 / CG_OSZ)) = v;
                        }
                        __syncwarp();
#endif
"#;

const KERNEL: &str = r#"
#if CLUSTER_M > 1
#define CG_CLUSTER_DIMS __cluster_dims__(CLUSTER_M, 1, 1)
#else
#define CG_CLUSTER_DIMS
#endif
extern "C" __global__ void __launch_bounds__(CG_THREADS, 1) CG_CLUSTER_DIMS @SYM@(const __grid_constant__ CgTmaMap a_map, const __grid_constant__ CgTmaMap b_map, int M, int N, int K, @PARAMS@) {
    extern __shared__ __align__(1024) unsigned char cg_smem[];
    /* The ring: STAGES A tiles, STAGES B tiles, then full[STAGES] and empty[STAGES]. */
    const unsigned smem = (cg_smem_u32(cg_smem) + 1023u) & ~1023u;
    const unsigned sa = smem;
    const unsigned sb = smem + STAGES * A_STAGE_BYTES;
    const unsigned bars = sb + STAGES * B_STAGE_BYTES;
    const int wg = threadIdx.x / 128;
    const int tid = threadIdx.x % 128;
#if CLUSTER_M > 1
    /* Clusters of CLUSTER_M blocks along M share (multicast) the B tile. */
    const unsigned rank = cg_cluster_rank();
    const int cluster = (int)cg_cluster_id(), clusters = (int)cg_cluster_count();
#else
    const unsigned rank = 0;
    const int cluster = blockIdx.x, clusters = gridDim.x;
#endif
    (void)rank;
    if (threadIdx.x == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            cg_mbar_init(bars + s * 8, 1);                                    /* full: the producer's expect_tx */
            cg_mbar_init(bars + (STAGES + s) * 8, 4 * CONSUMERS * CLUSTER_M); /* empty: lane 0 of every consumer warp of the cluster */
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        cg_tma_prefetch(&a_map);
        cg_tma_prefetch(&b_map);
    }
#if CLUSTER_M > 1
    cg_cluster_sync();
#else
    __syncthreads();
#endif
    /* Tiles in units of CLUSTER_M tile rows: block `rank` of a cluster takes row
       CLUSTER_M * tm + rank (possibly past M: it still loads its share and stores nothing). */
    const int grid_m = (M + BM * CLUSTER_M - 1) / (BM * CLUSTER_M), grid_n = (N + BN - 1) / BN;
    const int tiles = grid_m * grid_n;
    const int ktiles = (K + BK - 1) / BK;

    if (wg == 0) {
        /* Producer warpgroup: one thread issues every load. */
#if CONSUMERS > 1
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" :: "n"(CG_PRODUCER_REGS));
#endif
        if (tid == 0) {
            int stage = 0;
            unsigned phase = 0;
            for (int tile = cluster; tile < tiles; tile += clusters) {
                int tm, tn;
                cg_tile_coords(tile, grid_m, grid_n, &tm, &tn);
                const int m0 = (tm * CLUSTER_M + (int)rank) * BM, n0 = tn * BN;
                (void)m0; (void)n0;
                for (int kt = 0; kt < ktiles; ++kt) {
                    const int k0 = kt * BK;
                    (void)k0;
                    const unsigned full = bars + stage * 8;
                    const unsigned a_s = sa + stage * A_STAGE_BYTES, b_s = sb + stage * B_STAGE_BYTES;
                    (void)a_s; (void)b_s;
                    cg_mbar_wait_cluster(bars + (STAGES + stage) * 8, phase ^ 1);
@PRODUCE@
                    if (++stage == STAGES) { stage = 0; phase ^= 1; }
                }
            }
        }
    } else {
        /* Consumer warpgroup c: rows [c * CG_WG_M, (c + 1) * CG_WG_M) of every tile. */
#if CONSUMERS > 1
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" :: "n"(CG_CONSUMER_REGS));
#endif
        const int c = wg - 1;
        const int warp = tid / 32, lane = tid % 32;
#if CG_EPI_SMEM
        /* This warp's epilogue staging buffer: 16 rows of CG_STG_PITCH bytes. */
        unsigned char* const stg = cg_smem + (bars + 16 * STAGES - cg_smem_u32(cg_smem)) + (c * 4 + warp) * 16 * CG_STG_PITCH;
#endif
        float acc[CG_MI][BN / 2];
#pragma unroll
        for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
            for (int r = 0; r < BN / 2; ++r) acc[mi][r] = 0.0f;
        int stage = 0;
        unsigned phase = 0;
        for (int tile = cluster; tile < tiles; tile += clusters) {
            int tm, tn;
            cg_tile_coords(tile, grid_m, grid_n, &tm, &tn);
            const int m0 = (tm * CLUSTER_M + (int)rank) * BM, n0 = tn * BN;
#if CG_INFLIGHT
            int prev = 0;
#endif
            for (int kt = 0; kt < ktiles; ++kt) {
                cg_mbar_wait(bars + stage * 8, phase);
                const unsigned a_s = sa + stage * A_STAGE_BYTES, b_s = sb + stage * B_STAGE_BYTES;
@MMA@
#if CG_INFLIGHT
                /* Keep this stage's group in flight; the previous one is done, so its
                   stage goes back to the producer(s). */
                cg_wgmma_wait<1>();
                if (kt > 0 && lane == 0) cg_release(bars + (STAGES + prev) * 8);
#else
                /* Wait for this stage's group and give the stage back at once: one stage
                   held per consumer, the rest of the ring prefetching. */
                cg_wgmma_wait<0>();
                if (lane == 0) cg_release(bars + (STAGES + stage) * 8);
#endif
#if CG_INFLIGHT
                prev = stage;
#endif
                if (++stage == STAGES) { stage = 0; phase ^= 1; }
            }
            cg_wgmma_wait<0>();
#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                for (int r = 0; r < BN / 2; ++r) cg_fence_acc(acc[mi][r]);
#if CG_INFLIGHT
            if (lane == 0) cg_release(bars + (STAGES + prev) * 8);
#endif

@EPILOGUE@        }
    }
#if CLUSTER_M > 1
    /* No block may leave while its peer can still arrive on its barriers or write its
       shared memory. */
    cg_cluster_sync();
#endif
}
"#;
