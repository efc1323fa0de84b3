//! The `gemv_n` family: products with at most 4 rows whose B is stored N-contiguous
//! (`w: Matrix<T>`, row-major K×N: `x · W` as NumPy, JAX and the DSL's default layout
//! store the weight), streamed once at close to the copy bandwidth.
//!
//! The `gemv` and `decode` kernels stream K-contiguous columns of B; a row-major B has
//! none, and the general families pad M to 64 or more rows. Here a lane owns a 16-byte
//! chunk of a row of B (8 columns of f16/bf16, 4 of f32) and walks down K, so a warp's
//! loads are whole sectors of B's rows; A's few rows (K-contiguous or not) are read a
//! chunk of K at a time and reused for the chunk's columns. A block's lanes and warps
//! split K for `CHUNKS` chunks of columns, and the partial sums are reduced in a fixed
//! order (the same bits on every run); a strip's K may be split over blocks as well, the
//! last of them adding the partial sums in split order. CUDA and OpenCL C
//! (`emit.rs`, `opencl.rs`), f16, bf16 and f32 operands in f32.
//!
//! Measured on the H200 (bench/results/h200-2026-12-04y1..y3): with M = 1 it streams W at
//! 1.03-1.13x cuBLAS reading the same row-major W (1x12288x4096 34.9 µs, 1x4096x11008 32.9),
//! at M = 4 about as fast as wgmma's split-K 64-row tiles; 8 rows take 140-165 registers
//! (one block per SM) and lose to wgmma, so the plan has `MR` up to 4 (a `--config` with
//! `mr` 8 still runs). A tensor-core form (movmatrix-transposed loads into mma.m16n8k16,
//! batch y3) was correct but no faster, and is not kept.
//!
//! Turned around (`Cᵀ = Bᵀ · Aᵀ`, [`GemvNTile::swap`]), the same kernel takes products
//! with at most 4 *columns* whose A is M-contiguous (A column-major), streaming A.

mod emit;
mod opencl;

use super::{turned, KernelFamily, LaunchDims, Machine, PlanCtx, Problem, Resources, Rule, Workspace};
use crate::codegen::Variant;
use crate::ir::{DType, GemmIr, Layout};
use crate::space::TuneSpace;
use crate::target::{Backend, DeviceType, Instr, TargetSpec};
use serde::{Deserialize, Serialize};

/// A configuration of the N-contiguous streaming GEMV: the values of its `-D` constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GemvNTile {
    /// Most rows of A (and C) a launch handles (1, 2, 4 or 8; the plan has up to 4).
    pub mr: u32,
    /// Warps per block.
    pub warps: u32,
    /// 16-byte chunks of columns per block (the block's other lanes split K).
    pub chunks: u32,
    /// Blocks that split K for the same columns (the last to finish adds the partial
    /// sums in split order). Absent in records written before it (1).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub ksplit: u32,
    /// Computes `Cᵀ = Bᵀ · Aᵀ`: the call's N (at most `mr`) takes M's place, A's
    /// M-contiguous columns are streamed as B's rows are otherwise, and "columns" below
    /// count rows of C.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub swap: bool,
}

impl GemvNTile {
    /// Threads per block.
    pub const fn threads(&self) -> u32 {
        32 * self.warps
    }
    /// Output columns per block for operands of `dtype` (a chunk is 16 bytes).
    pub const fn block_n(&self, dtype: DType) -> u32 {
        self.chunks * (16 / dtype.size())
    }
    /// Output columns per block as the plan counts them (f16/bf16: 8 per chunk).
    const fn block_n16(&self) -> u32 {
        self.chunks * 8
    }
}

fn one() -> u32 {
    1
}

fn is_one(k: &u32) -> bool {
    *k == 1
}

/// The `gemv_n` family.
pub struct GemvN;

impl KernelFamily for GemvN {
    type Tile = GemvNTile;
    const ID: super::FamilyId = super::FamilyId::GemvN;

    fn instr(&self) -> Instr {
        Instr::Fma
    }

    /// A shape specialist: calls with few rows (or, turned around, few columns) get it by
    /// default; after `gemv`, whose layouts it never shares (it streams the operand
    /// `gemv` cannot: N- or M-contiguous, not K-contiguous), and after `decode_n`, which
    /// takes the calls of A and B row-major on CUDA (faster from 2 rows on, z3).
    fn preference(&self, _target: &TargetSpec) -> (u8, usize) {
        (0, 3)
    }

    /// None: every config comes beside the general families' budget (see `plan_extra`),
    /// so a kernel that gains it keeps the plan it had.
    fn plan_share(&self, _cx: &PlanCtx) -> usize {
        0
    }

    /// Every config of the forms that serve the kernel that its rules keep: no other
    /// family has a kernel for these calls.
    fn plan_extra(&self, cx: &PlanCtx, space: &TuneSpace) -> usize {
        super::rule_passing(self, cx, space)
    }

    fn serves(&self, target: &TargetSpec, ir: &GemmIr) -> Result<(), String> {
        if target.backend == Backend::Host {
            return Err("the host backend runs the reference, not kernels".into());
        }
        if modes(ir).is_empty() {
            return Err(
                "the gemv_n kernel streams N-contiguous rows of B (B row-major) or, turned around, M-contiguous columns of A (A column-major)"
                    .into(),
            );
        }
        Ok(())
    }

    fn complete(&self) -> bool {
        false
    }

    fn accepts(&self, t: &GemvNTile, ir: &GemmIr, p: Problem) -> Result<(), String> {
        turned::check_small_side(t.swap, p, t.mr)?;
        super::strip_sum::check_workspace(workspace(t, ir, p))
    }

    /// `tune(block_m = ..)` restricts the rows per block (`MR`) and `tune(block_n = ..)`
    /// the columns per block (of f16/bf16: 8 a chunk), `tune(ksplit = ..)` the split of
    /// K; turned around the keys follow C, as for `gemv`. Per form and `MR` (1, 2 or 4),
    /// blocks of 8 warps: narrow strips over all of K (4 or 8 chunks: 64 or 128 bytes of
    /// each row of B), and wide ones (8 or 32 chunks: up to 512 bytes a row)
    /// whose K is split over 4, 8 or 16 blocks (on an OpenCL CPU over 4, which fills its
    /// few cores where the strips alone cannot: a narrow N with a long K).
    fn space(&self, cx: &PlanCtx, space: &TuneSpace) -> Vec<GemvNTile> {
        let splits: &[u32] = if cx.target.device_type == DeviceType::Cpu {
            &[1, 4]
        } else {
            &[1, 4, 8, 16]
        };
        let ksplits = space.pick("ksplit", splits);
        let mut v = Vec::new();
        for swap in modes(cx.ir) {
            let (small, wide) = turned::keys(swap);
            let rows = space.pick(small, &[1, 2, 4]);
            for mr in [1, 2, 4].into_iter().filter(|r| rows.contains(r)) {
                for (chunks, ksplit) in [(4, 1), (8, 1), (8, 4), (8, 8), (32, 4), (32, 8), (32, 16)] {
                    let t = GemvNTile {
                        mr,
                        warps: 8,
                        chunks,
                        ksplit,
                        swap,
                    };
                    if ksplits.contains(&ksplit) && space.0.get(wide).is_none_or(|bn| bn.contains(&t.block_n16())) {
                        v.push(t);
                    }
                }
            }
        }
        v
    }

    /// The two forms and the splits apart, each of its block tiles kept.
    fn plan_class(&self, t: &GemvNTile) -> (u32, u32) {
        (t.ksplit, t.swap as u32)
    }

    fn k_split(&self, t: &GemvNTile) -> u32 {
        t.ksplit
    }

    fn workspace(&self, t: &GemvNTile, ir: &GemmIr, p: Problem, _machine: Machine) -> Option<Workspace> {
        workspace(t, ir, p)
    }

    fn rules(&self) -> &'static [Rule<GemvNTile>] {
        &RULES
    }

    /// Fewer rows first (a call's default is the first config that takes it: the
    /// smallest `MR` that holds its rows), then 8 chunks with K split in 4: on the H200
    /// (batch y4) the tuned winner at 1x4096x11008, 2x and 4x4096x4096, and 6% behind
    /// K whole at 1x12288x4096, where K whole leaves N = 4096 with 64 blocks (46.9 µs
    /// against 33.4 at 1x4096x11008); the tuner decides.
    fn score(&self, _cx: &PlanCtx, t: &GemvNTile) -> f64 {
        let mut s = 100.0 - 10.0 * t.mr as f64;
        s += if t.chunks == 8 {
            2.0
        } else {
            (t.chunks as f64).log2() * 0.1
        };
        s += if t.ksplit == 4 { 1.0 } else { 0.0 };
        s
    }

    /// A block's loop takes `CG_VEC` rows of K per K-lane (`threads / chunks` of them),
    /// each of `KSPLIT` blocks its share of K.
    fn resources(&self, t: &GemvNTile, dtype: DType) -> Resources {
        Resources {
            threads: t.threads(),
            smem_bytes: 0,
            est_regs: est_regs(t),
            ring_k: t.threads() / t.chunks.max(1) * (16 / dtype.size()) * t.ksplit.max(1),
        }
    }

    fn turned(&self, t: &GemvNTile) -> bool {
        t.swap
    }

    /// `(MR, columns per block)` of C (turned around, `(rows per block, MR)`), counted for
    /// 16-bit operands.
    fn block_mn(&self, t: &GemvNTile) -> (u32, u32) {
        turned::block_mn(t.swap, t.mr, t.block_n16())
    }

    fn launch(&self, t: &GemvNTile, ir: &GemmIr, p: Problem, _machine: Machine) -> LaunchDims {
        LaunchDims {
            grid: [strips(t, ir, p) as u32, t.ksplit, p.batch as u32],
            block: [t.threads(), 1, 1],
            // The reduction buffer is static shared memory.
            smem_bytes: 0,
            persistent: None,
        }
    }

    fn defines(&self, t: &GemvNTile, ir: &GemmIr, _backend: Backend, p: Problem) -> Vec<(&'static str, u32)> {
        let mut d = vec![
            ("MR", t.mr),
            ("WARPS", t.warps),
            ("CHUNKS", t.chunks),
            ("KSPLIT", t.ksplit),
            ("SWAP", t.swap as u32),
        ];
        d.extend(crate::family::shape_flags::shape_defines(ir, p));
        d
    }

    fn emit(&self, ir: &GemmIr, backend: Backend, variant: Variant) -> String {
        match backend {
            Backend::Opencl => opencl::emit_variant(ir, variant),
            _ => emit::emit_variant(ir, variant),
        }
    }

    /// The other warp count, half and twice the chunks and the split.
    fn neighbours(&self, t: &GemvNTile) -> Vec<(String, GemvNTile)> {
        let warps = if t.warps == 8 { 4 } else { 8 };
        let mut v = vec![(format!("warps {warps}"), GemvNTile { warps, ..*t })];
        for chunks in [t.chunks / 2, t.chunks * 2] {
            if (1..=32).contains(&chunks) {
                v.push((format!("chunks {chunks}"), GemvNTile { chunks, ..*t }));
            }
        }
        for ksplit in [t.ksplit / 2, t.ksplit * 2] {
            if (1..=32).contains(&ksplit) {
                v.push((format!("ksplit {ksplit}"), GemvNTile { ksplit, ..*t }));
            }
        }
        v
    }

    /// Blocks own disjoint column ranges: there is no launch order to choose.
    fn group_m(&self, _t: &GemvNTile) -> u32 {
        1
    }

    fn with_group_m(&self, t: &GemvNTile, _group_m: u32) -> GemvNTile {
        *t
    }

    fn describe(&self, t: &GemvNTile) -> String {
        let split = if t.ksplit > 1 {
            format!(" ksplit {}", t.ksplit)
        } else {
            String::new()
        };
        if t.swap {
            return format!(
                "gemv_n swap: N <= {}, warps {} chunks {}{split} ({} rows of C per block, 16-bit)",
                t.mr,
                t.warps,
                t.chunks,
                t.block_n16()
            );
        }
        format!(
            "gemv_n rows {} warps {} chunks {}{split} ({} columns per block, 16-bit)",
            t.mr,
            t.warps,
            t.chunks,
            t.block_n16()
        )
    }
}

/// The forms that serve `ir`, plain (`false`) first: the plain one streams B's rows and
/// needs them N-contiguous; the turned-around one streams A's columns, M-contiguous.
/// Never a layout `gemv` streams: theirs are K-contiguous.
fn modes(ir: &GemmIr) -> Vec<bool> {
    let mut v = Vec::new();
    if ir.b_layout() == Layout::RowMajor {
        v.push(false);
    }
    if ir.a_layout() == Layout::ColMajor {
        v.push(true);
    }
    v
}

/// Strips of columns (of C turned around: rows) one launch walks, per product.
fn strips(t: &GemvNTile, ir: &GemmIr, p: Problem) -> usize {
    turned::wide(t.swap, p).div_ceil(t.block_n(ir.ab_dtype) as usize)
}

/// A split-K launch's workspace ([`super::strip_sum::workspace`]): tiles of `MR` × the
/// strip's columns, a strip per block of columns of every product.
fn workspace(t: &GemvNTile, ir: &GemmIr, p: Problem) -> Option<Workspace> {
    let strips = strips(t, ir, p) * p.batch.max(1);
    super::strip_sum::workspace(strips, t.ksplit, t.mr * t.block_n(ir.ab_dtype))
}

/// Accumulators (`MR` × 8), a step's 8 chunks of W and `MR` chunks of X, addressing.
const fn est_regs(t: &GemvNTile) -> u32 {
    8 * t.mr + 32 + 4 * t.mr + 40
}

// Rationale per rule: the source's static_asserts and the register budget.
const RULES: [Rule<GemvNTile>; 4] = [
    // Bounds first, so that the rules after them compute with small numbers (a config
    // read from disk may hold anything).
    Rule {
        name: "extents",
        check: |_, t| {
            (!matches!(t.mr, 1 | 2 | 4 | 8)
                || !(1..=32).contains(&t.warps)
                // A block's chunks are lanes of one warp that walk different columns.
                || !matches!(t.chunks, 1 | 2 | 4 | 8 | 16 | 32)
                || !(1..=32).contains(&t.ksplit))
            .then(|| {
                format!(
                    "MR {}, warps {}, chunks {}, ksplit {} (1, 2, 4 or 8; 1-32; a power of two up to 32; 1-32)",
                    t.mr, t.warps, t.chunks, t.ksplit
                )
            })
        },
    },
    Rule {
        name: "threads",
        check: |x, t| {
            (t.threads() > x.target.max_threads_per_block)
                .then(|| format!("{} warps (1 to {})", t.warps, x.target.max_threads_per_block / 32))
        },
    },
    // CUDA reduces the lanes by shuffles first, then `WARPS x CHUNKS x MR x 8` floats in
    // shared memory; OpenCL (no shuffles) one row at a time, `threads x 8` floats.
    Rule {
        name: "local memory",
        check: |x, t| {
            let bytes = t.warps * t.chunks * t.mr * 8 * 4;
            let bytes = if x.target.backend == Backend::Opencl {
                bytes.max(t.threads() * 8 * 4)
            } else {
                bytes
            };
            (bytes > x.target.smem_per_block).then(|| {
                format!(
                    "{bytes} bytes of partial sums in shared memory (the device has {})",
                    x.target.smem_per_block
                )
            })
        },
    },
    Rule {
        name: "registers",
        check: |x, t| {
            let r = est_regs(t);
            (r > x.target.regs_per_thread.min(168)).then(|| {
                format!("~{r} registers per thread (at most 168 keeps a block of 256 threads and a half per SM)")
            })
        },
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family::{FamilyId, TileConfig};
    use crate::ir::AccMode;
    use crate::plan::plan_target;
    use crate::target::{Targets, BUILTIN_TARGETS};

    fn ir(a: Layout, b: Layout) -> GemmIr {
        GemmIr::matmul("t", DType::F16, AccMode::F32, a, b)
    }

    fn planned(plan: &crate::plan::Plan) -> Vec<GemvNTile> {
        plan.configs
            .iter()
            .filter_map(|c| match c {
                TileConfig::GemvN(t) => Some(*t),
                _ => None,
            })
            .collect()
    }

    /// The plain form needs B's rows N-contiguous, the turned-around one A's columns
    /// M-contiguous: never a layout whose streamed side `gemv` reads K-contiguous.
    #[test]
    fn each_form_serves_the_layouts_whose_streamed_operand_is_not_k_contiguous() {
        use Layout::{ColMajor as C, RowMajor as R};
        assert_eq!(modes(&ir(R, R)), [false]);
        assert_eq!(modes(&ir(C, C)), [true]);
        assert_eq!(modes(&ir(C, R)), [false, true]);
        assert!(modes(&ir(R, C)).is_empty());
        let t = Targets::parse(BUILTIN_TARGETS).unwrap();
        let err = GemvN.serves(t.get("h200").unwrap(), &ir(R, C)).unwrap_err();
        assert!(err.contains("B row-major"), "{err}");
    }

    #[test]
    fn a_config_takes_calls_up_to_its_rows_and_its_grid_covers_the_columns() {
        let t = GemvNTile {
            mr: 4,
            warps: 8,
            chunks: 2,
            ksplit: 1,
            swap: false,
        };
        let rr = ir(Layout::RowMajor, Layout::RowMajor);
        assert!(GemvN.accepts(&t, &rr, Problem::new(4, 4096, 64)).is_ok());
        assert!(GemvN.accepts(&t, &rr, Problem::new(5, 4096, 64)).is_err());
        let dims = GemvN.launch(&t, &rr, Problem::new(3, 4097, 64), Machine { units: 132 });
        assert_eq!(dims.grid, [257, 1, 1], "16 columns a block");
        let f32_rr = GemmIr::matmul("t", DType::F32, AccMode::F32, Layout::RowMajor, Layout::RowMajor);
        let dims = GemvN.launch(&t, &f32_rr, Problem::new(3, 4097, 64), Machine { units: 132 });
        assert_eq!(dims.grid, [513, 1, 1], "f32: 8 columns a block");
        let swapped = GemvNTile { swap: true, ..t };
        let cc = ir(Layout::ColMajor, Layout::ColMajor);
        assert!(GemvN.accepts(&swapped, &cc, Problem::new(4096, 3, 64)).is_ok());
        assert!(GemvN.accepts(&swapped, &cc, Problem::new(3, 4096, 64)).is_err());
        assert_eq!(GemvN.block_mn(&swapped), (16, 4));
        assert!(GemvN
            .defines(&swapped, &cc, Backend::Cuda, Problem::new(9, 3, 64))
            .contains(&("SWAP", 1)));
        let json = serde_json::to_string(&t).unwrap();
        assert!(!json.contains("swap"), "{json}");
    }

    /// Every config comes beside the general families' budget, and a call with few rows
    /// gets the smallest `MR` that holds it by default.
    #[test]
    fn the_plan_keeps_every_config_beside_the_general_families() {
        let targets = Targets::parse(BUILTIN_TARGETS).unwrap();
        for name in ["h200", "opencl_cpu"] {
            let target = targets.get(name).unwrap();
            let rr = ir(Layout::RowMajor, Layout::RowMajor);
            let cx = PlanCtx::new(target, &rr);
            let plan = plan_target(&rr, target, &TuneSpace::default());
            let ours = planned(&plan);
            let mut sorted = ours.clone();
            sorted.sort_by_key(|t| (t.mr, t.chunks, t.ksplit));
            // Every config of the space but those a rule prunes.
            let kept: Vec<GemvNTile> = GemvN
                .space(&cx, &TuneSpace::default())
                .into_iter()
                .filter(|t| super::super::first_broken_rule(&GemvN, &cx, t).is_none())
                .collect();
            assert_eq!(sorted, kept, "{name}");
            assert_eq!(ours.len(), if name == "h200" { 21 } else { 12 }, "{name}");
            let others: Vec<FamilyId> = plan
                .families
                .iter()
                .copied()
                .filter(|&f| f != FamilyId::GemvN)
                .collect();
            assert_eq!(
                plan.configs.len() - ours.len(),
                crate::plan::total_budget(&cx, &others, &TuneSpace::default()),
                "{name}: the general families keep their budget"
            );
            // With A column-major (no decode_n there) the call's first config is gemv_n's.
            let cr = ir(Layout::ColMajor, Layout::RowMajor);
            let first = plan_target(&cr, target, &TuneSpace::default())
                .configs
                .into_iter()
                .find(|c| c.family().accepts(c, &cr, Problem::new(1, 4096, 4096)).is_ok())
                .unwrap();
            assert!(
                matches!(first, TileConfig::GemvN(t) if t.mr == 1 && t.chunks == 8 && t.ksplit == 4),
                "{name}: {first}"
            );
        }
        let mut space = TuneSpace::default();
        space.0.insert("block_n".into(), vec![32]);
        let rr = ir(Layout::RowMajor, Layout::RowMajor);
        let h200 = targets.get("h200").unwrap();
        let cx = PlanCtx::new(h200, &rr);
        assert!(GemvN.space(&cx, &space).iter().all(|t| t.chunks == 4));
        space.0.insert("block_n".into(), vec![64, 256]);
        space.0.insert("ksplit".into(), vec![8]);
        let picked = GemvN.space(&cx, &space);
        assert_eq!(picked.len(), 6, "{picked:?}");
        assert!(picked.iter().all(|t| t.ksplit == 8));
    }
}
