//! Tile configurations: the parameters a generated kernel takes as preprocessor
//! constants, and the launch geometry and resources they imply.

use crate::ir::DType;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A tensor-core tile (CUDA `mma.sync` kernels).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MmaTile {
    /// Rows of C per block.
    pub block_m: u32,
    /// Columns of C per block.
    pub block_n: u32,
    /// K step per pipeline stage.
    pub block_k: u32,
    /// Warps along M.
    pub warps_m: u32,
    /// Warps along N.
    pub warps_n: u32,
    /// Shared-memory pipeline depth (cp.async multi-buffering).
    pub stages: u32,
    /// Launch-order group height: blocks sharing rows of A run close in time (L2 reuse).
    pub group_m: u32,
}

/// A scalar-FMA tile in the CLBlast family (OpenCL kernels; CUDA FMA fallback).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SimtTile {
    /// Rows of C per work-group (CLBlast MWG).
    pub mwg: u32,
    /// Columns of C per work-group (NWG).
    pub nwg: u32,
    /// K step per local-memory tile (KWG).
    pub kwg: u32,
    /// Threads along M (MDIMC); each computes MWG/MDIMC rows.
    pub mdimc: u32,
    /// Threads along N (NDIMC); each computes NWG/NDIMC columns.
    pub ndimc: u32,
    /// Elements per global vector load (1, 2, 4 or 8) along the contiguous dimension.
    pub vw: u32,
    /// Launch-order group height, as in [`MmaTile::group_m`].
    pub group_m: u32,
}

/// One tile configuration of either family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "family", rename_all = "snake_case")]
pub enum TileConfig {
    /// Tensor-core tile.
    Mma(MmaTile),
    /// Scalar-FMA tile.
    Simt(SimtTile),
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

/// Padding (in elements) the SIMT kernel adds to each local-memory row: keeps the
/// transposing stores of a K-contiguous operand off a single bank.
pub const SIMT_LOCAL_PAD: u32 = 1;

impl MmaTile {
    /// Threads per block.
    pub const fn threads(&self) -> u32 {
        32 * self.warps_m * self.warps_n
    }
    /// Rows of C per warp.
    pub const fn warp_m(&self) -> u32 {
        self.block_m / self.warps_m
    }
    /// Columns of C per warp.
    pub const fn warp_n(&self) -> u32 {
        self.block_n / self.warps_n
    }
    /// Dynamic shared memory: `stages` buffers of an A and a B tile.
    pub const fn smem_bytes(&self, dtype: DType) -> u32 {
        self.stages * (self.block_m + self.block_n) * self.block_k * dtype.size()
    }
    /// Estimated 32-bit registers per thread: accumulators, one k-step of A and B
    /// fragments, and a fixed allowance for addresses and loop state.
    pub const fn est_regs(&self, dtype: DType) -> u32 {
        let acc = self.warp_m() * self.warp_n() / 32;
        // An A fragment is 16x16 (4 regs of 16-bit pairs), a B fragment 16x8 (2 regs);
        // f32 (tf32) operands take twice the registers per element.
        let scale = dtype.size() / 2;
        let a_frag = (self.warp_m() / 16) * 4 * scale;
        let b_frag = (self.warp_n() / 8) * 2 * scale;
        // The allowance (addresses, pipeline indices, epilogue) is read off ptxas: 64x64
        // warp tiles use 216-250 registers; 32x128 ones pass 255 and spill.
        acc + 2 * (a_frag + b_frag) + 56
    }
}

impl SimtTile {
    /// Threads per work-group.
    pub const fn threads(&self) -> u32 {
        self.mdimc * self.ndimc
    }
    /// Rows of C per thread (CLBlast MWI).
    pub const fn mwi(&self) -> u32 {
        self.mwg / self.mdimc
    }
    /// Columns of C per thread (NWI).
    pub const fn nwi(&self) -> u32 {
        self.nwg / self.ndimc
    }
    /// Local memory of the two tiles, bytes (operands are held as f32 there).
    pub const fn local_bytes(&self) -> u32 {
        self.kwg * (self.mwg + SIMT_LOCAL_PAD + self.nwg + SIMT_LOCAL_PAD) * 4
    }
    /// Estimated registers per thread: the accumulator tile, one column of A and row of
    /// B, and an allowance for indices.
    pub const fn est_regs(&self) -> u32 {
        self.mwi() * self.nwi() + self.mwi() + self.nwi() + 24
    }
}

impl TileConfig {
    /// Threads per block.
    pub fn threads(&self) -> u32 {
        match self {
            TileConfig::Mma(t) => t.threads(),
            TileConfig::Simt(t) => t.threads(),
        }
    }
    /// (rows, columns) of C per block.
    pub fn block_mn(&self) -> (u32, u32) {
        match self {
            TileConfig::Mma(t) => (t.block_m, t.block_n),
            TileConfig::Simt(t) => (t.mwg, t.nwg),
        }
    }
    /// Shared/local memory per block, bytes.
    pub fn smem_bytes(&self, dtype: DType) -> u32 {
        match self {
            TileConfig::Mma(t) => t.smem_bytes(dtype),
            TileConfig::Simt(t) => t.local_bytes(),
        }
    }
    /// Estimated registers per thread.
    pub fn est_regs(&self, dtype: DType) -> u32 {
        match self {
            TileConfig::Mma(t) => t.est_regs(dtype),
            TileConfig::Simt(t) => t.est_regs(),
        }
    }
    /// Preprocessor constants the generated source expects (`-D NAME=value`).
    pub fn defines(&self) -> Vec<(&'static str, u32)> {
        match *self {
            TileConfig::Mma(t) => vec![
                ("BM", t.block_m),
                ("BN", t.block_n),
                ("BK", t.block_k),
                ("WARPS_M", t.warps_m),
                ("WARPS_N", t.warps_n),
                ("STAGES", t.stages),
                ("GROUP_M", t.group_m),
            ],
            TileConfig::Simt(t) => vec![
                ("MWG", t.mwg),
                ("NWG", t.nwg),
                ("KWG", t.kwg),
                ("MDIMC", t.mdimc),
                ("NDIMC", t.ndimc),
                ("VW", t.vw),
                ("GROUP_M", t.group_m),
            ],
        }
    }
    /// Launch geometry for an M×N output. Blocks are numbered linearly along grid x;
    /// the kernel maps that number to a tile in GROUP_M order. Block dimension 0 runs
    /// along N so that neighbouring threads store neighbouring columns.
    pub fn launch(&self, m: usize, n: usize, dtype: DType) -> LaunchDims {
        let (bm, bn) = self.block_mn();
        let tiles = (m.div_ceil(bm as usize) * n.div_ceil(bn as usize)) as u32;
        match self {
            TileConfig::Mma(t) => LaunchDims {
                grid: [tiles, 1, 1],
                block: [t.threads(), 1, 1],
                smem_bytes: t.smem_bytes(dtype),
            },
            TileConfig::Simt(t) => LaunchDims {
                grid: [tiles, 1, 1],
                block: [t.ndimc, t.mdimc, 1],
                smem_bytes: 0,
            },
        }
    }
}

impl fmt::Display for TileConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TileConfig::Mma(t) => write!(
                f,
                "mma {}x{}x{} warps {}x{} stages {} group {}",
                t.block_m, t.block_n, t.block_k, t.warps_m, t.warps_n, t.stages, t.group_m
            ),
            TileConfig::Simt(t) => write!(
                f,
                "simt {}x{}x{} threads {}x{} vw {} group {}",
                t.mwg, t.nwg, t.kwg, t.mdimc, t.ndimc, t.vw, t.group_m
            ),
        }
    }
}
