//! The `decode` family: products with at most 64 rows (decode-size M: a batch of tokens)
//! on tensor cores, with B streamed from global memory straight into MMA fragments.
//!
//! Such a product is memory-bound: B (the weight, K·N) is read once and used M times. A
//! 64- or 128-row tensor-core tile pads M and needs N/BN blocks, too few to fill the chip
//! at N = 4096 (the wgmma winner at 16×4096×4096 pulled 1.9 TB/s of a 4.1 TB/s copy
//! bandwidth). This kernel swaps A and B in the instruction (swap-AB): `mma.sync
//! m16n8k16` computes a 16-column × 8-row piece of Cᵀ, so B's columns fill the
//! instruction's wide side and M ≤ 8 pads nothing. There is no shared-memory staging:
//! each lane loads 16-byte chunks of B's K-contiguous columns and A's K-contiguous rows
//! directly into registers. The four lanes of a quad load 32 consecutive k of one column;
//! the two MMAs of that 32-k chunk take those k in a permuted order (a lane's 16 bytes
//! feed both), and A's fragment is loaded under the same permutation, so the products
//! pair up as in the plain order and only the summation order changes.
//!
//! A block's warps form column groups of `nt` 16-column blocks; the `kw` warps of a group
//! split K (interleaved 32-k chunks, so a group reads each column front to back) and
//! their sums are added through shared memory in warp order: the same bits on every run.
//! The fused epilogue runs on the sums before the store.
//!
//! It serves f16 and bf16, and f32 rounded to tf32 (`acc = tf32`: `m16n8k8`, whose
//! fragments take the same words in the same places, each 16-byte load holding 4 k
//! instead of 8), CUDA only, in the forms of [`turned::modes`]: the plain form
//! streams B's K-contiguous columns (B column-major), the turned-around one A's
//! K-contiguous rows (A row-major). The small side is read K-contiguous where it is
//! (A row-major, B column-major turned around: the `x · Wᵀ` of a linear layer), else
//! *across* (its few rows contiguous: a row-major weight `W`, K×N with N ≤ 32, 16 in the
//! default plan, turned around, as in `x · W` with `W` stored as NumPy and JAX keep it), through
//! `movmatrix` (see `emit`). Rows that do not all start on 16-byte boundaries (an odd K,
//! a view of odd pitch: calls below staging's threshold, or with staging off) are read
//! through windows over the aligned 16-byte chunks that hold them, shifted into place in
//! registers, with half the chunks a super-step in flight.

mod emit;

pub(super) use emit::{MMA_FN, MMA_TF32_FN};

use super::{turned, KernelFamily, LaunchDims, Machine, PlanCtx, Problem, Resources, Rule};
use crate::codegen::Variant;
use crate::ir::{DType, GemmIr};
use crate::space::TuneSpace;
use crate::target::{Backend, Instr, InstrType, TargetSpec};
use serde::{Deserialize, Serialize};

/// k per chunk of `dtype`: the four lanes of a quad load 16 bytes each (8 elements of
/// f16 or bf16, 4 of f32).
pub(crate) const fn chunk_k(dtype: DType) -> u32 {
    4 * 16 / dtype.size()
}

/// What the mma.sync shape specialists (`decode` and `decode_n`) ask of a target and a
/// kernel besides their layouts: CUDA (else `Err` naming the `kernel` and, in brackets,
/// `cuda_why`) and f16 or bf16 operands on mma.sync, or f32 ones rounded to tf32 (both
/// sources have that form).
pub(super) fn serves_mma_sync(target: &TargetSpec, ir: &GemmIr, kernel: &str, cuda_why: &str) -> Result<(), String> {
    if target.backend != Backend::Cuda {
        return Err(format!("the {kernel} kernel is CUDA only ({cuda_why})"));
    }
    let ty = InstrType::of(ir.ab_dtype, ir.acc);
    let takes = matches!(ty, InstrType::F16 | InstrType::Bf16 | InstrType::Tf32);
    if !takes || !target.offers(Instr::MmaSync, ty) {
        return Err(format!(
            "the {kernel} kernel takes f16 or bf16 operands, or f32 ones with `acc = tf32`, on mma.sync, not {ty:?}"
        ));
    }
    Ok(())
}

/// Whether every stored row of A and of B at `p` (their contiguous runs) starts on a
/// 16-byte boundary: what the specialists' 16-byte loads and copies need.
pub(super) fn rows_on_16_bytes(ir: &GemmIr, p: Problem) -> bool {
    let per_chunk = 16 / ir.ab_dtype.size() as usize;
    let [(a_ext, _), (b_ext, _)] = p.extents(ir);
    p.a.rows_aligned(a_ext, per_chunk) && p.b.rows_aligned(b_ext, per_chunk)
}

/// A decode configuration: the values of its `-D` constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DecodeTile {
    /// 8-row MMA blocks of A (and C) per warp: the call's M is at most `8 * mt`.
    pub mt: u32,
    /// 16-column MMA blocks of B (and C) per warp.
    pub nt: u32,
    /// Warps per block.
    pub warps: u32,
    /// Warps of a column group that split K (a divisor of `warps`).
    pub kw: u32,
    /// Chunks (32 k, 16 in tf32) a warp loads before the first MMA of an iteration (loads in flight).
    pub unroll: u32,
    /// Each block starts its walk over K at a chunk of its own and wraps (`ROT`), so that
    /// blocks running in step do not all read the same chunk of A at once. Tuned, not
    /// ruled: on the H200 (bench/results/h200-2026-12-02f, -02g) it took 32x4096x4096
    /// from 18.3 to 16.7 us and 16x4096x4096 from 15.7 to 15.4, and cost
    /// 16x4096x11008 3.2 us (30.8 against 34.0). Absent in records written before it.
    #[serde(default)]
    pub rot: bool,
    /// Computes `Cᵀ = Bᵀ · Aᵀ`: the call's N (at most [`DecodeTile::rows`]) takes M's
    /// place and A's rows are streamed as B's columns are otherwise, for products with few
    /// columns (a weight applied from the left, a few output features). "Columns" of the
    /// other fields count rows of C. Absent in records written before it (false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub swap: bool,
}

impl DecodeTile {
    /// Most rows of C a launch computes.
    pub const fn rows(&self) -> u32 {
        8 * self.mt
    }
    /// Column groups per block.
    pub const fn groups(&self) -> u32 {
        self.warps / self.kw
    }
    /// Output columns per block.
    pub const fn block_n(&self) -> u32 {
        self.groups() * 16 * self.nt
    }
    /// Threads per block.
    pub const fn threads(&self) -> u32 {
        32 * self.warps
    }
    /// Accumulators per thread.
    pub const fn acc_regs(&self) -> u32 {
        4 * self.nt * self.mt
    }
    /// Dynamic shared memory: the sums of every warp but the first of each group.
    pub const fn smem_bytes(&self) -> u32 {
        (self.warps - self.groups()) * 32 * self.acc_regs() * 4
    }
    /// 16-byte loads per lane per chunk: two column halves per 16-column block, one row
    /// block of A per 8 rows.
    pub const fn loads_per_chunk(&self) -> u32 {
        2 * self.nt + self.mt
    }
    /// Estimated registers per thread: the loads of an iteration in flight, the
    /// accumulators, a 64-bit pointer per column half and row block, and an allowance for
    /// indices and the epilogue.
    pub const fn est_regs(&self) -> u32 {
        4 * self.unroll * self.loads_per_chunk() + self.acc_regs() + 2 * self.loads_per_chunk() + 40
    }
}

/// The `decode` family.
pub struct Decode;

/// The block shapes a plan takes per row count `(nt, warps, kw, unroll)`: one column
/// group of 8 or 4 warps over K (16 or 32 columns per block: 256 or 128 blocks at
/// N = 4096), and two groups of 4 (A's chunk shared through L1 by the groups). The last
/// is left out from 32 rows on, where its 64 columns would hold 64 accumulators at 64 rows.
const SHAPES: [(u32, u32, u32, u32); 4] = [(1, 8, 8, 4), (1, 4, 4, 4), (2, 8, 8, 2), (2, 8, 4, 2)];

/// The row counts (`8 * mt`) a plan takes unless `tune(block_m = ..)` asks otherwise:
/// decode batches of up to 32 tokens. Every row class is one more set of candidates in
/// a skinny call's tune, which the tuner's estimate cannot tell apart (all stream B at
/// the same bandwidth); `block_m = [64]` adds the 64-row tiles.
const ROWS: [u32; 3] = [8, 16, 32];

/// The row counts a plan takes where the small side is stored across (its pairs read
/// through `movmatrix`): 16, for every call of up to 16. With 32 the loads' registers
/// halve the chunks in flight, and at 4096x32x4096 with a row-major W that default took
/// 26.4 µs against 25.0 for the 64x64 wgmma tile it displaced (on an H100,
/// bench/results/h100-2026-12-06al3). With 8 the tile lost to the 16-row one at
/// 4096x8x4096 (23.9 against 19.6 µs, both unrotated) and tied it at 12288x1x4096 (42.0
/// each, -al5). `tune(block_n = [8, 32])` (turned around) still asks for them.
const ROWS_ACROSS: [u32; 1] = [16];

/// Whether a plan also times tile `t` with its walk rotated ([`DecodeTile::rot`]): the
/// 16- and 32-row tiles of one 16-column block a warp, the class where rotating won on
/// the H200. It lost with 8 rows (up to 0.6 us) and 32-column warps (up to 8 us,
/// bench/results/h200-2026-12-02f), and the 64-row tiles spill with it.
fn rotation_planned(t: &DecodeTile) -> bool {
    t.nt == 1 && matches!(t.mt, 2 | 4)
}

/// Whether form `swap` of `cx`'s kernel reads its small side across (its few rows
/// contiguous: a column-major A, or turned around a row-major B).
fn reads_across(cx: &PlanCtx, swap: bool) -> bool {
    !turned::small_side_k_contiguous(cx.ir, swap)
}

/// The tiles of a plan in the forms that serve `cx` ([`turned::modes`]): [`SHAPES`] for
/// every row count `tune(block_m)` leaves ([`ROWS`], [`ROWS_ACROSS`] where the small side
/// is stored across; the fourth shape not from 32 rows on), each also rotated where
/// [`rotation_planned`].
fn tiles(cx: &PlanCtx, space: &TuneSpace) -> Vec<DecodeTile> {
    turned::modes(cx.ir)
        .into_iter()
        .flat_map(|swap| form(space, swap, reads_across(cx, swap)))
        .collect()
}

/// One form's tiles ([`ROWS`], or [`ROWS_ACROSS`] for a small side read `across`, unless
/// the space restricts the rows); turned around, the keys follow C (`block_n` restricts
/// its N side, `8 * mt`, and `block_m` its rows per block).
fn form(space: &TuneSpace, swap: bool, across: bool) -> Vec<DecodeTile> {
    let (small, wide) = turned::keys(swap);
    let rows = space.pick(small, if across { &ROWS_ACROSS } else { &ROWS });
    let mut v = Vec::new();
    for mt in [1, 2, 4, 8].into_iter().filter(|mt| rows.contains(&(8 * mt))) {
        for (nt, warps, kw, unroll) in SHAPES.into_iter().take(if mt >= 4 { 3 } else { 4 }) {
            // More rows take more registers per chunk: fewer chunks in flight.
            let unroll = if mt >= 4 { unroll.min(2) } else { unroll };
            let t = DecodeTile {
                mt,
                nt,
                warps,
                kw,
                unroll,
                rot: false,
                swap,
            };
            if space.0.get(wide).is_none_or(|bn| bn.contains(&t.block_n())) {
                v.push(t);
                if rotation_planned(&t) {
                    v.push(DecodeTile { rot: true, ..t });
                }
            }
        }
    }
    v
}

impl KernelFamily for Decode {
    type Tile = DecodeTile;
    const ID: super::FamilyId = super::FamilyId::Decode;

    fn instr(&self) -> Instr {
        Instr::MmaSync
    }

    /// Every operand moves in 16-byte loads straight to registers, as `gemv`'s do: the
    /// bandwidth of mma.sync's cp.async ring does not apply.
    fn streams(&self) -> bool {
        true
    }

    /// A shape specialist, first: calls with few rows get it by default (`gemv` after it
    /// takes what it does not: f32, A column-major, rows not 16-byte aligned).
    fn preference(&self, _target: &TargetSpec) -> (u8, usize) {
        (0, 0)
    }

    /// Its configs come on top of the general families' budget (see `plan_extra`).
    fn plan_share(&self, _cx: &PlanCtx) -> usize {
        0
    }

    /// Every tile the space asks for (the default plan has 15 of each form, 6 of a form
    /// that reads its small side across).
    fn plan_extra(&self, cx: &PlanCtx, space: &TuneSpace) -> usize {
        tiles(cx, space).len()
    }

    fn serves(&self, target: &TargetSpec, ir: &GemmIr) -> Result<(), String> {
        serves_mma_sync(target, ir, "decode", "mma.sync")?;
        if turned::modes(ir).is_empty() {
            return Err(
                "the decode kernel streams K-contiguous columns of B (B column-major) or, turned around, K-contiguous rows of A (A row-major)"
                    .into(),
            );
        }
        Ok(())
    }

    fn complete(&self) -> bool {
        false
    }

    /// Any alignment of the rows: misaligned ones are read through windows (`cg_ld_win`).
    fn accepts(&self, t: &DecodeTile, _ir: &GemmIr, p: Problem) -> Result<(), String> {
        turned::check_small_side(t.swap, p, t.rows())
    }

    /// `tune(block_m = ..)` restricts the rows (`8 * mt`) and `tune(block_n = ..)` the
    /// columns per block, as for every family (of C: turned around, the other way); the
    /// other keys do not apply.
    fn space(&self, cx: &PlanCtx, space: &TuneSpace) -> Vec<DecodeTile> {
        tiles(cx, space)
    }

    fn rules(&self) -> &'static [Rule<DecodeTile>] {
        &RULES
    }

    /// Fewer rows first (the first config that takes a call is its default, so a call
    /// gets the smallest row block that holds it), then more loads in flight for a column
    /// group (its `kw` warps' together); a rotated walk right after its unrotated twin,
    /// or right before it where the small side is read across: at 4096x8x4096 with a
    /// row-major W the rotated 16-row tile took 19.0-19.2 µs against 19.6-19.7 (on an
    /// H100, bench/results/h100-2026-12-06al5; at 12288x1x4096 42.4-42.6 against 42.0,
    /// and the tune at 12288x16x4096 picked it, -al3).
    ///
    /// The group's loads, not a warp's: 8 warps over K and 4 had the same score and the
    /// text order put 4 first, which won 2 of the shipped table's 14 decode buckets of 8-32
    /// rows and none of one row; at misaligned K (rows through windows) the 8-warp group
    /// took 24.9 µs at 8x4096x4099 and the 4-warp one 31.2 (bench/results/h100-2026-12-05ah).
    fn score(&self, cx: &PlanCtx, t: &DecodeTile) -> f64 {
        let mut s = 10.0 - (t.mt as f64).log2();
        s += 0.1 * (t.unroll * t.loads_per_chunk() * t.kw) as f64 / 128.0;
        s -= 0.05 * (t.block_n() as f64 / 16.0).log2();
        let rot = if reads_across(cx, t.swap) { 0.001 } else { -0.001 };
        s + rot * t.rot as u32 as f64
    }

    fn resources(&self, t: &DecodeTile, dtype: DType) -> Resources {
        Resources {
            threads: t.threads(),
            smem_bytes: t.smem_bytes(),
            est_regs: t.est_regs(),
            ring_k: chunk_k(dtype) * t.unroll * t.kw,
        }
    }

    fn turned(&self, t: &DecodeTile) -> bool {
        t.swap
    }

    /// Of C: turned around, `(rows per block, N)`.
    fn block_mn(&self, t: &DecodeTile) -> (u32, u32) {
        turned::block_mn(t.swap, t.rows(), t.block_n())
    }

    /// The two forms apart: the plan keeps the best of each block tile in each.
    fn plan_class(&self, t: &DecodeTile) -> (u32, u32) {
        (1, t.swap as u32)
    }

    fn launch(&self, t: &DecodeTile, _ir: &GemmIr, p: Problem, _machine: Machine) -> LaunchDims {
        LaunchDims {
            grid: [
                turned::wide(t.swap, p).div_ceil(t.block_n() as usize) as u32,
                1,
                p.batch as u32,
            ],
            block: [t.threads(), 1, 1],
            smem_bytes: t.smem_bytes(),
            persistent: None,
        }
    }

    fn defines(&self, t: &DecodeTile, ir: &GemmIr, _backend: Backend, p: Problem) -> Vec<(&'static str, u32)> {
        let mut d = vec![
            ("MT", t.mt),
            ("NT", t.nt),
            ("WARPS", t.warps),
            ("KW", t.kw),
            ("UNROLL", t.unroll),
            // The k-step of the code paths (whole chunks, the chunk that crosses K): what
            // a first-use check at a cut K keeps the remainder of.
            ("BK", chunk_k(ir.ab_dtype)),
            ("ROT", t.rot as u32),
            ("SWAP", t.swap as u32),
        ];
        d.extend(crate::family::shape_flags::shape_defines(ir, p));
        d
    }

    fn emit(&self, ir: &GemmIr, _backend: Backend, variant: Variant) -> String {
        emit::emit_variant(ir, variant)
    }

    /// Half and twice the K split and the unroll, the other warp count, the other walk.
    fn neighbours(&self, t: &DecodeTile) -> Vec<(String, DecodeTile)> {
        let mut v = Vec::new();
        for kw in [t.kw / 2, t.kw * 2] {
            if kw >= 1 && t.warps.is_multiple_of(kw) {
                v.push((format!("kw {kw}"), DecodeTile { kw, ..*t }));
            }
        }
        for unroll in [t.unroll / 2, t.unroll * 2] {
            if (1..=8).contains(&unroll) {
                v.push((format!("unroll {unroll}"), DecodeTile { unroll, ..*t }));
            }
        }
        let warps = if t.warps == 8 { 4 } else { 8 };
        if warps % t.kw == 0 {
            v.push((format!("warps {warps}"), DecodeTile { warps, ..*t }));
        }
        v.push((
            if t.rot { "unrotated" } else { "rotated" }.to_string(),
            DecodeTile { rot: !t.rot, ..*t },
        ));
        v
    }

    /// Blocks own disjoint column ranges and all of A: there is no launch order to choose.
    fn group_m(&self, _t: &DecodeTile) -> u32 {
        1
    }

    fn with_group_m(&self, t: &DecodeTile, _group_m: u32) -> DecodeTile {
        *t
    }

    fn describe(&self, t: &DecodeTile) -> String {
        if t.swap {
            return format!(
                "decode swap: N <= {}, {} rows of C per block, warps {} kw {} unroll {}{}",
                t.rows(),
                t.block_n(),
                t.warps,
                t.kw,
                t.unroll,
                if t.rot { " rot" } else { "" }
            );
        }
        format!(
            "decode rows {} cols {} warps {} kw {} unroll {}{}",
            t.rows(),
            t.block_n(),
            t.warps,
            t.kw,
            t.unroll,
            if t.rot { " rot" } else { "" }
        )
    }
}

// Rationale per rule: the source's static_asserts, the chip's limits and the register
// budget.
/// The f32 sums a thread keeps beside its accumulators ([`crate::family::promoted_sums`]).
fn sums(x: &PlanCtx, t: &DecodeTile) -> u32 {
    crate::family::promoted_sums(x.ir, t.acc_regs())
}

const RULES: [Rule<DecodeTile>; 7] = [
    // Bounds first, so that the rules after them compute with small numbers (a config
    // read from disk may hold anything).
    Rule {
        name: "extents",
        check: |_, t| {
            (!matches!(t.mt, 1 | 2 | 4 | 8)
                || !matches!(t.nt, 1 | 2 | 4)
                || !(1..=32).contains(&t.warps)
                || !(1..=8).contains(&t.unroll))
            .then(|| {
                format!(
                    "mt {}, nt {}, warps {}, unroll {} (1/2/4/8, 1/2/4, 1-32 and 1-8)",
                    t.mt, t.nt, t.warps, t.unroll
                )
            })
        },
    },
    // A config from disk for a form the kernel's layouts do not allow (the source has
    // an `#error` there).
    Rule {
        name: "form",
        check: |x, t| turned::form_unserved(x.ir, t.swap).map(|why| format!("this decode form {why}")),
    },
    Rule {
        name: "ksplit",
        check: |_, t| {
            (t.kw == 0 || !t.warps.is_multiple_of(t.kw))
                .then(|| format!("kw {} must divide the {} warps", t.kw, t.warps))
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
                    "{} bytes of partial sums (the chip gives a block {})",
                    t.smem_bytes(),
                    x.target.smem_per_block_optin
                )
            })
        },
    },
    Rule {
        name: "registers",
        check: |x, t| {
            let r = t.est_regs() + sums(x, t);
            (r > x.target.regs_per_thread)
                .then(|| format!("~{r} registers per thread (at most {})", x.target.regs_per_thread))
        },
    },
    // The kernel asks for 16 warps per SM (128 registers a thread): ptxas fitted every
    // tile of at most 32 accumulators in that without spills (tests/decode_emit.rs), and
    // spilled 64 rows x 32 columns (64 accumulators).
    Rule {
        name: "accumulators",
        check: |x, t| {
            let acc = t.acc_regs() + sums(x, t);
            (acc > 32).then(|| {
                format!(
                    "{acc} accumulators per thread (at most 32 fit 128 registers){}",
                    crate::family::sums_note(x.ir)
                )
            })
        },
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family::Stored;
    use crate::ir::{AccMode, Layout};
    use crate::target::{Targets, BUILTIN_TARGETS};

    fn target(name: &str) -> TargetSpec {
        Targets::parse(BUILTIN_TARGETS).unwrap().get(name).unwrap().clone()
    }

    /// Each row class's first plain tile, the default of calls of those rows, has a
    /// column group of 8 warps over K (the measured winner), not the 4-warp group tied
    /// with it on a warp's loads.
    #[test]
    fn each_row_class_starts_with_eight_warps_over_k() {
        let t = target("h200");
        let ir = ir(DType::F16, Layout::RowMajor, Layout::ColMajor);
        let plan = crate::plan::plan_target(&ir, &t, &TuneSpace::default()).configs;
        for rows in [8, 16, 32] {
            let first = plan
                .iter()
                .find_map(|c| match c {
                    crate::family::TileConfig::Decode(d) if !d.swap && d.rows() == rows => Some(*d),
                    _ => None,
                })
                .unwrap();
            assert_eq!((first.nt, first.warps, first.kw), (1, 8, 8), "{rows} rows: {first:?}");
        }
    }

    /// The turned-around 8-row tile of one column group of 8 warps over K.
    const TURNED_8: DecodeTile = DecodeTile {
        mt: 1,
        nt: 1,
        warps: 8,
        kw: 8,
        unroll: 4,
        rot: false,
        swap: true,
    };

    fn ir(dt: DType, la: Layout, lb: Layout) -> GemmIr {
        GemmIr::matmul("d", dt, AccMode::F32, la, lb)
    }

    #[test]
    fn serves_half_types_with_a_k_contiguous_streamed_side_on_cuda_only() {
        let h200 = target("h200");
        assert!(Decode
            .serves(&h200, &ir(DType::F16, Layout::RowMajor, Layout::ColMajor))
            .is_ok());
        assert!(Decode
            .serves(&h200, &ir(DType::Bf16, Layout::RowMajor, Layout::ColMajor))
            .is_ok());
        assert!(Decode
            .serves(&target("a100"), &ir(DType::F16, Layout::RowMajor, Layout::ColMajor))
            .is_ok());
        // One side K-contiguous is enough: the small one is read across where it is not
        // (a column-major A, a row-major B turned around), in that form alone.
        let forms = |la, lb| {
            let g = ir(DType::F16, la, lb);
            let cx = PlanCtx::new(&h200, &g);
            let tiles = Decode.space(&cx, &TuneSpace::default());
            (
                Decode.serves(&h200, &g).is_ok(),
                tiles.iter().map(|t| t.swap).collect::<std::collections::BTreeSet<_>>(),
            )
        };
        use std::collections::BTreeSet;
        assert_eq!(
            forms(Layout::RowMajor, Layout::ColMajor),
            (true, BTreeSet::from([false, true]))
        );
        assert_eq!(
            forms(Layout::ColMajor, Layout::ColMajor),
            (true, BTreeSet::from([false]))
        );
        assert_eq!(
            forms(Layout::RowMajor, Layout::RowMajor),
            (true, BTreeSet::from([true]))
        );
        let why = Decode
            .serves(&h200, &ir(DType::F16, Layout::ColMajor, Layout::RowMajor))
            .unwrap_err();
        assert!(why.contains("K-contiguous"), "{why}");
        // A config from disk in a form the layouts do not allow is refused by name, and its
        // source would not compile.
        let cc = ir(DType::F16, Layout::ColMajor, Layout::ColMajor);
        let turned = TURNED_8;
        let cfg = crate::family::TileConfig::Decode(turned);
        let (rule, _) = crate::family::DynFamily::check(&Decode, &PlanCtx::new(&h200, &cc), &cfg).unwrap_err();
        assert_eq!(rule, "form");
        assert!(Decode
            .emit(&cc, Backend::Cuda, Variant::Full)
            .contains("#error \"this decode form streams A"));
        // Full f32 has no tensor-core instruction; f32 rounded to tf32 (`acc = tf32`) does.
        let why = Decode
            .serves(&h200, &ir(DType::F32, Layout::RowMajor, Layout::ColMajor))
            .unwrap_err();
        assert!(why.contains("acc = tf32") && why.contains("F32"), "{why}");
        let mut tf32 = ir(DType::F32, Layout::RowMajor, Layout::ColMajor);
        tf32.acc = AccMode::Tf32;
        assert!(Decode.serves(&h200, &tf32).is_ok());
        assert!(Decode.serves(&target("a100"), &tf32).is_ok());
        // decode_n has a tf32 form too, and no full-f32 one.
        let rr = ir(DType::F32, Layout::RowMajor, Layout::RowMajor);
        let why = crate::family::DecodeN.serves(&h200, &rr).unwrap_err();
        assert!(why.contains("acc = tf32") && why.contains("F32"), "{why}");
        assert!(crate::family::DecodeN
            .serves(
                &h200,
                &GemmIr {
                    acc: AccMode::Tf32,
                    ..rr
                },
            )
            .is_ok());
        assert!(Decode
            .serves(
                &target("opencl_cpu"),
                &ir(DType::F16, Layout::RowMajor, Layout::ColMajor)
            )
            .is_err());
    }

    /// tf32 takes every tile of the 16-bit plan in both forms (and across: a row-major B
    /// turned around), its chunks 16 k deep: the first-use check's remainder and the
    /// every-config test's K follow them.
    #[test]
    fn tf32_plans_the_same_tiles_with_16_k_chunks() {
        let h200 = target("h200");
        let tiles = |dt: DType, acc: AccMode, lb: Layout| {
            let g = GemmIr::matmul("d", dt, acc, Layout::RowMajor, lb);
            Decode.space(&PlanCtx::new(&h200, &g), &TuneSpace::default())
        };
        for lb in [Layout::ColMajor, Layout::RowMajor] {
            let t = tiles(DType::F32, AccMode::Tf32, lb);
            assert!(!t.is_empty());
            assert_eq!(t, tiles(DType::F16, AccMode::F32, lb), "{lb:?}");
        }
        let g = GemmIr::matmul("d", DType::F32, AccMode::Tf32, Layout::RowMajor, Layout::ColMajor);
        let t = TURNED_8;
        assert_eq!(Decode.resources(&t, DType::F32).ring_k, 16 * 4 * 8);
        assert_eq!(Decode.resources(&t, DType::F16).ring_k, 32 * 4 * 8);
        assert!(Decode
            .defines(&t, &g, Backend::Cuda, Problem::new(64, 8, 64))
            .contains(&("BK", 16)));
        let src = Decode.emit(&g, Backend::Cuda, Variant::Full);
        assert!(src.contains("m16n8k8.row.col.f32.tf32.tf32.f32") && src.contains("cvt.rna.tf32.f32"));
        assert!(src.contains("typedef float cg_ab_t;"));
    }

    #[test]
    fn accepts_rows_up_to_its_row_blocks_at_any_alignment() {
        let g = ir(DType::F16, Layout::RowMajor, Layout::ColMajor);
        let t = DecodeTile {
            mt: 2,
            nt: 1,
            warps: 8,
            kw: 8,
            unroll: 4,
            rot: false,
            swap: false,
        };
        assert!(Decode.accepts(&t, &g, Problem::new(16, 4096, 4096)).is_ok());
        assert!(Decode.accepts(&t, &g, Problem::new(1, 7, 8)).is_ok());
        assert!(Decode
            .accepts(&t, &g, Problem::new(17, 4096, 4096))
            .unwrap_err()
            .contains("M = 17"));
        // K = 700 (neither A's rows nor B's columns 16-byte multiples), a padded view and
        // an odd offset: windows read them.
        assert!(Decode.accepts(&t, &g, Problem::new(16, 64, 700)).is_ok());
        let p = Problem::new(16, 64, 64);
        for a in [Stored::new(72, 8), Stored::new(72, 3)] {
            assert!(Decode.accepts(&t, &g, p.stored(a, Stored::new(0, 0))).is_ok());
        }
        // Whole chunks where every row starts on 16 bytes, windows elsewhere.
        let d = |p: Problem| Decode.defines(&t, &g, Backend::Cuda, p);
        assert!(d(p).contains(&("A_VEC", 1)) && d(p).contains(&("B_VEC", 1)));
        assert!(d(Problem::new(16, 64, 700)).contains(&("B_VEC", 0)));
    }

    #[test]
    fn the_plan_has_every_row_class_within_the_chips_limits() {
        let t = target("h200");
        let g = ir(DType::F16, Layout::RowMajor, Layout::ColMajor);
        let cx = PlanCtx::new(&t, &g);
        let mut report = Default::default();
        let (considered, kept) = crate::family::DynFamily::plan(&Decode, &cx, &TuneSpace::default(), &mut report);
        assert_eq!(considered, 30, "15 tiles in each form");
        assert_eq!(Decode.plan_extra(&cx, &TuneSpace::default()), 30);
        assert_eq!(kept.len(), considered, "pruned: {report:?}");
        let form = |swap: bool| -> Vec<(f64, DecodeTile)> {
            kept.iter()
                .filter_map(|(s, c)| match c {
                    crate::family::TileConfig::Decode(t) if t.swap == swap => Some((*s, *t)),
                    _ => None,
                })
                .collect()
        };
        let (plain, turned) = (form(false), form(true));
        // The turned-around form has the plain one's tiles, C's sides exchanged.
        assert_eq!(
            turned
                .iter()
                .map(|(_, t)| DecodeTile { swap: false, ..*t })
                .collect::<Vec<_>>(),
            plain.iter().map(|(_, t)| *t).collect::<Vec<_>>()
        );
        assert!(turned
            .iter()
            .all(|(_, t)| Decode.block_mn(t) == (t.block_n(), t.rows())));
        // Rotated twins of the 16- and 32-row tiles of 16-column warps, and no others.
        let rotated: Vec<DecodeTile> = plain.iter().map(|(_, t)| *t).filter(|t| t.rot).collect();
        assert_eq!(rotated.len(), 4);
        assert!(rotated.iter().all(|t| t.nt == 1 && matches!(t.mt, 2 | 4)));
        for mt in [1, 2, 4] {
            assert!(plain.iter().any(|(_, t)| t.rows() == 8 * mt));
        }
        for (_, c) in &kept {
            let r = c.resources(DType::F16);
            assert!(
                r.est_regs <= 255 && r.smem_bytes <= t.smem_per_block_optin,
                "{c}: {r:?}"
            );
        }
        // Fewer rows rank first.
        let best = plain.iter().max_by(|a, b| a.0.total_cmp(&b.0)).unwrap();
        assert_eq!(best.1.rows(), 8);
        // 64 rows when asked; 64 rows by 32 columns a warp would be 64 accumulators. The
        // keys follow C: turned around, `block_m = [64]` asks for 64 rows of C per block
        // (the two-group tiles of 8 and 16 columns).
        let mut rows64 = TuneSpace::default();
        rows64.0.insert("block_m".into(), vec![64]);
        let mut report = Default::default();
        let (considered, kept) = crate::family::DynFamily::plan(&Decode, &cx, &rows64, &mut report);
        assert_eq!((considered, kept.len()), (5, 4), "pruned: {report:?}");
        assert_eq!(report["accumulators"].count, 1);
        assert!(kept.iter().all(|(_, c)| c.block_mn().0 == 64));
    }

    /// Turned around, a config takes N up to its rows, its grid walks M, and C's sides
    /// are exchanged in what the tuner and the estimate see.
    #[test]
    fn the_turned_around_form_takes_few_columns() {
        let g = ir(DType::F16, Layout::RowMajor, Layout::ColMajor);
        let t = TURNED_8;
        assert!(Decode.accepts(&t, &g, Problem::new(12288, 8, 4096)).is_ok());
        let err = Decode.accepts(&t, &g, Problem::new(8, 9, 4096)).unwrap_err();
        assert!(err.contains("N = 9"), "{err}");
        // Rows at any alignment, as the plain form.
        assert!(Decode.accepts(&t, &g, Problem::new(12288, 8, 700)).is_ok());
        let d = Decode.launch(&t, &g, Problem::new(12288, 8, 4096), Machine { units: 132 });
        assert_eq!(d.grid, [768, 1, 1]);
        assert_eq!(Decode.block_mn(&t), (16, 8));
        assert!(Decode
            .defines(&t, &g, Backend::Cuda, Problem::new(64, 8, 64))
            .contains(&("SWAP", 1)));
        assert!(Decode.describe(&t).starts_with("decode swap"));
        assert!(crate::family::TileConfig::Decode(t).turned());
        assert!(!crate::family::TileConfig::Decode(DecodeTile { swap: false, ..t }).turned());
        let plain = DecodeTile { swap: false, ..t };
        assert!(
            !serde_json::to_string(&plain).unwrap().contains("swap"),
            "plain keys unchanged"
        );
        let old: DecodeTile = serde_json::from_str(r#"{"mt":1,"nt":1,"warps":8,"kw":8,"unroll":4}"#).unwrap();
        assert_eq!(old, plain);
    }

    #[test]
    fn launch_covers_the_columns_and_the_batch() {
        let g = ir(DType::Bf16, Layout::RowMajor, Layout::ColMajor);
        let t = DecodeTile {
            mt: 1,
            nt: 2,
            warps: 8,
            kw: 4,
            unroll: 2,
            rot: false,
            swap: false,
        };
        assert_eq!(t.block_n(), 64);
        let d = Decode.launch(&t, &g, Problem::new(3, 4097, 64).batched(5), Machine { units: 132 });
        assert_eq!(d.grid, [65, 1, 5]);
        assert_eq!(d.block, [256, 1, 1]);
        // Two groups of four warps: three of each park their sums (8 floats a lane).
        assert_eq!(d.smem_bytes, 6 * 32 * 8 * 4);
    }
}
