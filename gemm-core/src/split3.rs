//! Where the split operands of an [`AccMode::Tf32x3`] call lie: the layout the runtime
//! writes them in and the problem its kernel, a tf32 kernel, then runs.
//!
//! Each f32 operand `x` is split into `hi = tf32(x)` (nearest, ties away, as
//! `cvt.rna.tf32.f32`) and `lo = x - hi` (exact in f32), and the product is taken as
//! `lo_a·hi_b + hi_a·lo_b + hi_a·hi_b`: three tf32 products whose dropped term `lo_a·lo_b`
//! is about 2^-22 of the product, and whose `lo` factors lose about 2^-11 of themselves to
//! tf32, so each product is within a few f32 rounding steps of the exact one. Rather
//! than a kernel that takes three products of every operand tile, the three pairs are
//! laid **side by side along K**, `A' = [lo_a | hi_a | hi_a]` (M × 3K) and
//! `B' = [hi_b ; lo_b ; hi_b]` (3K × N), so that `A'·B'` is the sum above and any tf32
//! kernel of the plan (wgmma, mma.sync, the decode families; simt on OpenCL, which
//! multiplies in f32) computes it at K' = 3K, its epilogue fused as ever. The small
//! products come first along K, so that they are summed before the large one joins.
//!
//! The split copies keep each operand's layout (a K-contiguous operand's rows become
//! three times as long; a K-strided one gets three times the rows), packed to 16-byte
//! rows, a matrix per product where the operand has one per product (`bstride` != 0) and
//! one where it is shared by the batch.

use crate::family::{Problem, Stored};
use crate::ir::{AccMode, GemmIr, Layout};

/// Which part of an operand a K-block of its split copy holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// `tf32(x)`.
    Hi,
    /// `x - tf32(x)`.
    Lo,
}

/// The parts of A's three K-blocks (`lo_a`, `hi_a`, `hi_a`), against B's
/// ([`B_PARTS`]: `hi_b`, `lo_b`, `hi_b`).
pub const A_PARTS: [Part; 3] = [Part::Lo, Part::Hi, Part::Hi];
/// The parts of B's three K-blocks.
pub const B_PARTS: [Part; 3] = [Part::Hi, Part::Lo, Part::Hi];

/// Elements a split row is padded to (16 bytes of f32): every row of a split copy starts
/// on a 16-byte boundary, so that the kernel takes its vector and TMA paths.
const ROW_ALIGN: usize = 4;

/// Whether a call of `ir` runs on split operands.
pub fn splits(ir: &GemmIr) -> bool {
    ir.acc == AccMode::Tf32x3
}

/// How one operand (side 0: A, 1: B) is split: where it lies now and where its split
/// copy lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    /// Contiguous elements a stored row (column) has.
    pub extent: usize,
    /// Stored rows (columns) of one matrix.
    pub rows: usize,
    /// Whether K runs along the stored rows (`extent` = K) rather than across them
    /// (`rows` = K).
    pub k_along_rows: bool,
    /// Matrices the operand holds for the call: the batch where each product has its own
    /// (`bstride` != 0), else 1.
    pub count: usize,
    /// Where the split copy lies in its scratch.
    pub to: Stored,
    /// The parts of its three K-blocks, in K order.
    pub parts: [Part; 3],
}

impl Split {
    /// Elements the split copy spans (the scratch it needs).
    pub fn elems(&self) -> usize {
        let (extent, rows) = self.split_extents();
        self.to.pitch(extent) * rows * self.count
    }

    /// (extent, rows) of one split matrix.
    pub fn split_extents(&self) -> (usize, usize) {
        if self.k_along_rows {
            (3 * self.extent, self.rows)
        } else {
            (self.extent, 3 * self.rows)
        }
    }
}

/// Whether K is the contiguous extent of `side`'s stored rows.
fn k_along_rows(ir: &GemmIr, side: usize) -> bool {
    if side == 0 {
        ir.a_layout() == Layout::RowMajor
    } else {
        ir.b_layout() == Layout::ColMajor
    }
}

/// The (rows, cols) of `side`'s split parameter (0: A, 1: B) whose own matrix, as its
/// `Matrix` declares it, is `rows` x `cols`: K three times over. K is A's columns and B's
/// rows, or the other way round for a factor used transposed (`x.t()`).
pub fn split_dims(ir: &GemmIr, side: usize, rows: usize, cols: usize) -> (usize, usize) {
    let k_is_cols = if side == 0 { !ir.a_t } else { ir.b_t };
    if k_is_cols {
        (rows, 3 * cols)
    } else {
        (3 * rows, cols)
    }
}

/// How `side` (0: A, 1: B) of a call at `p` is split.
pub fn split(ir: &GemmIr, p: Problem, side: usize) -> Split {
    let (extent, rows) = p.extents(ir)[side];
    let at = [p.a, p.b][side];
    let along = k_along_rows(ir, side);
    let split_extent = if along { 3 * extent } else { extent };
    let split_rows = if along { rows } else { 3 * rows };
    let ld = split_extent.div_ceil(ROW_ALIGN).max(1) * ROW_ALIGN;
    let bstride = if at.bstride != 0 { ld * split_rows } else { 0 };
    Split {
        extent,
        rows,
        k_along_rows: along,
        count: if at.bstride != 0 { p.batch.max(1) } else { 1 },
        to: Stored::new(ld, 0).with_bstride(bstride),
        parts: if side == 0 { A_PARTS } else { B_PARTS },
    }
}

/// The problem the kernel runs for a split call at `p`: K three times over, A and B
/// where their split copies lie.
pub fn split_problem(ir: &GemmIr, p: Problem) -> Problem {
    Problem {
        k: 3 * p.k,
        a: split(ir, p, 0).to,
        b: split(ir, p, 1).to,
        ..p
    }
}

/// The element of the split copy that part `block` (0..3) of source element (`row`,
/// `i`) of matrix `z` goes to, in elements from the copy's start.
pub fn split_index(s: &Split, z: usize, block: usize, row: usize, i: usize) -> usize {
    let (extent, _) = s.split_extents();
    let pitch = s.to.pitch(extent);
    let base = z * s.to.bstride;
    if s.k_along_rows {
        base + row * pitch + block * s.extent + i
    } else {
        base + (block * s.rows + row) * pitch + i
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::DType;

    fn ir(la: Layout, lb: Layout) -> GemmIr {
        GemmIr::matmul("s", DType::F32, AccMode::Tf32x3, la, lb)
    }

    #[test]
    fn k_triples_along_the_stored_rows_or_across_them() {
        // A row-major (M×K, K contiguous), B column-major (K contiguous): rows 3K long.
        let g = ir(Layout::RowMajor, Layout::ColMajor);
        let p = Problem::new(5, 7, 3);
        let q = split_problem(&g, p);
        assert_eq!(q.k, 9);
        assert_eq!((q.a, q.b), (Stored::new(12, 0), Stored::new(12, 0)));
        let a = split(&g, p, 0);
        assert!(a.k_along_rows);
        assert_eq!((a.elems(), a.parts), (12 * 5, A_PARTS));
        // Part 1 (hi) of A's element (row 2, k 1): row 2, column 3 + 1.
        assert_eq!(split_index(&a, 0, 1, 2, 1), 2 * 12 + 4);
        // A column-major (K rows of M), B row-major (K rows of N): 3K rows.
        let g = ir(Layout::ColMajor, Layout::RowMajor);
        let q = split_problem(&g, p);
        assert_eq!((q.k, q.a, q.b), (9, Stored::new(8, 0), Stored::new(8, 0)));
        let b = split(&g, p, 1);
        assert!(!b.k_along_rows);
        assert_eq!((b.elems(), b.parts), (8 * 9, B_PARTS));
        // Part 2 of B's element (k 1, column 6): row 2·3 + 1.
        assert_eq!(split_index(&b, 0, 2, 1, 6), 7 * 8 + 6);
    }

    /// K of a parameter as declared: A (M×K) and B (K×N), or transposed factors, whose
    /// declared matrices are K×M and N×K.
    #[test]
    fn split_dims_triple_the_declared_k() {
        let mut g = ir(Layout::RowMajor, Layout::ColMajor);
        assert_eq!(split_dims(&g, 0, 5, 3), (5, 9));
        assert_eq!(split_dims(&g, 1, 3, 7), (9, 7));
        g.a_t = true;
        g.b_t = true;
        assert_eq!(split_dims(&g, 0, 3, 5), (9, 5));
        assert_eq!(split_dims(&g, 1, 7, 3), (7, 9));
    }

    #[test]
    fn batches_keep_their_broadcasts_and_views_are_packed() {
        let g = ir(Layout::RowMajor, Layout::ColMajor);
        let p = Problem {
            batch: 4,
            a: Stored::new(10, 3).with_bstride(100),
            b: Stored::new(0, 0),
            ..Problem::new(5, 7, 3)
        };
        let (a, b) = (split(&g, p, 0), split(&g, p, 1));
        assert_eq!((a.count, a.to), (4, Stored::new(12, 0).with_bstride(60)));
        assert_eq!((b.count, b.to), (1, Stored::new(12, 0)));
        assert_eq!(split_index(&a, 3, 0, 0, 0), 180);
        assert_eq!(a.elems(), 240);
    }

    #[test]
    fn the_small_products_come_first_and_hi_hi_last() {
        let pairs: Vec<_> = A_PARTS.iter().zip(B_PARTS).collect();
        assert_eq!(
            pairs,
            [(&Part::Lo, Part::Hi), (&Part::Hi, Part::Lo), (&Part::Hi, Part::Hi)]
        );
    }
}
