//! `acc = tf32x3` (gemm_core::split3): f32 operands split into tf32 parts and the product
//! taken as three tf32 products at 3K, by a tf32 kernel on split copies. Held to **f32's**
//! tolerance against the exact f32 reference: every layout over shapes that are multiples
//! of nothing (M, N or K = 1 among them), every planned config, the fused epilogue, a batch
//! with a broadcast weight read through a padded view; and, on a CUDA device, that the
//! split is what meets it (`acc = tf32` misses it on the same data).

mod common;

use common::*;
use crossgemm::prelude::*;

#[gemm_kernel(acc = tf32x3)]
fn x3_rc(a: Matrix<f32>, b: Matrix<f32, ColMajor>) -> Matrix<f32> {
    a * b
}
#[gemm_kernel(acc = tf32x3, layout_ok)]
fn x3_cr(a: Matrix<f32, ColMajor>, b: Matrix<f32>) -> Matrix<f32> {
    a * b
}
#[gemm_kernel(acc = tf32x3, layout_ok)]
fn x3_rr(a: Matrix<f32>, b: Matrix<f32>) -> Matrix<f32> {
    a * b
}
#[gemm_kernel(acc = tf32x3, layout_ok)]
fn x3_cc(a: Matrix<f32, ColMajor>, b: Matrix<f32, ColMajor>) -> Matrix<f32> {
    a * b
}
#[gemm_kernel(acc = tf32x3)]
fn x3_bias_gelu(a: Matrix<f32>, b: Matrix<f32, ColMajor>, bias: Row<f32>) -> Matrix<f32> {
    gelu(a * b + bias)
}
#[gemm_kernel(acc = tf32)]
fn t1_rc(a: Matrix<f32>, b: Matrix<f32, ColMajor>) -> Matrix<f32> {
    a * b
}

/// Runs a two-operand tf32x3 kernel at every shape of the suite on every device and holds
/// it to f32's tolerance.
macro_rules! check_layout {
    ($kernel:ident, $la:ty, $lb:ty, $seed:expr) => {{
        for dev in devices() {
            let mut r = rng($seed);
            for &(m, n, k) in SHAPES {
                let a = mat::<f32, $la>(&dev, &mut r, m, k);
                let b = mat::<f32, $lb>(&dev, &mut r, k, n);
                let got = $kernel(&a, &b).unwrap().to_host().unwrap();
                let want = $kernel::reference(&a, &b).unwrap();
                let what = format!("{} {m}x{n}x{k} on {}", stringify!($kernel), dev.info());
                assert_close(&got, &want, k, false, &what);
            }
        }
    }};
}

#[test]
fn every_layout_at_f32_tolerance() {
    check_layout!(x3_rc, RowMajor, ColMajor, 301);
    check_layout!(x3_cr, ColMajor, RowMajor, 302);
    check_layout!(x3_rr, RowMajor, RowMajor, 303);
    check_layout!(x3_cc, ColMajor, ColMajor, 304);
}

/// Every config the plan has for the device, each on the split copies of a shape of no
/// tile's multiple and of a single row.
#[test]
fn every_planned_config() {
    let _narrowed = narrowed_run_check();
    for dev in devices() {
        let mut r = rng(305);
        let mut ran = 0;
        for cfg in fitting_configs(&x3_rc::SPEC, &dev, crossgemm::DType::F32) {
            for (m, n, k) in [(67, 45, 77), (1, 33, 13)] {
                let a = mat::<f32, RowMajor>(&dev, &mut r, m, k);
                let b = mat::<f32, ColMajor>(&dev, &mut r, k, n);
                let mut out = Matrix::<f32>::zeros(&dev, m, n).unwrap();
                let what = format!("config {cfg} at {m}x{n}x{k} on {}", dev.info());
                match x3_rc::run_with(&cfg, &a, &b, &mut out) {
                    Ok(()) => {
                        let want = x3_rc::reference(&a, &b).unwrap();
                        assert_close(&out.to_host().unwrap(), &want, k, false, &what);
                        ran += 1;
                    }
                    Err(e) => assert!(e.to_string().contains("cannot run"), "{what}: {e}"),
                }
            }
        }
        assert!(ran > 0 || configs_narrowed(), "no config ran on {}", dev.info());
    }
}

/// The epilogue runs on the sum of the three products, per product of a batch: A one
/// matrix a product (NaN between them), B one for all read through a view whose rows are
/// 3 elements longer than K and start 5 in, the bias one for all.
#[test]
fn fused_epilogue_on_a_batch_of_views() {
    for dev in devices() {
        let mut r = rng(306);
        for &(m, n, k) in &[(17, 33, 65), (1, 7, 1), (40, 1, 300)] {
            let batch = 3;
            let astride = m * k + 4;
            let mut adata = vec![f32::NAN; astride * batch];
            for one in adata.chunks_mut(astride) {
                one[..m * k].copy_from_slice(&values::<f32>(&mut r, m * k));
            }
            let ab = Matrix::<f32>::from_host(&dev, adata.len(), 1, &adata).unwrap();
            let a = ab.strided(0, m, k, k).unwrap().batched(batch, astride).unwrap();
            let (ld, off) = (k + 3, 5);
            let mut bdata = vec![f32::NAN; off + ld * n];
            for c in 0..n {
                bdata[off + c * ld..off + c * ld + k].copy_from_slice(&values::<f32>(&mut r, k));
            }
            let bb = Matrix::<f32, ColMajor>::from_host(&dev, bdata.len(), 1, &bdata).unwrap();
            let b = bb.strided(off, k, n, ld).unwrap();
            let bias = row::<f32>(&dev, &mut r, n);
            let mut ob = Matrix::<f32>::zeros(&dev, m * batch, n).unwrap();
            let mut out = ob.strided_mut(0, m, n, n).unwrap().batched(batch, m * n).unwrap();
            x3_bias_gelu_into(&a, &b, &bias.slice(0, n).unwrap(), &mut out).unwrap();
            let want = x3_bias_gelu::reference(&a, &b, &bias.slice(0, n).unwrap()).unwrap();
            let what = format!("x3_bias_gelu {batch}x({m}x{n}x{k}) on {}", dev.info());
            assert_close(&out.to_host().unwrap(), &want, k, false, &what);
        }
    }
}

/// On a CUDA device, where the kernel's products are tf32 products: over K = 4096 of
/// values in ±1 the plain tf32 kernel's worst error passes f32's tolerance by far, the
/// split one's stays within it. (PoCL multiplies in f32 either way: nothing to compare.)
#[test]
fn on_tensor_cores_the_split_is_what_meets_f32() {
    for dev in devices().into_iter().filter(|d| d.info().kind == Backend::Cuda) {
        let (m, n, k) = (64, 64, 4096);
        let mut r = rng(307);
        let a = mat::<f32, RowMajor>(&dev, &mut r, m, k);
        let b = mat::<f32, ColMajor>(&dev, &mut r, k, n);
        let want = x3_rc::reference(&a, &b).unwrap();
        let worst = |got: Vec<f32>| got.iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0f32, f32::max);
        let split = worst(x3_rc(&a, &b).unwrap().to_host().unwrap());
        let plain = worst(t1_rc(&a, &b).unwrap().to_host().unwrap());
        // assert_close's f32 bound for |ref| ~ sqrt(K): 1e-5 (sqrt(K) + 1) plus 2 ulps.
        let f32_tol = 1e-5 * ((k as f32).sqrt() + 1.0);
        let on = dev.info().to_string();
        assert!(
            split < f32_tol,
            "{on}: tf32x3 worst error {split:e} past f32's {f32_tol:e}"
        );
        assert!(
            plain > 4.0 * f32_tol,
            "{on}: tf32 worst error {plain:e} within 4x f32's {f32_tol:e}"
        );
    }
}

/// K = 0: nothing to split, every sum zero, the output the epilogue of zero.
#[test]
fn k_zero_is_the_epilogue_of_zero() {
    for dev in devices() {
        let mut r = rng(308);
        let a = Matrix::<f32>::zeros(&dev, 4, 0).unwrap();
        let b = Matrix::<f32, ColMajor>::zeros(&dev, 0, 5).unwrap();
        let bias = row::<f32>(&dev, &mut r, 5);
        let got = x3_bias_gelu(&a, &b, &bias).unwrap().to_host().unwrap();
        let want = x3_bias_gelu::reference(&a, &b, &bias).unwrap();
        assert_close(&got, &want, 0, false, &format!("4x5x0 on {}", dev.info()));
    }
}

/// `prepare` builds the split kernel every launch of a tf32x3 kernel runs (and no row
/// copies: its calls never stage).
#[test]
fn prepare_builds_the_split_kernel() {
    for dev in devices() {
        let r = x3_rc::prepare(&dev).unwrap();
        assert_eq!(r.helpers, ["cg_split_tf32x3"], "{r:?} on {}", dev.info());
        assert!(r.failed_helpers.is_empty(), "{r:?}");
    }
}

/// A tune of a tf32x3 call stores its winner under its split problem's bucket (K three
/// times over), which is the bucket a `cached` launch looks up; nothing is staged.
#[test]
fn tune_and_lookup_agree_on_the_split_problems_bucket() {
    for dev in devices() {
        let mut r = rng(309);
        let (m, n, k) = (9, 7, 5);
        let a = mat::<f32, RowMajor>(&dev, &mut r, m, k);
        let b = mat::<f32, ColMajor>(&dev, &mut r, k, n);
        let mut out = Matrix::<f32>::zeros(&dev, m, n).unwrap();
        let tuned = x3_rc::tune(&a, &b, &mut out).unwrap();
        let opts = crossgemm::TuneOptions::default();
        let args = [a.__arg(), b.__arg()];
        let l = crossgemm::tune::lookup(&x3_rc::SPEC, &args, out.__out(), &opts).unwrap();
        let on = dev.info().to_string();
        assert_eq!(l.shape_key, tuned.shape_key, "{on}");
        // Buckets are powers of two: 3 x 5 = 15 goes to 16, where K = 5 alone would be 8.
        assert!(l.shape_key.ends_with("x16"), "K = 3 x 5 in {} on {on}", l.shape_key);
        assert_eq!(l.staged, [false, false], "{on}");
    }
}
