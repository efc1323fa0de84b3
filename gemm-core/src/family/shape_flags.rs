//! The alignment flags a call's shape and views give the CUDA sources: which operand
//! rows may be copied in 16-byte chunks or read in vectors. Preprocessor flags, so that
//! one source serves every shape; the families pass them beside their tile constants.

use super::{Problem, Stored};
use crate::ir::GemmIr;

/// Per-shape preprocessor flags for the sources of `emit`:
/// - `A_VEC` / `B_VEC`: 1 when every stored row of the operand starts on a 16-byte
///   boundary: its leading dimension (for packed storage the contiguous extent: K for
///   row-major A, M for column-major A, N for row-major B, K for column-major B) and its
///   view's offset are multiples of 16 bytes (8 f16/bf16 elements, 4 f32). Buffers start
///   16-byte aligned (crossgemm's allocations are 256-byte aligned, views of a caller's
///   CUDA memory are checked to be 16-byte aligned), so every 16-byte chunk of a tile is
///   then 16-byte aligned in global memory and the MMA kernels may use cp.async
///   (zero-filling out-of-range chunks); otherwise they load elements.
/// - `A_ALIGN` / `B_ALIGN`: the largest of 8, 4, 2, 1 elements dividing both; the SIMT
///   kernel uses VW-wide loads when `VW` divides it.
pub fn shape_defines(ir: &GemmIr, p: Problem) -> Vec<(&'static str, u32)> {
    let [(a_ext, _), (b_ext, _)] = p.extents(ir);
    let per_chunk = 16 / ir.ab_dtype.size() as usize;
    let align = |s: Stored, e: usize| {
        [8u32, 4, 2, 1]
            .into_iter()
            .find(|&v| s.rows_aligned(e, v as usize))
            .unwrap_or(1)
    };
    vec![
        ("A_VEC", p.a.rows_aligned(a_ext, per_chunk) as u32),
        ("B_VEC", p.b.rows_aligned(b_ext, per_chunk) as u32),
        ("A_ALIGN", align(p.a, a_ext)),
        ("B_ALIGN", align(p.b, b_ext)),
    ]
}

/// Bytes of the memory sector that a row of A or B should start on: rows of 16-bit
/// operands that start mid-sector (a pitch that is an odd multiple of 16 bytes, K = 1000)
/// cost TMA-fed kernels 3–18% on the H200 and change which tile wins
/// (bench/results/h200-2026-12-03a..c).
pub const ROW_SECTOR: u32 = 32;

/// The largest power of two up to [`ROW_SECTOR`] that every stored row of A and of B
/// starts on, in bytes (pitch, view start and batch stride all divide), for `ir` at `p`.
pub fn row_align(ir: &GemmIr, p: Problem) -> u32 {
    let esz = ir.ab_dtype.size();
    // Every row starts on an element: halving stops there.
    let of = |at: Stored, extent: usize| {
        let mut a = ROW_SECTOR;
        while a > esz && !at.rows_aligned(extent, (a / esz) as usize) {
            a /= 2;
        }
        a
    };
    let [(ae, _), (be, _)] = p.extents(ir);
    of(p.a, ae).min(of(p.b, be))
}

/// The rows' class a bucket key tells apart: [`ROW_SECTOR`] (every row of A and B starts
/// on a sector), 16 (on 16-byte boundaries, some mid-sector: TMA-fed kernels read them
/// slower), or 0 (some not even on 16-byte boundaries: no TMA or 16-byte copies, and the
/// build variant's vector flags follow the finer alignment within the class).
pub fn row_class(align: u32) -> u32 {
    match align {
        a if a >= ROW_SECTOR => ROW_SECTOR,
        a if a >= 16 => 16,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::cuda::tests::ir;
    use crate::ir::{AccMode, DType, Layout};

    #[test]
    fn transposed_operands_follow_the_kernel_side_layout() {
        // a.t() of a column-major parameter is row-major for the kernel: K-major A.
        let mut g = ir(DType::F16, AccMode::F32, Layout::ColMajor, Layout::RowMajor);
        g.a_t = true;
        g.b_t = true;
        assert_eq!(
            shape_defines(&g, Problem::new(3, 5, 16)),
            vec![("A_VEC", 1), ("B_VEC", 1), ("A_ALIGN", 8), ("B_ALIGN", 8)]
        );
    }

    #[test]
    fn shape_defines_follow_the_contiguous_extent() {
        let g = ir(DType::F16, AccMode::F32, Layout::RowMajor, Layout::RowMajor);
        assert_eq!(
            shape_defines(&g, Problem::new(7, 64, 24)),
            vec![("A_VEC", 1), ("B_VEC", 1), ("A_ALIGN", 8), ("B_ALIGN", 8)]
        );
        assert_eq!(
            shape_defines(&g, Problem::new(64, 6, 12)),
            vec![("A_VEC", 0), ("B_VEC", 0), ("A_ALIGN", 4), ("B_ALIGN", 2)]
        );
        let g = ir(DType::F32, AccMode::Tf32, Layout::ColMajor, Layout::ColMajor);
        assert_eq!(
            shape_defines(&g, Problem::new(12, 1, 5)),
            vec![("A_VEC", 1), ("B_VEC", 0), ("A_ALIGN", 4), ("B_ALIGN", 1)]
        );
    }

    #[test]
    fn shape_defines_follow_the_views_strides_and_offsets() {
        let g = ir(DType::F16, AccMode::F32, Layout::RowMajor, Layout::RowMajor);
        // K = 24 would take 16-byte chunks packed; a pitch of 30 or an offset of 3 does not.
        let p = Problem::new(7, 64, 24);
        assert_eq!(
            shape_defines(&g, p.stored(Stored::new(30, 0), Stored::new(72, 8))),
            vec![("A_VEC", 0), ("B_VEC", 1), ("A_ALIGN", 2), ("B_ALIGN", 8)]
        );
        assert_eq!(
            shape_defines(&g, p.stored(Stored::new(0, 3), Stored::new(0, 4))),
            vec![("A_VEC", 0), ("B_VEC", 0), ("A_ALIGN", 1), ("B_ALIGN", 4)]
        );
        // A padded leading dimension that keeps 16-byte rows keeps the vector path.
        assert_eq!(
            shape_defines(&g, p.stored(Stored::new(40, 16), Stored::new(0, 0))),
            shape_defines(&g, p)
        );
    }
}
