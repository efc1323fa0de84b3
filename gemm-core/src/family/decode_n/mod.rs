//! The `decode_n` family: products with at most 32 rows whose B is stored N-contiguous
//! (`w: Matrix<T>`, row-major K×N: `x · W` as NumPy, JAX and the DSL's default layout
//! store the weight), on tensor cores.
//!
//! Such a product is memory-bound (W is read once and used M times), and its W has no
//! K-contiguous columns for the `decode` kernel to stream into MMA fragments. The `gemv_n`
//! kernel streams its rows at up to 4 rows of X (FMA: 8 rows took 140-165 registers), a
//! tensor-core form of it that transposed 64-byte pieces of W's rows in registers
//! (`movmatrix`) was no faster (bench/results/h200-2026-12-04y3: strips of 32-64 bytes a
//! row lose to 128), and wgmma's 64-row tiles pad 8-32 rows to 64 and leave N / 64 blocks
//! (0.89-0.98x cuBLAS at 8 and 16 rows, y4). Here each warp copies whole rows of the
//! block's tile of W (128 or 256 bytes: 64 or 128 columns) and X's rows beside them into
//! its own cp.async ring in shared memory, and `ldmatrix.trans` hands them to `mma.sync
//! m16n8k16` with the columns as the instruction's 16 rows (swap-AB, as `decode`): at
//! most 8 rows of X pad nothing. The block's warps take interleaved chunks of its share
//! of K (64 bytes of k: 32 k in 16 bits, 16 in f32); the grid's `y` may split K over `KSPLIT` blocks a strip (for narrow N:
//! at N = 4096 the 64 blocks over all of K were faster, z3); sums meet in a fixed order
//! (the same bits on every run). CUDA only (`emit.rs`), f16 and bf16, and f32 rounded to
//! tf32 (`acc = tf32`: `m16n8k8`, its fragments read with 8-byte shared loads where
//! `ldmatrix` moves 16-bit pieces only; a chunk is 64 bytes of k in either: 32 k or 16).
//!
//! Measured on the H200 (bench/results/h200-2026-12-04z4, tuned, × cuBLAS reading the
//! same row-major W): 2-16 rows of 4096x4096 1.07-1.16x (8 rows 15.8 µs, where wgmma's
//! 64-row tiles took 19.7), 32 rows 0.99-1.02x. Tried and not kept: an `L2::256B` hint on
//! W's copies (1-3% slower, z6), blocks of rows over the grid for more than a config's
//! rows (each block reads W again: slower everywhere, z7).

mod emit;

use super::{KernelFamily, LaunchDims, Machine, PlanCtx, Problem, Resources, Rule, Workspace};
use crate::codegen::Variant;
use crate::ir::{DType, GemmIr, Layout};
use crate::space::TuneSpace;
use crate::target::{Backend, Instr, TargetSpec};
use serde::{Deserialize, Serialize};

/// Bytes of k per row of a chunk, a warp's unit of the ring (two MMA k-steps: 32 k of
/// 16-bit elements, 16 of f32, [`super::decode::chunk_k`]).
const CHUNK_BYTES: u32 = 64;

/// A decode_n configuration: the values of its `-D` constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DecodeNTile {
    /// 8-row MMA blocks of X (and C): the call's M is at most `8 * mt` (1, 2 or 4).
    pub mt: u32,
    /// 16-column MMA blocks per block (4 or 8: rows of W's tile of 128 or 256 bytes).
    pub nt: u32,
    /// Warps per block, each with a ring of its own.
    pub warps: u32,
    /// Slots of a warp's ring (chunks in flight: `stages - 1`).
    pub stages: u32,
    /// Blocks that split K for the same columns (the last to finish adds the partial
    /// sums in split order).
    pub ksplit: u32,
}

impl DecodeNTile {
    /// Most rows of C a launch computes.
    pub const fn rows(&self) -> u32 {
        8 * self.mt
    }
    /// Output columns per block.
    pub const fn block_n(&self) -> u32 {
        16 * self.nt
    }
    /// Threads per block.
    pub const fn threads(&self) -> u32 {
        32 * self.warps
    }
    /// Accumulators per thread.
    pub const fn acc_regs(&self) -> u32 {
        4 * self.nt * self.mt
    }
    /// Bytes of one slot of a ring: a chunk's rows of W's tile and X's rows for those k
    /// (the same bytes in either element size).
    const fn slot_bytes(&self) -> u32 {
        CHUNK_BYTES * (self.block_n() + self.rows())
    }
    /// Dynamic shared memory: every warp's ring, which the warps' sums reuse after the
    /// walk (rows padded by 4 floats).
    pub const fn smem_bytes(&self) -> u32 {
        let ring = self.warps * self.stages * self.slot_bytes();
        let sums = self.warps * self.rows() * (self.block_n() + 4) * 4;
        if ring > sums {
            ring
        } else {
            sums
        }
    }
    /// Estimated registers per thread: accumulators, a step's fragments of X and W, and
    /// an allowance for addresses, the copies and the epilogue.
    pub const fn est_regs(&self) -> u32 {
        self.acc_regs() + 4 * self.mt + 4 + 48
    }
}

/// The block shapes a plan takes per row count, `(nt, warps, stages, ksplit)`, the
/// measured best first: on the H200 (bench/results/h200-2026-12-04z3, z3b) 64 columns a
/// block over all of K with rings of 4-8 slots took 8x4096x4096 in 15.7-15.9 µs and
/// 32x4096x4096 in 18.5-19.1, although N = 4096 makes only 64 blocks; K split in 2 took
/// 17.4 and 19.7, rings of 3 slots 17.7, of 2 22.1, and 128 columns a block 19.2-21.7 (not
/// planned; a `--config` still runs them). K split in 4 is for narrow N. The shared-memory
/// rule keeps the deeper rings from 16 rows on.
const SHAPES: [(u32, u32, u32, u32); 6] = [
    (4, 8, 4, 1),
    (4, 4, 8, 1),
    (4, 16, 3, 1),
    (4, 8, 6, 1),
    (4, 8, 4, 2),
    (4, 8, 4, 4),
];

/// The `decode_n` family.
pub struct DecodeN;

impl KernelFamily for DecodeN {
    type Tile = DecodeNTile;
    const ID: super::FamilyId = super::FamilyId::DecodeN;

    fn instr(&self) -> Instr {
        Instr::MmaSync
    }

    /// A deep cp.async ring per warp keeps as many bytes in flight as `decode`'s direct
    /// loads: the bandwidth of `mma_sync`'s block-wide ring does not apply.
    fn streams(&self) -> bool {
        true
    }

    /// A shape specialist, before `gemv_n`: calls with 2 to 32 rows of these layouts get
    /// it by default. Measured on the H200 (z2, z3): 2 and 4 rows 3% and 16% faster than
    /// gemv_n's tuned configs, one row 1-5% slower (it leaves one row to gemv_n, see
    /// `accepts`).
    fn preference(&self, _target: &TargetSpec) -> (u8, usize) {
        (0, 2)
    }

    /// None: every config comes beside the general families' budget (see `plan_extra`).
    fn plan_share(&self, _cx: &PlanCtx) -> usize {
        0
    }

    /// Every config of the space that its rules keep.
    fn plan_extra(&self, cx: &PlanCtx, space: &TuneSpace) -> usize {
        super::rule_passing(self, cx, space)
    }

    fn serves(&self, target: &TargetSpec, ir: &GemmIr) -> Result<(), String> {
        super::decode::serves_mma_sync(target, ir, "decode_n", "mma.sync, ldmatrix")?;
        if ir.a_layout() != Layout::RowMajor || ir.b_layout() != Layout::RowMajor {
            return Err(
                "the decode_n kernel reads K-contiguous rows of A and N-contiguous rows of B (A and B row-major)"
                    .into(),
            );
        }
        Ok(())
    }

    fn complete(&self) -> bool {
        false
    }

    /// Two to `rows` rows: one row is `gemv_n`'s, which streams W as fast with no MMA
    /// padding (decode_n's default there was 1-5% slower than gemv_n's tuned configs in
    /// f16 on the H200, bench/results/h200-2026-12-04z3, and 4% slower than gemv_n's
    /// default in tf32 on an H100, 80.6-80.9 against 77.6-77.9 µs at 1x12288x4096,
    /// h100-2026-12-06ao1).
    fn accepts(&self, t: &DecodeNTile, ir: &GemmIr, p: Problem) -> Result<(), String> {
        if p.m as u64 > t.rows() as u64 {
            return Err(format!("M = {} is more than the {} rows of this config", p.m, t.rows()));
        }
        if p.m == 1 {
            return Err("M = 1: a single row is gemv_n's (measured faster than decode_n there)".into());
        }
        if !super::decode::rows_on_16_bytes(ir, p) {
            return Err("rows of A or B do not all start on 16-byte boundaries".into());
        }
        super::strip_sum::check_workspace(workspace(t, p))
    }

    /// `tune(block_m = ..)` restricts the rows (`8 * mt`: 8, 16, 32), `tune(block_n = ..)`
    /// the columns per block (64 or 128) and `tune(ksplit = ..)` the split of K; per row
    /// count the block shapes of `SHAPES`.
    fn space(&self, _cx: &PlanCtx, space: &TuneSpace) -> Vec<DecodeNTile> {
        let rows = space.pick("block_m", &[8, 16, 32]);
        let splits = space.pick("ksplit", &[1, 2, 4, 8]);
        let mut v = Vec::new();
        for mt in [1, 2, 4].into_iter().filter(|mt| rows.contains(&(8 * mt))) {
            for (nt, warps, stages, ksplit) in SHAPES {
                let t = DecodeNTile {
                    mt,
                    nt,
                    warps,
                    stages,
                    ksplit,
                };
                if splits.contains(&ksplit) && space.0.get("block_n").is_none_or(|bn| bn.contains(&t.block_n())) {
                    v.push(t);
                }
            }
        }
        v
    }

    fn rules(&self) -> &'static [Rule<DecodeNTile>] {
        &RULES
    }

    /// Fewer rows first (the first config that takes a call is its default, so a call
    /// gets the smallest row block that holds it), then the order of `SHAPES`.
    fn score(&self, _cx: &PlanCtx, t: &DecodeNTile) -> f64 {
        let shape = SHAPES
            .iter()
            .position(|&(nt, warps, stages, ksplit)| (nt, warps, stages, ksplit) == (t.nt, t.warps, t.stages, t.ksplit))
            .unwrap_or(SHAPES.len());
        100.0 - 10.0 * t.mt as f64 - 0.1 * shape as f64
    }

    fn resources(&self, t: &DecodeNTile, dtype: DType) -> Resources {
        Resources {
            threads: t.threads(),
            smem_bytes: t.smem_bytes(),
            est_regs: t.est_regs(),
            ring_k: super::decode::chunk_k(dtype) * t.warps * t.ksplit,
        }
    }

    fn block_mn(&self, t: &DecodeNTile) -> (u32, u32) {
        (t.rows(), t.block_n())
    }

    /// The splits apart, and the ring depths of a block tile.
    fn plan_class(&self, t: &DecodeNTile) -> (u32, u32) {
        (t.ksplit, t.stages * 16 + t.warps)
    }

    fn k_split(&self, t: &DecodeNTile) -> u32 {
        t.ksplit
    }

    fn workspace(&self, t: &DecodeNTile, _ir: &GemmIr, p: Problem, _machine: Machine) -> Option<Workspace> {
        workspace(t, p)
    }

    fn launch(&self, t: &DecodeNTile, _ir: &GemmIr, p: Problem, _machine: Machine) -> LaunchDims {
        LaunchDims {
            grid: [strips(t, p) as u32, t.ksplit, p.batch as u32],
            block: [t.threads(), 1, 1],
            smem_bytes: t.smem_bytes(),
            persistent: None,
        }
    }

    fn defines(&self, t: &DecodeNTile, ir: &GemmIr, _backend: Backend, p: Problem) -> Vec<(&'static str, u32)> {
        let mut d = vec![
            ("MT", t.mt),
            ("NT", t.nt),
            ("WARPS", t.warps),
            ("STAGES", t.stages),
            ("KSPLIT", t.ksplit),
            // The k-step of the code paths: what a first-use check at a cut K keeps the
            // remainder of.
            ("BK", super::decode::chunk_k(ir.ab_dtype)),
        ];
        d.extend(crate::family::shape_flags::shape_defines(ir, p));
        d
    }

    fn emit(&self, ir: &GemmIr, _backend: Backend, variant: Variant) -> String {
        emit::emit_variant(ir, variant)
    }

    /// Half and twice the split and the ring, the other warp count, the other width.
    fn neighbours(&self, t: &DecodeNTile) -> Vec<(String, DecodeNTile)> {
        let mut v = Vec::new();
        for ksplit in [t.ksplit / 2, t.ksplit * 2] {
            if (1..=32).contains(&ksplit) {
                v.push((format!("ksplit {ksplit}"), DecodeNTile { ksplit, ..*t }));
            }
        }
        for stages in [t.stages - 1, t.stages + 1] {
            if (2..=8).contains(&stages) {
                v.push((format!("stages {stages}"), DecodeNTile { stages, ..*t }));
            }
        }
        let warps = if t.warps == 8 { 4 } else { 8 };
        v.push((format!("warps {warps}"), DecodeNTile { warps, ..*t }));
        let nt = if t.nt == 4 { 8 } else { 4 };
        v.push((format!("nt {nt}"), DecodeNTile { nt, ..*t }));
        v
    }

    /// Blocks own disjoint column ranges: there is no launch order to choose.
    fn group_m(&self, _t: &DecodeNTile) -> u32 {
        1
    }

    fn with_group_m(&self, t: &DecodeNTile, _group_m: u32) -> DecodeNTile {
        *t
    }

    fn describe(&self, t: &DecodeNTile) -> String {
        format!(
            "decode_n rows {} cols {} warps {} stages {}{}",
            t.rows(),
            t.block_n(),
            t.warps,
            t.stages,
            if t.ksplit > 1 {
                format!(" ksplit {}", t.ksplit)
            } else {
                String::new()
            }
        )
    }
}

/// Strips of columns one launch walks, per product.
fn strips(t: &DecodeNTile, p: Problem) -> usize {
    p.n.div_ceil(t.block_n() as usize)
}

/// A split-K launch's workspace ([`super::strip_sum::workspace`]): tiles of the strip's
/// rows × columns, a strip per block of columns of every product.
fn workspace(t: &DecodeNTile, p: Problem) -> Option<Workspace> {
    super::strip_sum::workspace(strips(t, p) * p.batch.max(1), t.ksplit, t.rows() * t.block_n())
}

// Rationale per rule: the source's static_asserts, the chip's limits and the register
// budget.
const RULES: [Rule<DecodeNTile>; 5] = [
    // Bounds first, so that the rules after them compute with small numbers (a config
    // read from disk may hold anything).
    Rule {
        name: "extents",
        check: |_, t| {
            (!matches!(t.mt, 1 | 2 | 4)
                || !matches!(t.nt, 4 | 8)
                || !(1..=16).contains(&t.warps)
                || !(2..=8).contains(&t.stages)
                || !(1..=32).contains(&t.ksplit))
            .then(|| {
                format!(
                    "mt {}, nt {}, warps {}, stages {}, ksplit {} (1/2/4, 4/8, 1-16, 2-8 and 1-32)",
                    t.mt, t.nt, t.warps, t.stages, t.ksplit
                )
            })
        },
    },
    Rule {
        name: "threads",
        check: |x, t| {
            (t.threads() > x.target.max_threads_per_block)
                .then(|| format!("{} threads (at most {})", t.threads(), x.target.max_threads_per_block))
        },
    },
    Rule {
        name: "smem",
        check: |x, t| {
            (t.smem_bytes() > x.target.smem_per_block_optin).then(|| {
                format!(
                    "{} bytes of rings (the chip gives a block {})",
                    t.smem_bytes(),
                    x.target.smem_per_block_optin
                )
            })
        },
    },
    // 64 accumulators and the fragments fit without spills (tests/nvrtc.rs compiles
    // every planned config); 128 (32 rows of 128 columns) would not.
    Rule {
        name: "accumulators",
        check: |_, t| {
            (t.acc_regs() > 64).then(|| {
                format!(
                    "{} accumulators per thread ({} rows x {} columns; at most 64)",
                    t.acc_regs(),
                    t.rows(),
                    t.block_n()
                )
            })
        },
    },
    Rule {
        name: "registers",
        check: |x, t| {
            let r = t.est_regs();
            (r > x.target.regs_per_thread)
                .then(|| format!("~{r} registers per thread (at most {})", x.target.regs_per_thread))
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

    fn ir(dtype: DType, a: Layout, b: Layout) -> GemmIr {
        GemmIr::matmul("t", dtype, AccMode::F32, a, b)
    }

    #[test]
    fn serves_row_major_a_and_b_in_16_bits_and_tf32_on_cuda() {
        let t = Targets::parse(BUILTIN_TARGETS).unwrap();
        let (h200, ocl) = (t.get("h200").unwrap(), t.get("opencl_cpu").unwrap());
        use Layout::{ColMajor as C, RowMajor as R};
        assert!(DecodeN.serves(h200, &ir(DType::F16, R, R)).is_ok());
        assert!(DecodeN.serves(h200, &ir(DType::Bf16, R, R)).is_ok());
        assert!(DecodeN
            .serves(h200, &ir(DType::F16, R, C))
            .unwrap_err()
            .contains("row-major"));
        assert!(DecodeN.serves(h200, &ir(DType::F16, C, R)).is_err());
        assert!(DecodeN.serves(h200, &ir(DType::F32, R, R)).is_err());
        let tf32 = GemmIr {
            acc: AccMode::Tf32,
            ..ir(DType::F32, R, R)
        };
        assert!(DecodeN.serves(h200, &tf32).is_ok());
        // A chunk is 64 bytes of k: 16 k of f32, and so are the slots' bytes.
        let t = DecodeNTile {
            mt: 2,
            nt: 4,
            warps: 8,
            stages: 4,
            ksplit: 1,
        };
        assert_eq!(DecodeN.resources(&t, DType::F32).ring_k, 16 * 8);
        assert_eq!(DecodeN.resources(&t, DType::F16).ring_k, 32 * 8);
        assert!(DecodeN
            .defines(&t, &tf32, Backend::Cuda, Problem::new(16, 4096, 4096))
            .contains(&("BK", 16)));
        assert_eq!(t.smem_bytes(), 8 * 4 * 64 * (64 + 16));
        assert!(DecodeN
            .serves(ocl, &ir(DType::F16, R, R))
            .unwrap_err()
            .contains("CUDA only"));
    }

    #[test]
    fn accepts_rows_up_to_its_row_blocks_on_16_byte_rows_and_splits_k_over_the_grid() {
        let g = ir(DType::F16, Layout::RowMajor, Layout::RowMajor);
        let t = DecodeNTile {
            mt: 2,
            nt: 4,
            warps: 8,
            stages: 4,
            ksplit: 2,
        };
        assert!(DecodeN.accepts(&t, &g, Problem::new(16, 4096, 4096)).is_ok());
        assert!(DecodeN.accepts(&t, &g, Problem::new(2, 8, 8)).is_ok());
        assert!(DecodeN.accepts(&t, &g, Problem::new(2, 7, 8)).is_err());
        // One row is gemv_n's.
        assert!(DecodeN
            .accepts(&t, &g, Problem::new(1, 4096, 4096))
            .unwrap_err()
            .contains("gemv_n"));
        assert!(DecodeN.accepts(&t, &g, Problem::new(17, 4096, 4096)).is_err());
        // K = 4097: A's rows start 8194 bytes apart; N = 4095: B's 8190.
        assert!(DecodeN.accepts(&t, &g, Problem::new(8, 4096, 4097)).is_err());
        assert!(DecodeN.accepts(&t, &g, Problem::new(8, 4095, 4096)).is_err());
        let dims = DecodeN.launch(&t, &g, Problem::new(3, 4097, 64), Machine { units: 132 });
        assert_eq!(dims.grid, [65, 2, 1]);
        assert_eq!(dims.smem_bytes, t.smem_bytes());
        let w = DecodeN
            .workspace(&t, &g, Problem::new(3, 4097, 64), Machine { units: 132 })
            .unwrap();
        assert_eq!((w.bytes, w.flags), (65 * 2 * 16 * 64 * 4, 65));
    }

    /// Every config comes beside the general families' budget, and a call with 2-32 rows
    /// of a row-major A and B gets the smallest row block by default, over all of K (one
    /// row gets gemv_n).
    #[test]
    fn the_plan_keeps_every_config_beside_the_general_families() {
        let targets = Targets::parse(BUILTIN_TARGETS).unwrap();
        let h200 = targets.get("h200").unwrap();
        let rr = ir(DType::F16, Layout::RowMajor, Layout::RowMajor);
        let cx = PlanCtx::new(h200, &rr);
        let plan = plan_target(&rr, h200, &TuneSpace::default());
        let ours: Vec<DecodeNTile> = plan
            .configs
            .iter()
            .filter_map(|c| match c {
                TileConfig::DecodeN(t) => Some(*t),
                _ => None,
            })
            .collect();
        let kept: Vec<DecodeNTile> = DecodeN
            .space(&cx, &TuneSpace::default())
            .into_iter()
            .filter(|t| super::super::first_broken_rule(&DecodeN, &cx, t).is_none())
            .collect();
        assert_eq!(ours.len(), kept.len());
        // Six shapes of 8 rows, four of 16 and 32 (their deeper rings do not fit).
        assert_eq!(ours.len(), 14);
        let first = |m| {
            *plan
                .configs
                .iter()
                .find(|c| c.family().accepts(c, &rr, Problem::new(m, 4096, 4096)).is_ok())
                .unwrap()
        };
        for (m, rows) in [(2, 8), (5, 8), (16, 16), (17, 32), (32, 32)] {
            assert!(
                matches!(first(m), TileConfig::DecodeN(t) if t.rows() == rows && (t.nt, t.warps, t.stages, t.ksplit) == (4, 8, 4, 1)),
                "{m}: {}",
                first(m)
            );
        }
        assert_ne!(first(33).family_id(), FamilyId::DecodeN);
        assert_eq!(first(1).family_id(), FamilyId::GemvN);
        // Every planned config fits the H200 (the rules prune the rest).
        for t in &ours {
            assert!(
                t.smem_bytes() <= h200.smem_per_block_optin && t.acc_regs() <= 64,
                "{t:?}"
            );
        }
    }
}
