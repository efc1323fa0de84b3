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
//! Rows that do not start on 16-byte boundaries (an odd K, a view of odd pitch: the
//! decode-size calls staging leaves where they lie) are read the same way: each lane
//! loads the one or two aligned 16-byte chunks that hold its elements and shifts them
//! into place in registers (`cg_win`), where it once loaded elements one at a time. The
//! chunk that crosses K is masked in both forms: what lies past a row's K (a padded
//! view's padding, the next row) never reaches a sum.
//!
//! It serves CUDA and OpenCL targets (`emit.rs`, `opencl.rs`), f16/bf16/f32 operands (f32
//! and tf32 kernels compute in full f32), B K-major and A in either layout;
//! [`KernelFamily::accepts`] takes calls with M ≤ `MR`. Every other call goes to the
//! families after it.
//!
//! Products with at most 8 *columns* (N ≤ 8: a weight applied from the left, `W · x`, or
//! a few output features) are the same problem turned around: `Cᵀ = Bᵀ · Aᵀ` streams A's
//! rows where the plain kernel streams B's columns. A [`GemvTile::swap`] config runs that
//! form (the `SWAP` define swaps the operands' roles, the extents and the output's
//! coordinates in the one source), for kernels whose A is K-contiguous (A row-major);
//! B may then be in either layout.
//!
//! The few rows of the small side may be stored *across* (a row-major B turned around:
//! `x · W` with W K×N as NumPy keeps it; a column-major A in the plain form): each k's
//! rows are then contiguous, and are read as vectors of 8, 4, 2 or 1 elements by their
//! alignment (`cg_x_across`). At `MR` = 8 a step's k's are also interleaved over the lanes
//! by 4-byte words, so that one load of those rows covers 8 lines across the warp rather
//! than 32 (element by element, 4096x8x4096 in f32 took 0.54 ms on an H100, 10x cuBLAS;
//! now 36 µs, bench/results/h100-2026-12-06am1..am4).

mod emit;
pub(super) use emit::{chunk_helpers, x_loads, SHIFT_DOWN};
mod opencl;
pub(super) use opencl::{chunk_fn, head as opencl_head};

use super::turned::modes;
use super::{turned, KernelFamily, LaunchDims, Machine, PlanCtx, Problem, Resources, Rule};
use crate::codegen::Variant;
use crate::ir::{DType, GemmIr};
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
    /// Computes `Cᵀ = Bᵀ · Aᵀ`: the call's N (at most `mr`) takes M's place, A's rows are
    /// streamed as B's columns are otherwise, and "columns" below count rows of C.
    /// Absent in records written before it (false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub swap: bool,
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
    /// None where only the turned-around form serves the kernel: its configs all come
    /// beside the other families' shares ([`KernelFamily::plan_extra`]), so a kernel that
    /// gains it (row-major A and B) keeps the general families' budget it had.
    fn plan_share(&self, cx: &PlanCtx) -> usize {
        if modes(cx.ir).contains(&false) {
            1
        } else {
            0
        }
    }

    fn serves(&self, target: &TargetSpec, ir: &GemmIr) -> Result<(), String> {
        if target.backend == Backend::Host {
            return Err("the host backend runs the reference, not kernels".into());
        }
        if modes(ir).is_empty() {
            return Err(
                "the gemv kernel streams K-contiguous B columns (B column-major) or, turned around, K-contiguous A rows (A row-major)"
                    .into(),
            );
        }
        Ok(())
    }

    fn complete(&self) -> bool {
        false
    }

    fn accepts(&self, t: &GemvTile, _ir: &GemmIr, p: Problem) -> Result<(), String> {
        turned::check_small_side(t.swap, p, t.mr)
    }

    /// `tune(block_m = ..)` restricts the rows per block (`MR`) and `tune(block_n = ..)`
    /// the columns per block, as for every family; the other keys do not apply.
    /// A turned-around config ([`GemvTile::swap`]) computes `block_n` rows and `MR`
    /// columns of C, and the keys follow C: `block_n` restricts its `MR`, `block_m` its
    /// rows per block. Turned around, the space is a short list per `MR` (`swapped`).
    fn space(&self, cx: &PlanCtx, space: &TuneSpace) -> Vec<GemvTile> {
        let modes = modes(cx.ir);
        let mut v = Vec::new();
        if modes.contains(&false) {
            let rows = space.pick("block_m", &[1, 2, 4, 8]);
            for mr in [1, 2, 4, 8].into_iter().filter(|r| rows.contains(r)) {
                for warps in [4, 8] {
                    for cols in [1, 2, 4] {
                        for ksplit in [1, 2, 4, 8] {
                            let t = GemvTile {
                                mr,
                                warps,
                                cols,
                                ksplit,
                                swap: false,
                            };
                            if space.0.get("block_n").is_none_or(|bn| bn.contains(&t.block_n())) {
                                v.push(t);
                            }
                        }
                    }
                }
            }
        }
        if modes.contains(&true) {
            v.extend(swapped(space, cx.dtype));
        }
        v
    }

    /// The turned-around configs come beside the family's share, not out of it: they
    /// serve other calls (N ≤ 8, not M ≤ 8), and every `MR` of them is kept, as no other
    /// family has a kernel for N ≤ 8 (the plain form has `decode` after it on CUDA).
    fn plan_extra(&self, cx: &PlanCtx, space: &TuneSpace) -> usize {
        if modes(cx.ir).contains(&true) {
            swapped(space, cx.dtype).len()
        } else {
            0
        }
    }

    /// The two forms apart: the plan keeps the best of each block tile in each.
    fn plan_class(&self, t: &GemvTile) -> (u32, u32) {
        (1, t.swap as u32)
    }

    fn rules(&self) -> &'static [Rule<GemvTile>] {
        &RULES
    }

    /// Per row count, more columns per warp (more independent loads in flight, A reused
    /// more) and a K split that leaves a few columns per block; the tuner decides.
    /// Turned-around configs rank before every plain one: the plan keeps all of them
    /// ([`KernelFamily::plan_extra`]), and ranked first they cannot push a plain one out
    /// of the family's share.
    fn score(&self, _cx: &PlanCtx, t: &GemvTile) -> f64 {
        let mut s = 10.0 - t.mr as f64 + if t.swap { 100.0 } else { 0.0 };
        s += t.cols as f64 * 0.5;
        s -= (t.ksplit as f64).log2() * 0.3;
        s += if t.warps == 8 { 0.2 } else { 0.0 };
        s
    }

    fn resources(&self, t: &GemvTile, dtype: DType) -> Resources {
        Resources {
            threads: t.threads(),
            smem_bytes: 0,
            est_regs: est_regs(t.mr, t.cols, dtype),
            ring_k: 32 * 16 * t.ksplit,
        }
    }

    fn turned(&self, t: &GemvTile) -> bool {
        t.swap
    }

    /// `(MR, columns per block)`: what one block computes (of C: turned around,
    /// `(rows per block, MR)`).
    fn block_mn(&self, t: &GemvTile) -> (u32, u32) {
        turned::block_mn(t.swap, t.mr, t.block_n())
    }

    fn launch(&self, t: &GemvTile, _ir: &GemmIr, p: Problem, _machine: Machine) -> LaunchDims {
        LaunchDims {
            grid: [
                turned::wide(t.swap, p).div_ceil(t.block_n() as usize) as u32,
                1,
                p.batch as u32,
            ],
            block: [t.threads(), 1, 1],
            // The reduction buffer is static shared memory.
            smem_bytes: 0,
            persistent: None,
        }
    }

    fn defines(&self, t: &GemvTile, ir: &GemmIr, _backend: Backend, p: Problem) -> Vec<(&'static str, u32)> {
        let mut d = vec![
            ("MR", t.mr),
            ("WARPS", t.warps),
            ("COLS", t.cols),
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
        if t.swap {
            return format!(
                "gemv swap: N <= {}, warps {} cols {} ksplit {} ({} rows of C per block)",
                t.mr,
                t.warps,
                t.cols,
                t.ksplit,
                t.block_n()
            );
        }
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

/// The registers a thread of a gemv tile takes, roughly: each output in flight, twice
/// (the sum and its reduction), the step's `MR` rows of a 16-byte chunk of X as floats,
/// and 40 for addresses and the loop.
fn est_regs(mr: u32, cols: u32, dtype: DType) -> u32 {
    2 * mr * cols + mr * (16 / dtype.size()) + 40
}

/// The turned-around configs under the user's `space`: per `MR` (of N), one block of 8
/// warps without a K split and two of 4 warps splitting K in 2 and 4 (N alone cannot
/// fill the chip at M = 4096: 128 blocks of 32 rows), with the most columns (rows of C),
/// up to 4 and a power of two, that the register rule lets that `MR` have in `dtype`
/// (at `MR` = 8, 1 for 16-bit operands and 2 for f32, whose chunks are half the floats).
fn swapped(space: &TuneSpace, dtype: DType) -> Vec<GemvTile> {
    let (small, wide) = turned::keys(true);
    let ns = space.pick(small, &[1, 2, 4, 8]);
    let mut v = Vec::new();
    for mr in [1, 2, 4, 8].into_iter().filter(|n| ns.contains(n)) {
        let cols = [4, 2, 1]
            .into_iter()
            .find(|&c| est_regs(mr, c, dtype) <= MAX_REGS)
            .unwrap_or(1);
        for (warps, ksplit) in [(8, 1), (4, 2), (4, 4)] {
            let t = GemvTile {
                mr,
                warps,
                cols,
                ksplit,
                swap: true,
            };
            if space.0.get(wide).is_none_or(|bm| bm.contains(&t.block_n())) {
                v.push(t);
            }
        }
    }
    v
}

/// The registers a gemv thread may take: 2 blocks of 256 threads an SM.
const MAX_REGS: u32 = 128;

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
    // `est_regs`: each output in flight, and the step's chunks of X.
    Rule {
        name: "registers",
        check: |x, t| {
            let r = est_regs(t.mr, t.cols, x.dtype);
            (r > x.target.regs_per_thread.min(MAX_REGS))
                .then(|| format!("~{r} registers per thread (at most {MAX_REGS} keeps 2 blocks of 256 threads per SM)"))
        },
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family::{FamilyId, TileConfig};
    use crate::ir::{AccMode, Layout};
    use crate::plan::plan_target;
    use crate::target::{Targets, BUILTIN_TARGETS};

    fn ir(a: Layout, b: Layout) -> GemmIr {
        GemmIr::matmul("t", DType::F16, AccMode::F32, a, b)
    }

    fn gemv(plan: &crate::plan::Plan) -> Vec<GemvTile> {
        plan.configs
            .iter()
            .filter_map(|c| match c {
                TileConfig::Gemv(t) => Some(*t),
                _ => None,
            })
            .collect()
    }

    /// The plain form needs B's columns K-contiguous, the turned-around one A's rows.
    #[test]
    fn each_form_serves_the_layouts_whose_streamed_operand_is_k_contiguous() {
        use Layout::{ColMajor as C, RowMajor as R};
        assert_eq!(modes(&ir(R, C)), [false, true]);
        assert_eq!(modes(&ir(C, C)), [false]);
        assert_eq!(modes(&ir(R, R)), [true]);
        assert!(modes(&ir(C, R)).is_empty());
        let t = Targets::parse(BUILTIN_TARGETS).unwrap();
        let h200 = t.get("h200").unwrap();
        let err = Gemv.serves(h200, &ir(C, R)).unwrap_err();
        assert!(err.contains("A row-major"), "{err}");
        // `.t()` counts as the kernel sees it: Aᵀ of a column-major parameter is row-major.
        let mut at = ir(C, R);
        at.a_t = true;
        assert_eq!(modes(&at), [true]);
    }

    #[test]
    fn the_turned_around_form_takes_few_columns_and_its_grid_walks_m() {
        let t = GemvTile {
            mr: 4,
            warps: 4,
            cols: 4,
            ksplit: 2,
            swap: true,
        };
        let rc = ir(Layout::RowMajor, Layout::ColMajor);
        assert!(Gemv.accepts(&t, &rc, Problem::new(4096, 4, 64)).is_ok());
        let err = Gemv.accepts(&t, &rc, Problem::new(2, 5, 64)).unwrap_err();
        assert!(err.contains("N = 5"), "{err}");
        let plain = GemvTile { swap: false, ..t };
        assert!(Gemv.accepts(&plain, &rc, Problem::new(4096, 4, 64)).is_err());
        assert!(Gemv.accepts(&plain, &rc, Problem::new(4, 4096, 64)).is_ok());
        assert_eq!(Gemv.block_mn(&t), (8, 4));
        assert_eq!(Gemv.block_mn(&plain), (4, 8));
        let dims = Gemv.launch(&t, &rc, Problem::new(100, 3, 64), Machine { units: 132 });
        assert_eq!(dims.grid, [13, 1, 1], "100 rows of C in blocks of 8");
        assert!(Gemv
            .defines(&t, &rc, Backend::Cuda, Problem::new(100, 3, 64))
            .contains(&("SWAP", 1)));
        assert!(Gemv.describe(&t).contains("swap"));
        // Records written before the field read as plain configs, and plain configs are
        // written without it (their cache keys do not change).
        let old: GemvTile = serde_json::from_str(r#"{"mr":1,"warps":8,"cols":4,"ksplit":1}"#).unwrap();
        assert!(!old.swap);
        assert!(!serde_json::to_string(&plain).unwrap().contains("swap"));
    }

    /// Every MR of the turned-around form is planned (no other family has a kernel for
    /// N <= 8), and the plain form keeps the configs it had without it.
    #[test]
    fn the_plan_keeps_every_turned_around_config_beside_the_plain_ones() {
        let targets = Targets::parse(BUILTIN_TARGETS).unwrap();
        for name in ["h200", "opencl_cpu"] {
            let target = targets.get(name).unwrap();
            let both = gemv(&plan_target(
                &ir(Layout::RowMajor, Layout::ColMajor),
                target,
                &TuneSpace::default(),
            ));
            let swapped_planned: Vec<_> = both.iter().filter(|t| t.swap).copied().collect();
            assert_eq!(swapped_planned, swapped(&TuneSpace::default(), DType::F16), "{name}");
            for mr in [1, 2, 4, 8] {
                assert!(swapped_planned.iter().any(|t| t.mr == mr), "{name}: N <= {mr}");
            }
            let plain_only = gemv(&plan_target(
                &ir(Layout::ColMajor, Layout::ColMajor),
                target,
                &TuneSpace::default(),
            ));
            let plain: Vec<_> = both.iter().filter(|t| !t.swap).copied().collect();
            assert_eq!(plain, plain_only, "{name}");
            let rr = ir(Layout::RowMajor, Layout::RowMajor);
            let nn_plan = plan_target(&rr, target, &TuneSpace::default());
            assert_eq!(gemv(&nn_plan), swapped_planned, "{name}");
            // The general families keep the whole budget they had without gemv.
            assert_eq!(Gemv.plan_share(&PlanCtx::new(target, &rr)), 0, "{name}");
            let cx = PlanCtx::new(target, &rr);
            let others: Vec<FamilyId> = nn_plan
                .families
                .iter()
                .copied()
                .filter(|&f| f != FamilyId::Gemv)
                .collect();
            assert_eq!(
                nn_plan.configs.len() - swapped_planned.len(),
                crate::plan::total_budget(&cx, &others, &TuneSpace::default()),
                "{name}: the general families' budget"
            );
        }
        // The keys follow C: `block_n` picks the turned-around MR (N), `block_m` its rows.
        let mut space = TuneSpace::default();
        space.0.insert("block_n".into(), vec![2]);
        assert!(swapped(&space, DType::F16).iter().all(|t| t.mr == 2));
        space.0.insert("block_m".into(), vec![32]);
        assert_eq!(swapped(&space, DType::F16).len(), 1);
        assert_eq!(
            FamilyId::Gemv
                .family()
                .plan_class(&TileConfig::Gemv(swapped(&space, DType::F16)[0])),
            (1, 1)
        );
    }

    /// f32's turned-around 8-row configs take 2 columns where 16-bit ones take 1: the
    /// register rule counts X's 16-byte chunk by the element size.
    #[test]
    fn eight_rows_take_two_columns_in_f32() {
        let cols8 = |dtype| {
            swapped(&TuneSpace::default(), dtype)
                .iter()
                .filter(|t| t.mr == 8)
                .map(|t| t.cols)
                .max()
        };
        assert_eq!(cols8(DType::F32), Some(2));
        assert_eq!(cols8(DType::F16), Some(1));
    }
}
