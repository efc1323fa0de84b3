//! Staging misaligned operands: a call whose A or B rows do not all start on a 16-byte
//! boundary (a leading dimension, view offset or batch stride that is not a multiple of
//! 8 f16/bf16 or 4 f32 elements: K = 700, a view of odd pitch) takes every family's slow
//! load path: element loads in the mma.sync and SIMT kernels, 4- or 8-byte cp.async
//! instead of TMA in wgmma. Measured on the H200 (session e): views of pitch K + 3 ran at
//! 0.15–0.21× the packed time, and 3000×5000×700 at 0.59× cuBLAS on an mma.sync tile.
//!
//! So the runtime copies such an operand first (a driver 2-D copy, one per matrix of a
//! batch) into scratch rows of the next 16-byte multiple, and runs the kernel on that
//! aligned copy. The copy reads and writes the operand once; the GEMM reads it
//! `N / BN` (A) or `M / BM` (B) times, so on problems of real work the copy is the
//! smaller cost. Below [`MIN_FLOP`] of work a launch is dominated by fixed costs and the
//! copy's own launch would not pay.
//!
//! Padding elements past the extent are never read: every family bounds its loads by
//! the problem's extents, and zero-fills the part of a chunk past them.
//!
//! A call that a shape specialist of its target's plan reads where it lies is left alone
//! (gemv, gemv_n and decode read rows at any alignment through windows, every element
//! once): a policy of the plan, not of the shape, so not in [`worth_staging`] but in
//! [`staged_by_default`] and [`as_launched_in`], which the runtime
//! (`gemm-runtime/src/stage.rs`) and the tables' builds share.

use crate::family::{Problem, Stored, TileConfig};
use crate::ir::GemmIr;
use crate::target::TargetSpec;

/// Work (2·M·N·K per product, times the batch) below which a misaligned operand is used
/// where it lies. About a 512³ GEMM: a few microseconds on a GPU, where a copy's launch
/// alone costs a few more. Provisional: set from the slow paths' measured costs, to be
/// re-measured against staged runs.
pub const MIN_FLOP: f64 = (1u64 << 27) as f64;

/// Elements per 16 bytes of `ir`'s operand type.
fn per_chunk(ir: &GemmIr) -> usize {
    16 / ir.ab_dtype.size() as usize
}

/// Whether A's and B's rows all start on 16-byte boundaries at `p`.
pub fn aligned(ir: &GemmIr, p: Problem) -> [bool; 2] {
    let [a, b] = p.extents(ir);
    [
        p.a.rows_aligned(a.0, per_chunk(ir)),
        p.b.rows_aligned(b.0, per_chunk(ir)),
    ]
}

/// The most copies one staged operand may take: a batch whose matrices are not back to
/// back (a gap between them) takes one 2-D copy per matrix, each a driver call of a few
/// microseconds, so a longer batch of them is left where it lies.
pub const MAX_COPIES: usize = 256;

/// The driver copies staging an operand stored at `at` with rows of `extent` takes: one
/// for a single matrix or a batch stored back to back (one 2-D copy of every row), else
/// one per matrix of `p`'s batch.
pub fn copies(p: Problem, at: Stored, (extent, rows): (usize, usize)) -> usize {
    if at.bstride == 0 || at.bstride == rows * at.pitch(extent) {
        1
    } else {
        p.batch
    }
}

/// Which of A and B a launch of `p` stages (see the module doc): the misaligned ones, on
/// problems of at least [`MIN_FLOP`] of work, that take at most [`MAX_COPIES`] copies;
/// both false otherwise.
pub fn worth_staging(ir: &GemmIr, p: Problem) -> [bool; 2] {
    let flop = 2.0 * p.m as f64 * p.n as f64 * p.k as f64 * p.batch.max(1) as f64;
    if flop < MIN_FLOP {
        return [false; 2];
    }
    let ext = p.extents(ir);
    let few = [
        copies(p, p.a, ext[0]) <= MAX_COPIES,
        copies(p, p.b, ext[1]) <= MAX_COPIES,
    ];
    let ok = aligned(ir, p);
    [!ok[0] && few[0], !ok[1] && few[1]]
}

/// Where a staged operand lies in its scratch buffer: rows of the extent rounded up to
/// 16 bytes from element 0 and, for one matrix per product (a nonzero batch stride), the
/// matrices one after another; a broadcast operand stays one matrix.
pub fn staged_at(ir: &GemmIr, extent: usize, rows: usize, at: Stored) -> Stored {
    let ld = extent.div_ceil(per_chunk(ir)).max(1) * per_chunk(ir);
    let bstride = if at.bstride != 0 { ld * rows } else { 0 };
    Stored::new(ld, 0).with_bstride(bstride)
}

/// `p` as a launch under the default policy runs it, [`worth_staging`]'s operands
/// staged, for a kernel with no shape specialist (see [`as_launched_in`]).
pub fn as_launched(ir: &GemmIr, p: Problem) -> Problem {
    staged(ir, p, worth_staging(ir, p))
}

/// Whether a shape specialist among `configs` (a family of preference 0 on `target`:
/// gemv, gemv_n, decode, decode_n, each reading every operand element once) takes a call
/// at `p` where its operands lie; staging would move a misaligned weight twice more than
/// such a kernel reads it (in place 1.6-1.8x faster than staged at 8-16 rows of
/// 4096x4099 on the H200, bench/results/h200-2026-12-05af).
pub fn specialist_reads_in_place(target: &TargetSpec, configs: &[TileConfig], ir: &GemmIr, p: Problem) -> bool {
    configs
        .iter()
        .any(|c| c.is_specialist(target) && c.family().accepts(c, ir, p).is_ok())
}

/// Which of A and B the default policy stages at `p` for a kernel planned with
/// `configs` on `target`: [`worth_staging`]'s, unless a shape specialist reads the call
/// where it lies ([`specialist_reads_in_place`]).
pub fn staged_by_default(target: &TargetSpec, configs: &[TileConfig], ir: &GemmIr, p: Problem) -> [bool; 2] {
    let worth = worth_staging(ir, p);
    if worth.contains(&true) && specialist_reads_in_place(target, configs, ir, p) {
        [false; 2]
    } else {
        worth
    }
}

/// `p` as a launch of a kernel planned with `configs` on `target` runs it under the
/// default policy ([`staged_by_default`]).
pub fn as_launched_in(target: &TargetSpec, configs: &[TileConfig], ir: &GemmIr, p: Problem) -> Problem {
    staged(ir, p, staged_by_default(target, configs, ir, p))
}

/// `p` after staging the operands `which` marks: those now packed in scratch.
pub fn staged(ir: &GemmIr, p: Problem, which: [bool; 2]) -> Problem {
    let [a, b] = p.extents(ir);
    Problem {
        a: if which[0] { staged_at(ir, a.0, a.1, p.a) } else { p.a },
        b: if which[1] { staged_at(ir, b.0, b.1, p.b) } else { p.b },
        ..p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::cuda::tests::ir;
    use crate::ir::{AccMode, DType, Layout};

    #[test]
    fn odd_k_stages_both_k_major_operands_and_small_problems_none() {
        let g = ir(DType::F16, AccMode::F32, Layout::RowMajor, Layout::ColMajor);
        // Row-major A (M×K) and column-major B (K-major): K = 700 is 1400-byte rows.
        let p = Problem::new(3000, 5000, 700);
        assert_eq!(aligned(&g, p), [false, false]);
        assert_eq!(worth_staging(&g, p), [true, true]);
        let s = staged(&g, p, [true, true]);
        assert_eq!((s.a, s.b), (Stored::new(704, 0), Stored::new(704, 0)));
        assert_eq!(aligned(&g, s), [true, true]);
        assert_eq!(worth_staging(&g, Problem::new(33, 17, 31)), [false, false]);
        assert_eq!(worth_staging(&g, Problem::new(4096, 4096, 4096)), [false, false]);
    }

    #[test]
    fn a_view_of_odd_pitch_or_offset_stages_that_operand_only() {
        let g = ir(DType::F16, AccMode::F32, Layout::RowMajor, Layout::ColMajor);
        let p = Problem::new(1024, 1024, 1024);
        let odd_pitch = p.stored(Stored::new(1027, 0), Stored::default());
        assert_eq!(worth_staging(&g, odd_pitch), [true, false]);
        let odd_offset = p.stored(Stored::default(), Stored::new(0, 3));
        assert_eq!(worth_staging(&g, odd_offset), [false, true]);
        // A batched operand keeps one matrix per product, packed; a broadcast one stays one.
        let b = p
            .stored(Stored::new(1027, 0).with_bstride(1027 * 1024 + 5), Stored::new(1025, 0))
            .batched(4);
        let s = staged(&g, b, worth_staging(&g, b));
        // Rows of the extent (K = 1024), whatever the pitch was.
        assert_eq!(s.a, Stored::new(1024, 0).with_bstride(1024 * 1024));
        assert_eq!(s.b, Stored::new(1024, 0));
        assert_eq!(s.batch, 4);
    }

    #[test]
    fn a_long_batch_with_gaps_is_left_and_one_back_to_back_is_one_copy() {
        let g = ir(DType::F16, AccMode::F32, Layout::RowMajor, Layout::ColMajor);
        // 1000 products of 64x64x63 (2^32 flops): A's rows of K = 63 are misaligned.
        let p = Problem::new(64, 64, 63).batched(1000);
        let back_to_back = p.stored(Stored::new(0, 0).with_bstride(64 * 63), Stored::default());
        assert_eq!(copies(back_to_back, back_to_back.a, (63, 64)), 1);
        assert!(worth_staging(&g, back_to_back)[0]);
        let gaps = p.stored(Stored::new(0, 0).with_bstride(64 * 63 + 1), Stored::default());
        assert_eq!(copies(gaps, gaps.a, (63, 64)), 1000);
        assert!(!worth_staging(&g, gaps)[0]);
        // A short batch with gaps: one copy per product.
        let short = Problem::new(128, 128, 63)
            .batched(200)
            .stored(Stored::new(0, 0).with_bstride(128 * 63 + 1), Stored::default());
        assert_eq!(copies(short, short.a, (63, 128)), 200);
        assert!(worth_staging(&g, short)[0]);
    }
}
