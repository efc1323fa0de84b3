//! Operand data between device views and the host: every view's elements downloaded
//! and packed (the host reference's inputs, per product of a batch), and the reference's
//! values written back into an output's view(s) (the host device). Views may be strided,
//! offset and batched ([`Stored`]); only their elements move.

use crate::call::{packed_extent, Arg, Call};
use crate::element::decode;
use crate::error::Result;
use crate::reference::{self, HostOperand};
use gemm_core::{GemmIr, Layout, ParamKind, Stored};

/// Writes `vals` (packed, in `layout`, `batch` products one after another) into the
/// elements of the `rows × cols` output view(s) at `at` inside `all` (a whole buffer's).
pub(crate) fn scatter<T: Copy>(
    all: &mut [T],
    vals: &[T],
    layout: Layout,
    (rows, cols): (usize, usize),
    at: Stored,
    batch: usize,
) {
    let inner = packed_extent(layout, rows, cols);
    let pitch = at.pitch(inner);
    let outer = (rows * cols).checked_div(inner).unwrap_or(0);
    for (b, product) in vals.chunks(rows * cols).take(batch).enumerate() {
        for (o, line) in product.chunks(inner.max(1)).take(outer).enumerate() {
            let start = at.offset + b * at.bstride + o * pitch;
            all[start..start + inner].copy_from_slice(line);
        }
    }
}

/// The packed elements of a view (layout order) out of its whole buffer's.
pub(crate) fn gather<T: Copy>(all: &[T], layout: Layout, rows: usize, cols: usize, at: Stored) -> Vec<T> {
    if at == Stored::default() {
        let mut v = all.to_vec();
        v.truncate(rows * cols);
        return v;
    }
    let inner = packed_extent(layout, rows, cols);
    let pitch = at.pitch(inner);
    let outer = (rows * cols).checked_div(inner).unwrap_or(0);
    let mut v = Vec::with_capacity(rows * cols);
    for o in 0..outer {
        let start = at.offset + o * pitch;
        v.extend_from_slice(&all[start..start + inner]);
    }
    v
}

/// The packed elements of `batch` views, the `b`-th `b · at.bstride` after the first, one
/// after another, out of their whole buffer's.
pub(crate) fn gather_batch<T: Copy>(
    all: &[T],
    layout: Layout,
    (rows, cols): (usize, usize),
    at: Stored,
    batch: usize,
) -> Vec<T> {
    (0..batch)
        .flat_map(|b| gather(all, layout, rows, cols, Stored::new(at.ld, at.offset + b * at.bstride)))
        .collect()
}

/// Every buffer operand, widened to f32 and packed (a view's elements only, in its
/// layout's order; scalars get an empty vector).
fn download(ir: &GemmIr, args: &[Arg<'_>]) -> Result<Vec<Vec<f32>>> {
    let mut data: Vec<Vec<f32>> = Vec::with_capacity(args.len());
    for (p, a) in ir.params.iter().zip(args) {
        data.push(match (p.kind, a) {
            (
                ParamKind::Matrix { dtype, .. } | ParamKind::Row { dtype } | ParamKind::Col { dtype },
                Arg::Matrix { buf, .. } | Arg::Vector { buf, .. },
            ) => {
                let mut bytes = vec![0u8; buf.bytes];
                buf.download(&mut bytes)?;
                let all = decode(dtype, &bytes);
                // A vector is a one-row view.
                match (p.kind, *a) {
                    (
                        ParamKind::Matrix { layout, .. },
                        Arg::Matrix {
                            rows, cols, at, batch, ..
                        },
                    ) => gather_batch(&all, layout, (rows, cols), at, batch),
                    (_, Arg::Vector { len, at, batch, .. }) => {
                        gather_batch(&all, Layout::RowMajor, (1, len), at, batch)
                    }
                    _ => all,
                }
            }
            _ => Vec::new(),
        });
    }
    Ok(data)
}

/// The operands of product `b` of a batch as the host reference takes them, over `data`
/// from [`download`].
pub(crate) fn operands<'d>(ir: &GemmIr, args: &[Arg<'_>], data: &'d [Vec<f32>], b: usize) -> Vec<HostOperand<'d>> {
    // Product `b`'s slice of a batched operand; the one matrix of a broadcast one.
    let part = |d: &'d [f32], size: usize, count: usize| {
        let b = if count > 1 { b } else { 0 };
        &d[(b * size).min(d.len())..((b + 1) * size).min(d.len())]
    };
    ir.params
        .iter()
        .zip(args)
        .zip(data)
        .map(|((p, a), d)| match (p.kind, *a) {
            (ParamKind::Matrix { layout, .. }, Arg::Matrix { rows, cols, batch, .. }) => HostOperand::Matrix {
                data: part(d, rows * cols, batch),
                rows,
                cols,
                layout,
            },
            (_, Arg::Vector { len, batch, .. }) => HostOperand::Vector(part(d, len, batch)),
            (_, Arg::Scalar(s)) => HostOperand::Scalar(s),
            _ => HostOperand::Vector(d),
        })
        .collect()
}

/// The host reference of products `0..batch` of a call of `args` (`m × n × k` each): f32
/// values in the output's layout, the products one after another.
pub(crate) fn reference_values(
    ir: &GemmIr,
    args: &[Arg<'_>],
    (m, n, k): (usize, usize, usize),
    batch: usize,
) -> Result<Vec<f32>> {
    let data = download(ir, args)?;
    Ok((0..batch)
        .flat_map(|b| reference::gemm(ir, &operands(ir, args, &data, b), m, n, k))
        .collect())
}

impl Call<'_, '_> {
    /// The host reference of the whole call ([`reference_values`] of its batch).
    pub fn host_reference(&self) -> Result<Vec<f32>> {
        reference_values(self.ir(), self.args, self.mnk(), self.problem.batch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::view_end;
    use proptest::prelude::*;

    proptest! {
        /// Scattering packed values into a buffer and gathering them back is the identity,
        /// every written element lies inside the view(s), and a batch of non-overlapping
        /// views writes exactly `batch · rows · cols` elements.
        #[test]
        fn scatter_then_gather_is_the_identity(
            row_major in any::<bool>(),
            rows in 1usize..6,
            cols in 1usize..6,
            pad in 0usize..4,
            offset in 0usize..5,
            batch in 1usize..4,
            gap in 0usize..3,
        ) {
            let layout = if row_major { Layout::RowMajor } else { Layout::ColMajor };
            let inner = packed_extent(layout, rows, cols);
            let one = Stored::new(inner + pad, offset);
            let span = view_end(layout, rows, cols, Stored::new(inner + pad, 0)).unwrap() as usize;
            let at = one.with_bstride(span + gap);
            let len = view_end(layout, rows, cols, one).unwrap() as usize + (batch - 1) * at.bstride;
            let vals: Vec<i64> = (1..=(batch * rows * cols) as i64).collect();
            let mut all = vec![0i64; len];
            scatter(&mut all, &vals, layout, (rows, cols), at, batch);
            prop_assert_eq!(all.iter().filter(|&&v| v != 0).count(), batch * rows * cols);
            let back: Vec<i64> = (0..batch)
                .flat_map(|b| gather(&all, layout, rows, cols, Stored::new(at.ld, at.offset + b * at.bstride)))
                .collect();
            prop_assert_eq!(back, vals);
        }
    }
}
