//! A user crate's kernel with every kind of operand: bf16 matrices, `.t()` on A, a `Col`
//! per-row scale, an f32 scalar, a residual Matrix, and gelu; run on the host device.

use crossgemm::prelude::*;

/// out = gelu(scale * (xt.t() * w) * alpha) + residual
#[gemm_kernel]
pub fn scaled_gelu_residual(
    xt: Matrix<bf16, ColMajor>,
    w: Matrix<bf16>,
    scale: Col<bf16>,
    alpha: f32,
    residual: Matrix<bf16>,
) -> Matrix<bf16> {
    gelu(scale * (xt.t() * w) * alpha) + residual
}

fn b(v: f32) -> bf16 {
    bf16::from_f32(v)
}

fn gelu_tanh(x: f32) -> f32 {
    0.5 * x * (1.0 + (0.797_884_6 * (x + 0.044715 * x * x * x)).tanh())
}

fn main() {
    let dev = Device::host();
    let (m, k, n) = (4, 3, 2);
    // xt is K x M (its transpose is the M x K A operand), stored column-major:
    // xt[p][i] = A[i][p] = (i + p) / 4 - 0.5; column-major K x M means element (p, i) at i * K + p.
    let a_at = |i: usize, p: usize| (i + p) as f32 / 4.0 - 0.5;
    let xt: Vec<bf16> = (0..m).flat_map(|i| (0..k).map(move |p| b(a_at(i, p)))).collect();
    let w_at = |p: usize, j: usize| 1.0 - (p * n + j) as f32 / 4.0;
    let w: Vec<bf16> = (0..k).flat_map(|p| (0..n).map(move |j| b(w_at(p, j)))).collect();
    let scale_v: Vec<f32> = (0..m).map(|i| 0.5 + i as f32 * 0.25).collect();
    let res_at = |i: usize, j: usize| (i * n + j) as f32 / 8.0;
    let res: Vec<bf16> = (0..m).flat_map(|i| (0..n).map(move |j| b(res_at(i, j)))).collect();
    let alpha = 2.0f32;

    let xtm = Matrix::<bf16, ColMajor>::from_host(&dev, k, m, &xt).unwrap();
    let wm = Matrix::<bf16>::from_host(&dev, k, n, &w).unwrap();
    let sm = Col::from_host(&dev, &scale_v.iter().map(|&s| b(s)).collect::<Vec<_>>()).unwrap();
    let rm = Matrix::<bf16>::from_host(&dev, m, n, &res).unwrap();

    let y = scaled_gelu_residual(&xtm, &wm, &sm, alpha, &rm).unwrap();
    assert_eq!((y.rows(), y.cols()), (m, n));
    let got = y.to_host().unwrap();
    let want = scaled_gelu_residual::reference(&xtm, &wm, &sm, alpha, &rm).unwrap();
    assert_eq!(got, want);

    // By hand, to bf16 precision (8 bits of mantissa).
    for i in 0..m {
        for j in 0..n {
            let acc: f32 = (0..k).map(|p| a_at(i, p) * w_at(p, j)).sum();
            let expect = gelu_tanh(scale_v[i] * acc * alpha) + res_at(i, j);
            let g = got[i * n + j].to_f32();
            assert!((g - expect).abs() <= expect.abs() / 128.0 + 1e-3, "y[{i}][{j}] = {g}, expected {expect}");
        }
    }

    // K mismatch: xt.t() is 4x3 but w is 2x2: an Err naming both shapes.
    let w_bad = Matrix::<bf16>::from_host(&dev, 2, n, &w[..2 * n]).unwrap();
    match scaled_gelu_residual(&xtm, &w_bad, &sm, alpha, &rm) {
        Err(GemmError::Shape { kernel, detail }) => {
            assert_eq!(kernel, "scaled_gelu_residual");
            assert!(detail.contains("`xt.t()` is 4x3") && detail.contains("`w` is 2x2"), "{detail}");
        }
        other => panic!("expected a shape error, got {other:?}"),
    }

    // The Col scale must have one value per output row (M = 4).
    let short = Col::from_host(&dev, &[b(1.0); 3]).unwrap();
    let err = scaled_gelu_residual(&xtm, &wm, &short, alpha, &rm).unwrap_err();
    assert!(matches!(err, GemmError::Shape { .. }), "{err:?}");
    assert!(err.to_string().contains("`scale`"), "{err}");

    // The residual must be M x N.
    let rm_bad = Matrix::<bf16>::from_host(&dev, n, m, &res).unwrap();
    let err = scaled_gelu_residual(&xtm, &wm, &sm, alpha, &rm_bad).unwrap_err();
    assert!(err.to_string().contains("`residual` is 2x4 but the product is 4x2"), "{err}");
}
