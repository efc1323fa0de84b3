//! How A and B reach shared memory for a call: TMA boxes where every stored row starts
//! on a 16-byte boundary, else the cp.async producer (rows on 4-byte boundaries), with
//! the maps and copy sizes that follow from the shape and the views' geometry.

use super::{bk_for, WgmmaTile};
use crate::family::{Problem, Stored, TensorMap, OUT_PARAM};
use crate::ir::{DType, GemmIr, Layout};

/// The TMA box (`boxDim`, dimension 0 first) of an operand tile: `{row, rows}` for a
/// K-major operand (`row` = one 128-byte swizzle row of k, `rows` = BM for A, BN for B; a
/// k-tile of several such rows arrives as one box per row), `{64, BK}` for an MN-major
/// one (the tile then arrives as `rows / 64` boxes).
pub fn tma_box(k_major: bool, rows: u32, bk: u32) -> [u32; 2] {
    if k_major {
        [bk, rows]
    } else {
        [64, bk]
    }
}

/// How one of A and B is stored for a call.
#[derive(Clone, Copy)]
struct Rows {
    /// "A" or "B".
    op: &'static str,
    /// The name of the contiguous dimension.
    dim: &'static str,
    /// Elements of a stored row (the contiguous extent).
    extent: usize,
    /// Stored rows of one matrix.
    outer: usize,
    /// Where the view lies.
    at: Stored,
}

impl Rows {
    /// The largest of `sizes` (bytes) that divides the pitch, the start and the batch
    /// stride: every stored row of every matrix starts on such a boundary.
    fn alignment(&self, esz: usize, sizes: &[u32]) -> Option<u32> {
        sizes
            .iter()
            .copied()
            .find(|&c| (c as usize).is_multiple_of(esz) && self.at.rows_aligned(self.extent, c as usize / esz))
    }
}

/// A's and B's storage rows for `p`.
fn operand_rows(ir: &GemmIr, p: Problem) -> [Rows; 2] {
    let rows = |op, dim, extent, outer, at| Rows {
        op,
        dim,
        extent,
        outer,
        at,
    };
    let [(ae, ao), (be, bo)] = p.extents(ir);
    let a_dim = match ir.a_layout() {
        Layout::RowMajor => "K",
        Layout::ColMajor => "M",
    };
    let b_dim = match ir.b_layout() {
        Layout::ColMajor => "K",
        Layout::RowMajor => "N",
    };
    [rows("A", a_dim, ae, ao, p.a), rows("B", b_dim, be, bo, p.b)]
}

/// Whether an operand stored at `at` is one matrix per product of `p`'s batch (not
/// broadcast): its map is then rank 3.
fn batched(p: Problem, at: Stored) -> bool {
    p.batch > 1 && at.bstride > 0
}

/// Whether TMA can map both operands of `p`: pitches, view starts and batch strides of
/// a multiple of 16 bytes, and the matrices of a batched operand apart (a rank-3 map's
/// strides grow outwards; overlapping views take the cp.async producer).
pub fn tma_ok(ir: &GemmIr, p: Problem) -> bool {
    let esz = ir.ab_dtype.size() as usize;
    operand_rows(ir, p).iter().all(|r| {
        let apart = !batched(p, r.at) || r.at.bstride >= r.outer * r.at.pitch(r.extent);
        apart && r.alignment(esz, &[16]).is_some()
    })
}

/// For a call TMA cannot map but the cp.async producer can (rows of a multiple of 4
/// bytes), the bytes of one copy for A and for B: the largest of 16, 8, 4 that divides
/// the operand's row pitch and its view's start (and so every row's start and every
/// chunk of it).
pub fn cpasync_chunks(ir: &GemmIr, p: Problem) -> Option<[u32; 2]> {
    if tma_ok(ir, p) {
        return None;
    }
    let esz = ir.ab_dtype.size() as usize;
    let [a, b] = operand_rows(ir, p);
    Some([a.alignment(esz, &[16, 8, 4])?, b.alignment(esz, &[16, 8, 4])?])
}

/// Whether `ir`'s A and B maps at `p` are rank 3 (`[A, B]`): one matrix per product of a
/// batch, mapped by TMA ([`tma_ok`]).
pub fn rank3(ir: &GemmIr, p: Problem) -> [bool; 2] {
    let ok = tma_ok(ir, p);
    [ok && batched(p, p.a), ok && batched(p, p.b)]
}

/// The tensor map of a call served by the cp.async producer, which reads none: the first
/// 16 bytes of the operand as one row (8 16-bit or 4 f32 elements), so that the
/// runtime's encoding succeeds whatever the shape.
pub fn placeholder_map(param: u32, dtype: DType) -> TensorMap {
    let elems = 16 / dtype.size() as u64;
    TensorMap {
        param,
        dtype,
        tf32: false,
        dims: [elems, 1],
        pitch_bytes: 16,
        offset_bytes: 0,
        batch: None,
        box_dims: [elems as u32, 1],
        swizzle_128b: false,
    }
}

/// Refuses a call whose A or B rows do not all start on a 4-byte boundary (neither TMA
/// nor cp.async can copy them).
pub(super) fn check_rows(ir: &GemmIr, p: Problem) -> Result<(), String> {
    let esz = ir.ab_dtype.size() as usize;
    for r in operand_rows(ir, p) {
        if r.alignment(esz, &[4]).is_some() {
            continue;
        }
        let Rows {
            op, dim, extent, at, ..
        } = r;
        return Err(if at == Stored::default() {
            format!("{op}'s rows ({dim} = {extent} elements) are not a multiple of 4 bytes, which TMA (16) and cp.async (4) need")
        } else {
            format!(
                "{op}'s rows (leading dimension {}, view offset {}, batch stride {} elements) do not all start on a 4-byte boundary, which TMA (16) and cp.async (4) need",
                at.pitch(extent),
                at.offset,
                at.bstride
            )
        });
    }
    Ok(())
}

/// A's and B's maps (and with `tma_store` the output's, [`out_map`]), as the module docs lay out: K-major operands in one box of
/// `{BK, rows}` per stage, MN-major ones in `{64, BK}` boxes; 128-byte swizzle; the pitch
/// and start of each view. For a call that the cp.async producer serves
/// ([`cpasync_chunks`]) the kernel reads no map: both are placeholders over the
/// operand's first 16 bytes ([`placeholder_map`]).
pub(super) fn maps(t: &WgmmaTile, ir: &GemmIr, p: Problem) -> Vec<TensorMap> {
    let mut v = operand_maps(t, ir, p);
    v.extend(t.tma_store.then(|| out_map(t, ir, p)));
    v
}

/// A's and B's maps of [`maps`].
fn operand_maps(t: &WgmmaTile, ir: &GemmIr, p: Problem) -> Vec<TensorMap> {
    if !tma_ok(ir, p) {
        return vec![placeholder_map(ir.a, ir.ab_dtype), placeholder_map(ir.b, ir.ab_dtype)];
    }
    let esz = ir.ab_dtype.size() as u64;
    let (m, n, k) = (p.m as u64, p.n as u64, p.k as u64);
    let map = |param: u32, k_major: bool, rows: u64, tile_rows: u32, at: Stored| {
        let dims = if k_major { [k, rows] } else { [rows, k] };
        TensorMap {
            param,
            dtype: ir.ab_dtype,
            tf32: ir.ab_dtype == DType::F32 && ir.acc.tf32_products(),
            dims,
            pitch_bytes: at.pitch(dims[0] as usize) as u64 * esz,
            offset_bytes: at.offset as u64 * esz,
            batch: batched(p, at).then(|| [p.batch as u64, at.bstride as u64 * esz]),
            box_dims: tma_box(k_major, tile_rows, bk_for(ir.ab_dtype)),
            swizzle_128b: true,
        }
    };
    vec![
        map(ir.a, ir.a_layout() == Layout::RowMajor, m, t.bm, p.a),
        map(ir.b, ir.b_layout() == Layout::ColMajor, n, t.bn, p.b),
    ]
}

/// Whether TMA can store `ir`'s output at `p` (the TMA-store epilogue,
/// [`WgmmaTile::tma_store`]): a row-major output whose rows all start on 16-byte
/// boundaries (pitch, view start and batch stride).
pub fn out_tma_ok(ir: &GemmIr, p: Problem) -> bool {
    let osz = ir.out_dtype.size() as usize;
    ir.out_layout == Layout::RowMajor && p.c.rows_aligned(p.n, 16 / osz)
}

/// The output's map for the TMA-store epilogue: rows of N, boxes of 128 bytes of
/// columns by a consumer's rows of the tile (`BM / CONSUMERS`, ping-pong `BM`), 128-byte
/// swizzle (the layout the epilogue stages); rank 3 for a batch, the product outermost.
pub(super) fn out_map(t: &WgmmaTile, ir: &GemmIr, p: Problem) -> TensorMap {
    let osz = ir.out_dtype.size() as u64;
    TensorMap {
        param: OUT_PARAM,
        dtype: ir.out_dtype,
        tf32: false,
        dims: [p.n as u64, p.m as u64],
        pitch_bytes: p.c.pitch(p.n) as u64 * osz,
        offset_bytes: p.c.offset as u64 * osz,
        batch: (p.batch > 1).then(|| [p.batch as u64, p.c.bstride as u64 * osz]),
        box_dims: [128 / osz as u32, t.bm / t.sharers()],
        swizzle_128b: true,
    }
}
