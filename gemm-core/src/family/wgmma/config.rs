//! The wgmma family's tile configuration ([`WgmmaTile`]): its fields, its `-D`
//! constants, and what follows from them (threads, shared memory, grid, registers).

use super::{rules::RULES, splitk, supports};
use crate::family::PlanCtx;
use crate::ir::{DType, GemmIr};
use crate::target::TargetSpec;
use serde::{Deserialize, Serialize};

/// One tile configuration of the wgmma kernel: the values of its `-D` constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WgmmaTile {
    /// CTA tile rows.
    pub bm: u32,
    /// CTA tile columns (the wgmma N).
    pub bn: u32,
    /// k-tile depth in elements: 1 to 4 128-byte swizzle rows of [`bk_for`] elements (64
    /// for 16-bit operands, 32 for tf32); more than one needs K-major A and B.
    pub bk: u32,
    /// TMA ring depth.
    pub stages: u32,
    /// Consumer warpgroups (1 to 3; 3 for 192-row tiles).
    pub consumers: u32,
    /// Grouped raster height.
    pub group_m: u32,
    /// Blocks per cluster along M (1, 2 or 4; more than 1 multicasts B).
    pub cluster_m: u32,
    /// Blocks per cluster along N (1, 2 or 4; more than 1 multicasts A); 1 (left out on
    /// disk) for none. With `cluster_m` 2 as well, a 2×2 cluster shares both operands, so
    /// each block loads half of what it multiplies. At most 8 blocks a cluster.
    #[serde(default = "splitk::one", skip_serializing_if = "splitk::is_one")]
    pub cluster_n: u32,
    /// `CG_INFLIGHT`: one wgmma group kept in flight across k-tiles.
    pub inflight: bool,
    /// `CG_EPI_SMEM`: the staged, 16-byte-store epilogue.
    pub epi_smem: bool,
    /// `KSPLIT`: blocks that share one output tile, each over its share of the k-tiles,
    /// reduced in a fixed order ([`splitk`]); 1 (the default, left out on disk) for none.
    #[serde(default = "splitk::one", skip_serializing_if = "splitk::is_one")]
    pub ksplit: u32,
    /// `CG_PINGPONG`: the consumers take tiles in turn, each the whole `BM × BN` tile,
    /// and run their mainloops in turn, so one's epilogue overlaps the others' mainloops
    /// (CUTLASS's ping-pong schedule; with three consumers two epilogues overlap one
    /// mainloop, which won the fused rows at K = 128 on the H200 by 7-8%,
    /// bench/results/h200-2026-12-03p5); false (left out on disk) for the cooperative
    /// schedule, where the consumers share each tile. Needs two or three consumers, no
    /// split-K and `BM / 64 * BN / 2` accumulators of at most 128 (64 with three).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pingpong: bool,
    /// `CG_STREAMK`: stream-K in its tail form, the units of a partial last wave split by K
    /// over the blocks that would idle ([`splitk::streamk_tail`]), so that no block idles
    /// while others finish a partial last wave; false (left out on disk) for whole tiles.
    /// Needs the cooperative schedule, no split-K and no cluster. Planned only where the
    /// kernel's `tune(streamk = 1)` asks, beside the whole-tile configs (not yet measured
    /// on a GPU in this form).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub streamk: bool,
    /// `CG_EPI_TMA`: each consumer writes its share of the tile, through the epilogue, into
    /// shared memory in the 128-byte swizzled layout, and one of its threads stores it with
    /// TMA (`cp.async.bulk.tensor`, one box per 128 bytes of columns); the copy engine
    /// writes while the consumer goes on to its next tile, and clips the boxes at M and
    /// N, so edge tiles need no separate path. False (left out on disk) for the warps' own
    /// 16-byte stores. Why: one warpgroup's stores write a tile slower than the memory
    /// takes it (bench/results/h200-2026-12-03p1: 33.5 MB in 12.9-13.0 us from 128 threads
    /// a multiprocessor, 10.8-10.9 from 256, 10.3 linear), and in the ping-pong schedule
    /// only one consumer stores at a time. Needs a row-major output of the operands' element
    /// size whose rows TMA can map, and `BN` a multiple of a box (128 bytes of columns).
    ///
    /// Measured slower (bench/results/h200-2026-12-03p2): the same configs with it took
    /// 1.35x as long at 4096x4096x128 (median; the fastest 20.9 us against 15.5), 2-7%
    /// longer at the K = 4096 shapes, and tied at 1000^3, so it is planned only where
    /// `tune(tma_store = 1)` asks.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tma_store: bool,
    /// `SWAP`: the kernel computes the product turned around, `Cᵀ = Bᵀ · Aᵀ` on the same
    /// buffers ([`GemmIr::transposed`]); every other field is in the turned product's
    /// terms (`bm` rows of `Cᵀ`, i.e. columns of C, `bn` columns of `Cᵀ`, i.e. rows of C).
    /// False (left out on disk) for the plain form. Why: a product with few rows puts them
    /// on the wide side of wgmma (32 columns where a plain tile has 64 rows), and a
    /// row-major weight is then read in 128-byte box rows where the plain form's narrow
    /// tiles read 64-byte ones at half TMA's rate (bench/results/h200-2026-12-04aa1).
    /// Planned only where the kernel's `tune(turned = 1)` asks (not yet measured on a
    /// GPU: `bench/h200-2026-12-05ac1-turned.sh` is written to).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub turned: bool,
    /// `CG_REUSE`: each block walks a consecutive run of the work items (as many as the
    /// strided walk gives it), and its producer leaves out an operand's loads into a stage
    /// that still holds that operand's k-tile from `STAGES / ktiles` items before: A for a
    /// tile in the same row of tiles, B in the same column (the grouped raster's columns
    /// keep B for most tiles). Possible where `STAGES` is a multiple of the k-tiles (K up
    /// to `STAGES * BK`); elsewhere only the walk changes. Why: at short K every tile
    /// loads both operands whole from L2 for little work (4096x4096x128 in 128x128 tiles:
    /// 64 MB of loads for a 33.5 MB output; `diagnose`'s no-store variant took 12.3 µs of
    /// the kernel's 16.7 on the H200, bench/results/h200-2026-12-03q1). False (left out
    /// on disk) for the strided walk. Needs KSPLIT 1, no stream-K and no cluster; planned
    /// only where the kernel's `tune(reuse = 1)` asks. Measured on an H100
    /// (bench/results/h100-2026-12-06ao2 to -ao5): 6% faster than its strided twin at
    /// 4096x4096x128 plain (128x128 ping-pong, whole columns: 1-3% ahead of the best
    /// strided tile), but 2-6% slower fused and 6-7% at 8192x8192x128, where the
    /// consecutive walk alone costs 2-3%: the operand loads are not what binds there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reuse: bool,
}

impl Default for WgmmaTile {
    /// The source's own defaults: 128×256×64, 4 stages, 2 consumers
    /// ([`WgmmaTile::new`]).
    fn default() -> Self {
        WgmmaTile::new(128, 256, 4, 2)
    }
}

/// What [`Wgmma`](super::Wgmma)'s plan class adds for a ping-pong config (more than any k-tile).
pub const PINGPONG_CLASS: u32 = 1 << 16;
/// What [`Wgmma`](super::Wgmma)'s plan class adds for a stream-K config.
pub const STREAMK_CLASS: u32 = 1 << 17;
/// What [`Wgmma`](super::Wgmma)'s plan class adds for a 2x2-cluster config.
pub const CLUSTER2D_CLASS: u32 = 1 << 18;
/// What [`Wgmma`](super::Wgmma)'s plan class adds for a TMA-store config.
pub const TMA_STORE_CLASS: u32 = 1 << 19;
/// What [`Wgmma`](super::Wgmma)'s plan class adds for three consumers (192-row tiles, and the 64-row
/// tiles' three-consumer ping-pong, which so keeps a class apart from two consumers').
pub const THREE_CONSUMERS_CLASS: u32 = 1 << 20;
/// What [`Wgmma`](super::Wgmma)'s plan class adds for a ring deeper than the usual depths
/// (the 64x64 tile's deepest, which so keeps a class apart from its usual depths').
pub const DEEP_RING_CLASS: u32 = 1 << 21;

/// What [`Wgmma`](super::Wgmma)'s plan class adds for the turned-around form.
pub const TURNED_CLASS: u32 = 1 << 22;
/// What [`Wgmma`](super::Wgmma)'s plan class adds for operand reuse (`CG_REUSE`).
pub const REUSE_CLASS: u32 = 1 << 23;

/// The opt-in shared memory limit of one block on sm_90 (H100, H200).
pub const SM90_SMEM_LIMIT: u32 = 232_448;

impl WgmmaTile {
    /// A `bm × bn × 64` tile (16-bit operands) with `stages` and `consumers`, and the
    /// source's defaults for the rest: GROUP_M 8, no cluster, `CG_INFLIGHT` on only with
    /// one consumer, the staged epilogue. [`WgmmaTile::for_dtype`] for tf32.
    pub fn new(bm: u32, bn: u32, stages: u32, consumers: u32) -> WgmmaTile {
        WgmmaTile {
            bm,
            bn,
            bk: 64,
            stages,
            consumers,
            group_m: 8,
            cluster_m: 1,
            cluster_n: 1,
            inflight: consumers == 1,
            epi_smem: true,
            ksplit: 1,
            pingpong: false,
            streamk: false,
            tma_store: false,
            turned: false,
            reuse: false,
        }
    }

    /// [`WgmmaTile::new`] with the k-tile of `dtype` operands ([`bk_for`]: 32 for f32).
    pub fn for_dtype(bm: u32, bn: u32, stages: u32, consumers: u32, dtype: DType) -> WgmmaTile {
        WgmmaTile {
            bk: bk_for(dtype),
            ..WgmmaTile::new(bm, bn, stages, consumers)
        }
    }

    /// The `-D` definitions for NVRTC, in a fixed order (`CG_PINGPONG` and `CLUSTER_N` only
    /// when set, so the other configs' compiles, and their cache keys, are as before).
    pub fn defines(&self) -> Vec<(&'static str, u32)> {
        let mut d = vec![
            ("BM", self.bm),
            ("BN", self.bn),
            ("BK", self.bk),
            ("STAGES", self.stages),
            ("CONSUMERS", self.consumers),
            ("GROUP_M", self.group_m),
            ("CLUSTER_M", self.cluster_m),
            ("CG_INFLIGHT", self.inflight as u32),
            ("CG_EPI_SMEM", self.epi_smem as u32),
            ("KSPLIT", self.ksplit),
        ];
        if self.pingpong {
            d.push(("CG_PINGPONG", 1));
        }
        if self.cluster_n != 1 {
            d.push(("CLUSTER_N", self.cluster_n));
        }
        if self.streamk {
            d.push(("CG_STREAMK", 1));
        }
        if self.tma_store {
            d.push(("CG_EPI_TMA", 1));
        }
        if self.turned {
            d.push(("SWAP", 1));
        }
        if self.reuse {
            d.push(("CG_REUSE", 1));
        }
        d
    }

    /// Registers per thread as ptxas reported them on the H200 (bench/wgmma-probe.md):
    /// the launch bound with two or three consumers (168 of 384 threads, 128 of 512), and
    /// with one the accumulators plus about 60 (122 for 64x128, 190-208 for 128x128).
    pub fn est_regs(&self) -> u32 {
        if self.consumers >= 2 {
            65536 / self.threads() / 8 * 8
        } else {
            (self.bm / 64) * self.bn / 2 + 60
        }
    }

    /// Consumer warpgroups that share one tile's rows: `consumers`, or 1 with ping-pong
    /// (each consumer computes whole tiles).
    pub fn sharers(&self) -> u32 {
        if self.pingpong {
            1
        } else {
            self.consumers.max(1)
        }
    }

    /// Threads per block: `128 * (CONSUMERS + 1)`.
    pub fn threads(&self) -> u32 {
        128 * (self.consumers + 1)
    }

    /// Dynamic shared memory bytes for `dtype` operands: [`smem_bytes`] plus, with
    /// `epi_smem`, [`EPI_STAGING_BYTES`] per consumer warpgroup (whose row padding holds
    /// the epilogue's parameter area, [`EPI_PARAM_BYTES`]); with `tma_store` instead a
    /// parameter area per consumer, 1024 bytes to align the staged tile (the swizzle's
    /// unit) and the tile ([`WgmmaTile::tma_staging_bytes`]).
    pub fn smem_bytes(&self, dtype: DType) -> u32 {
        smem_bytes(self.bm, self.bn, self.bk, self.stages, dtype.size())
            + if self.tma_store {
                self.consumers * EPI_PARAM_BYTES + 1024 + self.tma_staging_bytes(dtype)
            } else if self.epi_smem {
                self.consumers * EPI_STAGING_BYTES
            } else {
                0
            }
    }

    /// With `tma_store`, the output tile staged for TMA: every consumer's rows (`BM /
    /// CONSUMERS`, ping-pong `BM`) by `BN` elements of the operands' size (the rule
    /// `tma_store` asks the output's to be the same).
    pub fn tma_staging_bytes(&self, dtype: DType) -> u32 {
        self.consumers * (self.bm / self.sharers()) * self.bn * dtype.size()
    }

    /// The same tile with `tma_store` set to `on`, keeping as many of its ring stages
    /// (down to 2) as fit sm_90's shared memory beside the staged tile, for `dtype`
    /// operands: a TMA-store tile's staged output takes the room of stages.
    pub fn with_tma_store(self, on: bool, dtype: DType) -> WgmmaTile {
        let mut t = WgmmaTile { tma_store: on, ..self };
        while t.stages > 2 && t.smem_bytes(dtype) > SM90_SMEM_LIMIT {
            t.stages -= 1;
        }
        t
    }

    /// Blocks per cluster: `CLUSTER_M * CLUSTER_N`.
    pub fn cluster(&self) -> u32 {
        self.cluster_m.max(1) * self.cluster_n.max(1)
    }

    /// Work items of an `m × n` product: clusters of `CLUSTER_M × CLUSTER_N` adjacent
    /// output tiles, `ceil(m / (BM * CLUSTER_M)) * ceil(n / (BN * CLUSTER_N))` of them
    /// (plain tiles without a cluster).
    pub fn tiles(&self, m: usize, n: usize) -> usize {
        m.div_ceil((self.bm * self.cluster_m.max(1)) as usize) * n.div_ceil((self.bn * self.cluster_n.max(1)) as usize)
    }

    /// The persistent grid (`grid.x`; y = z = 1): `C * min(tiles * KSPLIT * batch,
    /// sm_count / C)` blocks for clusters of `C` ([`WgmmaTile::cluster`]), at least `C`:
    /// one grid walks the tiles of every product of a batch.
    pub fn grid(&self, m: usize, n: usize, batch: usize, sm_count: u32) -> u32 {
        let c = self.cluster();
        let items = self.tiles(m, n) * self.ksplit.max(1) as usize * batch.max(1);
        let clusters = items.min((sm_count / c) as usize).max(1) as u32;
        clusters * c
    }

    /// [`WgmmaTile::validate_on`] the built-in `h200` target.
    pub fn validate(&self, ir: &GemmIr) -> Result<(), String> {
        static H200: std::sync::OnceLock<TargetSpec> = std::sync::OnceLock::new();
        let h200 = H200.get_or_init(|| {
            crate::target::Targets::parse(crate::target::BUILTIN_TARGETS)
                .ok()
                .and_then(|t| t.get("h200").cloned())
                .expect("the built-in targets.toml has h200 (tested)")
        });
        self.validate_on(&PlanCtx::new(h200, ir))
    }

    /// Whether the config is one the source accepts for `cx`'s kernel and chip (the
    /// family's rules, which are the source's static_asserts plus the chip's shared
    /// memory), with the first broken rule's reason when not.
    pub fn validate_on(&self, cx: &PlanCtx) -> Result<(), String> {
        supports(cx.ir)?;
        if self.turned {
            supports(&cx.ir.transposed())?;
        }
        for r in &RULES {
            if let Some(why) = (r.check)(cx, self) {
                return Err(why);
            }
        }
        Ok(())
    }
}

/// One 128-byte swizzle row of `dtype` operands (64 f16/bf16, 32 f32 elements): the
/// default k-tile depth, and the unit of deeper ones. wgmma's k-step is 32 bytes in both
/// cases (k16, tf32 k8), so a row is always 4 of them and every byte offset in the
/// kernel is the same.
pub fn bk_for(dtype: DType) -> u32 {
    128 / dtype.size()
}

/// Shared memory of the `CG_EPI_SMEM` staging buffers of one consumer warpgroup: 4
/// warps of 16 rows of 144 bytes.
pub const EPI_STAGING_BYTES: u32 = 4 * 16 * 144;

/// The epilogue parameter area of one consumer warpgroup (`CG_PAREA`, the current tile's
/// values of the `Row` and `Col` parameters that fit): the 16 padding bytes of each of
/// the 64 rows of its staging buffers, so part of [`EPI_STAGING_BYTES`], not extra.
pub const EPI_PARAM_BYTES: u32 = 4 * 16 * (144 - 128);

/// Dynamic shared memory of one block with `CG_EPI_SMEM = 0`, in bytes: 1024 bytes of alignment slack (the
/// 128-byte swizzle needs a 1024-byte aligned base, and the dynamic window's start is
/// only 16-byte aligned by contract), `stages` A tiles of `bm × bk` and B tiles of `bn
/// × bk` elements of `dtype_size` bytes, and `2 * stages` mbarriers of 8 bytes.
pub fn smem_bytes(bm: u32, bn: u32, bk: u32, stages: u32, dtype_size: u32) -> u32 {
    1024 + stages * (bm + bn) * bk * dtype_size + 16 * stages
}
