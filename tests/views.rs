//! Strided views (issue 13): every planned config of a kernel on sub-matrices of larger
//! buffers, with leading dimensions that keep 16-byte rows and ones that do not, and
//! offsets of both kinds, against the host reference on the same views; the output
//! written only inside its view; and the errors a bad view gives.

mod common;

use common::*;
use crossgemm::prelude::*;
use crossgemm::{Element, Layout, LayoutType};

#[gemm_kernel]
fn v_f16_rc(a: Matrix<f16>, b: Matrix<f16, ColMajor>) -> Matrix<f16> {
    a * b
}
#[gemm_kernel]
fn v_f16_cr(a: Matrix<f16, ColMajor>, b: Matrix<f16>) -> Matrix<f32, ColMajor> {
    a * b
}
#[gemm_kernel(fma_ok)]
fn v_f32_rr(a: Matrix<f32>, b: Matrix<f32>) -> Matrix<f32> {
    a * b
}
#[gemm_kernel(acc = tf32)]
fn v_tf32_rc(a: Matrix<f32>, b: Matrix<f32, ColMajor>) -> Matrix<f32> {
    a * b
}
#[gemm_kernel]
fn v_bf16_fused(
    a: Matrix<bf16>,
    b: Matrix<bf16, ColMajor>,
    bias: Row<f32>,
    scale: Col<bf16>,
    res: Matrix<bf16>,
) -> Matrix<bf16> {
    relu(a * b + bias) * scale + res
}

/// Where a view lies: (leading-dimension padding in elements, offset in elements).
/// 16-byte multiples for every dtype, then odd ones that break every vector path, then
/// rows that start on 16-byte boundaries while K = 77 or 45 is not a multiple of a chunk
/// (leading dimensions 80 and 48): the last chunk of each row crosses the extent into the
/// NaN padding.
const GEOMETRIES: [(usize, usize); 3] = [(16, 32), (3, 5), (3, 8)];

/// The contiguous extent of a stored `rows × cols` matrix in layout `L`.
fn inner<L: LayoutType>(rows: usize, cols: usize) -> usize {
    match L::LAYOUT {
        Layout::RowMajor => cols,
        Layout::ColMajor => rows,
    }
}

/// A buffer and the geometry of a `rows × cols` view in it with `pad` extra elements per
/// stored row and its first element at `offset`: random values in the view, NaN around
/// it, so that a kernel that lets an element past the view's extent into a sum (a
/// 16-byte chunk that crosses K, read whole) gives NaN, whatever the other operand holds.
fn strided_buffer<T: Element, L: LayoutType>(
    dev: &Device,
    r: &mut rand::rngs::StdRng,
    rows: usize,
    cols: usize,
    (pad, offset): (usize, usize),
) -> (Matrix<T, L>, usize, usize) {
    let inner = inner::<L>(rows, cols);
    let ld = inner + pad;
    let outer = rows * cols / inner.max(1);
    let mut data = vec![T::from_f32(f32::NAN); offset + outer * ld + pad];
    let inside = values::<T>(r, rows * cols);
    for (o, row) in inside.chunks(inner.max(1)).enumerate() {
        data[offset + o * ld..][..row.len()].copy_from_slice(row);
    }
    (Matrix::from_host(dev, data.len(), 1, &data).unwrap(), offset, ld)
}

/// Asserts that `after` equals `before` at every element outside the `rows × cols` view
/// at `offset` with leading dimension `ld` (layout `L`): the kernel wrote only its view.
fn untouched_outside<T: Element, L: LayoutType>(
    before: &[T],
    after: &[T],
    (rows, cols, offset, ld): (usize, usize, usize, usize),
    what: &str,
) {
    let inner = inner::<L>(rows, cols);
    let outer = rows * cols / inner.max(1);
    let inside = |e: usize| e >= offset && (e - offset) / ld < outer && (e - offset) % ld < inner;
    for (e, (x, y)) in before.iter().zip(after).enumerate() {
        if !inside(e) {
            assert!(
                x.to_f32().to_bits() == y.to_f32().to_bits(),
                "{what}: element {e} outside the output view changed"
            );
        }
    }
}

/// Every planned config of a two-operand kernel on views of A, B and the output at each
/// geometry, at a shape that is ragged for every tile and one with M inside a gemv
/// config's rows, checked against the reference on the same views; the output buffer
/// outside its view keeps its contents. A config the family refuses for a geometry (TMA
/// or cp.async alignment) must say so and run nothing.
macro_rules! check_views {
    ($kernel:ident, $ta:ty, $la:ty, $tb:ty, $lb:ty, $to:ty, $lo:ty, $tf32:expr, $seed:expr) => {{
        for dev in devices() {
            let mut r = rng($seed);
            let dtype = <$ta as crossgemm::Element>::DTYPE;
            let mut ran = 0;
            for cfg in fitting_configs(&$kernel::SPEC, &dev, dtype) {
                let few = (cfg.block_mn().0 as usize).min(5);
                for (m, n, k) in [(67, 45, 77), (few, 45, 77)] {
                    for geo in GEOMETRIES {
                        let what = format!(
                            "{} config {cfg} at {m}x{n}x{k}, views padded {} from {}, on {}",
                            stringify!($kernel),
                            geo.0,
                            geo.1,
                            dev.info()
                        );
                        let (ab, aoff, lda) = strided_buffer::<$ta, $la>(&dev, &mut r, m, k, geo);
                        let (bb, boff, ldb) = strided_buffer::<$tb, $lb>(&dev, &mut r, k, n, geo);
                        let (mut ob, ooff, ldo) = strided_buffer::<$to, $lo>(&dev, &mut r, m, n, geo);
                        let a = ab.strided(aoff, m, k, lda).unwrap();
                        let b = bb.strided(boff, k, n, ldb).unwrap();
                        let before = ob.to_host().unwrap();
                        let want = $kernel::reference(&a, &b).unwrap();
                        let mut out = ob.strided_mut(ooff, m, n, ldo).unwrap();
                        let problem = crossgemm::Problem::new(m, n, k)
                            .stored(crossgemm::Stored::new(lda, aoff), crossgemm::Stored::new(ldb, boff));
                        let accepted = cfg.family().accepts(&cfg, $kernel::SPEC.ir(), problem);
                        match ($kernel::run_with(&cfg, &a, &b, &mut out), accepted) {
                            (Ok(()), Ok(())) => {
                                assert_close(&out.to_host().unwrap(), &want, k, $tf32, &what);
                                let after = ob.to_host().unwrap();
                                untouched_outside::<$to, $lo>(&before, &after, (m, n, ooff, ldo), &what);
                                ran += 1;
                            }
                            (Err(e), Err(_)) => assert!(e.to_string().contains("cannot run"), "{what}: {e}"),
                            (r, a) => panic!("{what}: launch {r:?}, but the family says {a:?}"),
                        }
                    }
                }
            }
            // A narrowed run may keep none of this kernel's configs (the test's guard
            // fails it where it keeps none of the test's).
            assert!(
                ran > 0 || configs_narrowed(),
                "{}: no config ran on views on {}",
                stringify!($kernel),
                dev.info()
            );
        }
    }};
}

#[test]
fn every_config_on_views_f16() {
    let _narrowed = narrowed_run_check();
    check_views!(v_f16_rc, f16, RowMajor, f16, ColMajor, f16, RowMajor, false, 41);
    check_views!(v_f16_cr, f16, ColMajor, f16, RowMajor, f32, ColMajor, false, 42);
}

#[test]
fn every_config_on_views_f32_tf32() {
    let _narrowed = narrowed_run_check();
    check_views!(v_f32_rr, f32, RowMajor, f32, RowMajor, f32, RowMajor, false, 43);
    check_views!(v_tf32_rc, f32, RowMajor, f32, ColMajor, f32, RowMajor, true, 44);
}

/// Views of every epilogue operand kind (a `Row`, a `Col` and a residual `Matrix`, each
/// inside a larger buffer) through the default launch path, beside the same call on
/// packed copies: the two must agree exactly (the same kernel code reads the same values).
#[test]
fn epilogue_operands_as_views() {
    for dev in devices() {
        let mut r = rng(45);
        for (m, n, k) in [(1, 67, 45), (53, 1, 45), (67, 45, 77), (129, 70, 33)] {
            for geo in GEOMETRIES {
                let what = format!("{m}x{n}x{k} padded {} from {} on {}", geo.0, geo.1, dev.info());
                let (ab, aoff, lda) = strided_buffer::<bf16, RowMajor>(&dev, &mut r, m, k, geo);
                let (bb, boff, ldb) = strided_buffer::<bf16, ColMajor>(&dev, &mut r, k, n, geo);
                let (rb, roff, ldr) = strided_buffer::<bf16, RowMajor>(&dev, &mut r, m, n, geo);
                let bias_buf = row::<f32>(&dev, &mut r, n + geo.1 + 3);
                let scale_buf = col::<bf16>(&dev, &mut r, m + geo.1 + 3);
                let a = ab.strided(aoff, m, k, lda).unwrap();
                let b = bb.strided(boff, k, n, ldb).unwrap();
                let res = rb.strided(roff, m, n, ldr).unwrap();
                let bias = bias_buf.slice(geo.1, n).unwrap();
                let scale = scale_buf.slice(geo.1, m).unwrap();
                let got = v_bf16_fused(&a, &b, &bias, &scale, &res).unwrap().to_host().unwrap();
                let want = v_bf16_fused::reference(&a, &b, &bias, &scale, &res).unwrap();
                assert_close(&got, &want, k, false, &what);
                // Packed copies of the same values.
                let pa = Matrix::<bf16>::from_host(&dev, m, k, &a.to_host().unwrap()).unwrap();
                let pb = Matrix::<bf16, ColMajor>::from_host(&dev, k, n, &b.to_host().unwrap()).unwrap();
                let pr = Matrix::<bf16>::from_host(&dev, m, n, &res.to_host().unwrap()).unwrap();
                let pbias = Row::<f32>::from_host(&dev, &bias.to_host().unwrap()).unwrap();
                let pscale = Col::<bf16>::from_host(&dev, &scale.to_host().unwrap()).unwrap();
                let packed = v_bf16_fused::reference(&pa, &pb, &pbias, &pscale, &pr).unwrap();
                assert!(
                    packed.iter().zip(&want).all(|(x, y)| x.to_bits() == y.to_bits()),
                    "{what}: the reference on views differs from the reference on packed copies"
                );
            }
        }
    }
}

/// A sub-block of a sub-block: offsets compose, and the `_into` form fills one block of
/// a larger output (here the top-right block of a 2x2 grid of blocks).
#[test]
fn sub_blocks_compose() {
    for dev in devices() {
        let mut r = rng(46);
        let (m, n, k) = (40, 24, 56);
        let big_a = mat::<f16, RowMajor>(&dev, &mut r, 3 * m, 2 * k);
        let a = big_a
            .view()
            .sub(m, 0, 2 * m, 2 * k)
            .unwrap()
            .sub(m / 2, k, m, k)
            .unwrap();
        assert_eq!((a.offset(), a.ld()), ((m + m / 2) * 2 * k + k, 2 * k));
        let b = mat::<f16, ColMajor>(&dev, &mut r, k, n);
        let mut big_out = Matrix::<f16>::zeros(&dev, 2 * m, 2 * n).unwrap();
        {
            let mut whole = big_out.view_mut();
            let mut block = whole.sub_mut(0, n, m, n).unwrap();
            v_f16_rc_into(&a, &b, &mut block).unwrap();
        }
        let want = v_f16_rc::reference(&a, &b).unwrap();
        let all = big_out.to_host().unwrap();
        let got: Vec<f16> = (0..m)
            .flat_map(|i| all[i * 2 * n + n..i * 2 * n + 2 * n].to_vec())
            .collect();
        assert_close(&got, &want, k, false, &format!("block of a 2x2 grid on {}", dev.info()));
        assert!(
            (0..2 * m).all(|i| (0..2 * n).all(|j| (i < m && j >= n) || all[i * 2 * n + j] == f16::ZERO)),
            "outside the block was written on {}",
            dev.info()
        );
    }
}

/// A view that leaves its buffer, a leading dimension below the extent, a block outside
/// its view: errors that say what is wrong, at the view's construction.
#[test]
fn bad_views_are_errors() {
    let dev = Device::host();
    let m = Matrix::<f32>::zeros(&dev, 4, 6).unwrap();
    let e = m.strided(0, 3, 6, 5).unwrap_err().to_string();
    assert!(e.contains("leading dimension of 5 is less than the 6"), "{e}");
    let e = m.strided(2, 4, 6, 6).unwrap_err().to_string();
    assert!(e.contains("reaches element 26 but its buffer holds 24"), "{e}");
    let e = m.view().sub(2, 3, 3, 3).unwrap_err().to_string();
    assert!(e.contains("a 3x3 block at (2, 3) does not fit a 4x6 view"), "{e}");
    let v = m.strided(1, 2, 3, 10).unwrap();
    assert_eq!((v.rows(), v.cols(), v.ld(), v.offset()), (2, 3, 10, 1));
    let c = Matrix::<f32, ColMajor>::zeros(&dev, 4, 6).unwrap();
    let e = c.strided(0, 4, 2, 3).unwrap_err().to_string();
    assert!(e.contains("less than the 4 elements of each column"), "{e}");
    let row = Row::<f32>::from_host(&dev, &[1.0; 8]).unwrap();
    let e = row.slice(5, 4).unwrap_err().to_string();
    assert!(e.contains("4 elements from element 5 do not fit a buffer of 8"), "{e}");
    assert_eq!(row.slice(5, 3).unwrap().to_host().unwrap(), vec![1.0; 3]);
}

/// A call checks the views it gets as a call checks shapes: the untyped API may pass
/// any geometry, and a leading dimension below the extent or a view past its buffer is a
/// shape error naming the operand, before anything runs.
#[test]
fn calls_check_view_geometry() {
    use crossgemm::untyped::{Arg, OutArg};
    let dev = Device::host();
    let a = Matrix::<f16>::zeros(&dev, 8, 8).unwrap();
    let b = Matrix::<f16, ColMajor>::zeros(&dev, 8, 8).unwrap();
    let mut out = Matrix::<f16>::zeros(&dev, 8, 8).unwrap();
    let args = |ld: usize, offset: usize| match a.__arg() {
        Arg::Matrix { buf, rows, cols, .. } => [
            Arg::Matrix {
                buf,
                rows,
                cols,
                at: crossgemm::Stored::new(ld, offset),
                batch: 1,
            },
            b.__arg(),
        ],
        _ => unreachable!(),
    };
    let o = out.__out();
    let out_arg = OutArg {
        at: Default::default(),
        ..o
    };
    let e = crossgemm::untyped::launch(&v_f16_rc::SPEC, &args(7, 0), out_arg)
        .unwrap_err()
        .to_string();
    assert!(e.contains("leading dimension 7 but its rows hold 8 elements"), "{e}");
    let e = crossgemm::untyped::launch(&v_f16_rc::SPEC, &args(8, 1), out_arg)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("a (8x8 from element 1 with leading dimension 8) reaches byte 130 but its buffer holds 128"),
        "{e}"
    );
}
