//! The `gemv` family: products with at most 8 rows (decode-size M: one token, a small
//! batch) as a streaming kernel that reads B once at close to the copy bandwidth.
//!
//! With M ≤ 8 the product is memory-bound on every chip: each of B's K·N elements is used
//! M times. A tensor-core tile pads M to 64 or 128 rows and still has to stream all of B;
//! this kernel reads B's columns (K-contiguous: `w: Matrix<T, ColMajor>`, the nn.Linear
//! weight) in 16-byte chunks, many in flight per lane, keeps A's few rows in registers,
//! and splits K over the warps of a block (`KSPLIT`) when N alone cannot fill the chip.
//! The sums are reduced in a fixed order, so the result is the same on every run.
//!
//! It serves CUDA and OpenCL targets (`emit.rs`, `opencl.rs`), f16/bf16/f32 operands (f32
//! and tf32 kernels compute in full f32), B K-major and A in either layout;
//! [`KernelFamily::accepts`] takes calls with M ≤ `MR`. Every other call goes to the
//! families after it.

mod emit;
mod opencl;

use super::{KernelFamily, LaunchDims, Machine, PlanCtx, Problem, Resources, Rule};
use crate::codegen::Variant;
use crate::ir::{DType, GemmIr, Layout};
use crate::space::TuneSpace;
use crate::target::{Backend, Instr, TargetSpec};
use serde::{Deserialize, Serialize};

/// A streaming-GEMV configuration: the values of its `-D` constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GemvTile {
    /// Most rows of A (and C) a launch handles (1, 2, 4 or 8).
    pub mr: u32,
    /// Warps per block.
    pub warps: u32,
    /// Output columns per warp group.
    pub cols: u32,
    /// Warps that split K for the same columns (a divisor of `warps`).
    pub ksplit: u32,
}

impl GemvTile {
    /// Output columns per block.
    pub const fn block_n(&self) -> u32 {
        self.warps / self.ksplit * self.cols
    }
    /// Threads per block.
    pub const fn threads(&self) -> u32 {
        32 * self.warps
    }
    /// The reduction buffer, bytes.
    pub const fn smem_bytes(&self) -> u32 {
        self.warps * self.mr * self.cols * 4
    }
}

/// The `gemv` family.
pub struct Gemv;

impl KernelFamily for Gemv {
    type Tile = GemvTile;
    const ID: super::FamilyId = super::FamilyId::Gemv;

    fn instr(&self) -> Instr {
        Instr::Fma
    }

    /// A shape specialist: planned before the general families, so that a call with few
    /// rows gets it by default; after `decode` where that serves the kernel (faster at
    /// every decode-size shape measured on the H200: 1×12288×4096 in 31.6 µs against 34.5).
    fn preference(&self, _target: &TargetSpec) -> (u8, usize) {
        (0, 1)
    }

    /// A few configs are enough: the space is small and only decode-size calls use them.
    fn plan_share(&self) -> usize {
        1
    }

    fn serves(&self, target: &TargetSpec, ir: &GemmIr) -> Result<(), String> {
        if target.backend == Backend::Host {
            return Err("the host backend runs the reference, not kernels".into());
        }
        if ir.b_layout() != Layout::ColMajor {
            return Err("the gemv kernel streams K-contiguous B columns (B column-major)".into());
        }
        Ok(())
    }

    fn complete(&self) -> bool {
        false
    }

    fn accepts(&self, t: &GemvTile, _ir: &GemmIr, p: Problem) -> Result<(), String> {
        if p.m as u64 > t.mr as u64 {
            return Err(format!("M = {} is more than the {} rows of this config", p.m, t.mr));
        }
        Ok(())
    }

    /// `tune(block_m = ..)` restricts the rows per block (`MR`) and `tune(block_n = ..)`
    /// the columns per block, as for every family; the other keys do not apply.
    fn space(&self, _cx: &PlanCtx, space: &TuneSpace) -> Vec<GemvTile> {
        let rows = space.pick("block_m", &[1, 2, 4, 8]);
        let mut v = Vec::new();
        for mr in [1, 2, 4, 8].into_iter().filter(|r| rows.contains(r)) {
            for warps in [4, 8] {
                for cols in [1, 2, 4] {
                    for ksplit in [1, 2, 4, 8] {
                        let t = GemvTile {
                            mr,
                            warps,
                            cols,
                            ksplit,
                        };
                        if space.0.get("block_n").is_none_or(|bn| bn.contains(&t.block_n())) {
                            v.push(t);
                        }
                    }
                }
            }
        }
        v
    }

    fn rules(&self) -> &'static [Rule<GemvTile>] {
        &RULES
    }

    /// Per row count, more columns per warp (more independent loads in flight, A reused
    /// more) and a K split that leaves a few columns per block; the tuner decides.
    fn score(&self, _cx: &PlanCtx, t: &GemvTile) -> f64 {
        let mut s = 10.0 - t.mr as f64;
        s += t.cols as f64 * 0.5;
        s -= (t.ksplit as f64).log2() * 0.3;
        s += if t.warps == 8 { 0.2 } else { 0.0 };
        s
    }

    fn resources(&self, t: &GemvTile, _dtype: DType) -> Resources {
        Resources {
            threads: t.threads(),
            smem_bytes: 0,
            est_regs: 2 * t.mr * t.cols + t.mr * 8 + 40,
            ring_k: 32 * 16 * t.ksplit,
        }
    }

    /// `(MR, columns per block)`: what one block computes.
    fn block_mn(&self, t: &GemvTile) -> (u32, u32) {
        (t.mr, t.block_n())
    }

    fn launch(&self, t: &GemvTile, _ir: &GemmIr, p: Problem, _machine: Machine) -> LaunchDims {
        LaunchDims {
            grid: [p.n.div_ceil(t.block_n() as usize) as u32, 1, p.batch as u32],
            block: [t.threads(), 1, 1],
            // The reduction buffer is static shared memory.
            smem_bytes: 0,
            persistent: None,
        }
    }

    fn defines(&self, t: &GemvTile, ir: &GemmIr, _backend: Backend, p: Problem) -> Vec<(&'static str, u32)> {
        let mut d = vec![("MR", t.mr), ("WARPS", t.warps), ("COLS", t.cols), ("KSPLIT", t.ksplit)];
        d.extend(crate::family::shape_flags::shape_defines(ir, p));
        d
    }

    fn emit(&self, ir: &GemmIr, backend: Backend, variant: Variant) -> String {
        match backend {
            Backend::Opencl => opencl::emit_variant(ir, variant),
            _ => emit::emit_variant(ir, variant),
        }
    }

    /// Half and twice the K split, the other warp count, one column more or less.
    fn neighbours(&self, t: &GemvTile) -> Vec<(String, GemvTile)> {
        let mut v = Vec::new();
        for ksplit in [t.ksplit / 2, t.ksplit * 2] {
            if ksplit >= 1 && t.warps.is_multiple_of(ksplit) {
                v.push((format!("ksplit {ksplit}"), GemvTile { ksplit, ..*t }));
            }
        }
        let warps = if t.warps == 8 { 4 } else { 8 };
        if warps % t.ksplit == 0 {
            v.push((format!("warps {warps}"), GemvTile { warps, ..*t }));
        }
        for cols in [t.cols - 1, t.cols + 1] {
            if (1..=4).contains(&cols) {
                v.push((format!("cols {cols}"), GemvTile { cols, ..*t }));
            }
        }
        v
    }

    /// Blocks own disjoint column ranges: there is no launch order to choose.
    fn group_m(&self, _t: &GemvTile) -> u32 {
        1
    }

    fn with_group_m(&self, t: &GemvTile, _group_m: u32) -> GemvTile {
        *t
    }

    fn describe(&self, t: &GemvTile) -> String {
        format!(
            "gemv rows {} warps {} cols {} ksplit {} ({} columns per block)",
            t.mr,
            t.warps,
            t.cols,
            t.ksplit,
            t.block_n()
        )
    }
}

// Rationale per rule: the source's static_asserts and the register budget.
const RULES: [Rule<GemvTile>; 6] = [
    // Bounds first, so that the rules after them compute with small numbers (a config
    // read from disk may hold anything).
    Rule {
        name: "extents",
        check: |_, t| {
            (!(1..=32).contains(&t.warps) || !(1..=8).contains(&t.cols) || !(1..=32).contains(&t.ksplit)).then(|| {
                format!(
                    "warps {}, cols {}, ksplit {} (1-32, 1-8 and 1-32)",
                    t.warps, t.cols, t.ksplit
                )
            })
        },
    },
    Rule {
        name: "rows",
        check: |_, t| (!matches!(t.mr, 1 | 2 | 4 | 8)).then(|| format!("MR = {} (1, 2, 4 or 8)", t.mr)),
    },
    Rule {
        name: "threads",
        check: |x, t| {
            (t.warps == 0 || t.threads() > x.target.max_threads_per_block)
                .then(|| format!("{} warps (1 to {})", t.warps, x.target.max_threads_per_block / 32))
        },
    },
    // K is split over whole warps of a group; one thread applies the epilogue to each
    // output of the block.
    Rule {
        name: "ksplit",
        check: |_, t| {
            (t.ksplit == 0 || t.cols == 0 || t.warps % t.ksplit != 0 || t.block_n() * t.mr > t.threads()).then(|| {
                format!(
                    "KSPLIT {} must divide {} warps, with {} columns x {} rows <= {} threads",
                    t.ksplit,
                    t.warps,
                    t.cols,
                    t.mr,
                    t.threads()
                )
            })
        },
    },
    // OpenCL has no warp shuffles: every work-item's partial sums go through local
    // memory (`cg_red[MR][COLS][threads]`). CUDA reduces in registers first.
    Rule {
        name: "local memory",
        check: |x, t| {
            let bytes = t.threads() * t.mr * t.cols * 4;
            (x.target.backend == Backend::Opencl && bytes > x.target.smem_per_block).then(|| {
                format!(
                    "{bytes} bytes of partial sums in local memory (the device has {})",
                    x.target.smem_per_block
                )
            })
        },
    },
    // Each output in flight is a register; 8 rows of 16-byte chunks of A another 32.
    Rule {
        name: "registers",
        check: |x, t| {
            let r = 2 * t.mr * t.cols + t.mr * 8 + 40;
            (r > x.target.regs_per_thread.min(128))
                .then(|| format!("~{r} registers per thread (at most 128 keeps 2 blocks of 256 threads per SM)"))
        },
    },
];
