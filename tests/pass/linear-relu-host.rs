//! A user crate's kernel: f16 operands, a ColMajor B, a Row bias; run on the host device
//! and checked against `::reference` and a hand computation.

use crossgemm::prelude::*;

#[gemm_kernel]
fn linear_relu(x: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> {
    relu(x * w + bias)
}

fn h(v: f32) -> f16 {
    f16::from_f32(v)
}

fn main() {
    let dev = Device::host();
    let (m, k, n) = (3, 4, 5);
    // x[i][p] = i - p (row-major, M x K); w[p][j] = (p + 1) * (j - 2) / 4 stored column-major.
    let x: Vec<f16> = (0..m).flat_map(|i| (0..k).map(move |p| h(i as f32 - p as f32))).collect();
    let w_at = |p: usize, j: usize| (p as f32 + 1.0) * (j as f32 - 2.0) / 4.0;
    let w: Vec<f16> = (0..n).flat_map(|j| (0..k).map(move |p| h(w_at(p, j)))).collect();
    let bias_v: Vec<f32> = (0..n).map(|j| 0.5 * j as f32 - 1.0).collect();
    let bias: Vec<f16> = bias_v.iter().map(|&b| h(b)).collect();

    let xm = Matrix::<f16>::from_host(&dev, m, k, &x).unwrap();
    let wm = Matrix::<f16, ColMajor>::from_host(&dev, k, n, &w).unwrap();
    let bm = Row::from_host(&dev, &bias).unwrap();

    let y = linear_relu(&xm, &wm, &bm).unwrap();
    assert_eq!((y.rows(), y.cols()), (m, n));
    let got = y.to_host().unwrap();
    let want = linear_relu::reference(&xm, &wm, &bm).unwrap();
    assert_eq!(got, want);

    // By hand (all values are exact in f16).
    for i in 0..m {
        for j in 0..n {
            let acc: f32 = (0..k).map(|p| (i as f32 - p as f32) * w_at(p, j)).sum();
            let expect = (acc + bias_v[j]).max(0.0);
            assert_eq!(got[i * n + j].to_f32(), expect, "y[{i}][{j}]");
        }
    }
    assert!(got.iter().any(|v| v.to_f32() == 0.0) && got.iter().any(|v| v.to_f32() > 0.0), "relu is exercised both ways");

    // The `_into` form writes into a caller's matrix.
    let mut out = Matrix::<f16>::zeros(&dev, m, n).unwrap();
    linear_relu_into(&xm, &wm, &bm, &mut out).unwrap();
    assert_eq!(out.to_host().unwrap(), want);

    // A wrong-sized output is an Err naming both shapes.
    let mut small = Matrix::<f16>::zeros(&dev, m, n + 1).unwrap();
    let err = linear_relu_into(&xm, &wm, &bm, &mut small).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, GemmError::Shape { .. }), "{err:?}");
    assert!(msg.contains("3x6") && msg.contains("3x5"), "{msg}");

    // K mismatch: x is 3x4 but w is 3x5.
    let w_bad = Matrix::<f16, ColMajor>::from_host(&dev, 3, n, &w[..3 * n]).unwrap();
    let err = linear_relu(&xm, &w_bad, &bm).unwrap_err();
    let msg = err.to_string();
    match &err {
        GemmError::Shape { kernel, detail } => {
            assert_eq!(kernel, "linear_relu");
            assert!(detail.contains("3x4") && detail.contains("3x5"), "{detail}");
        }
        other => panic!("expected a shape error, got {other:?}"),
    }
    assert!(msg.contains("`x`") && msg.contains("`w`"), "{msg}");
    // The reference checks shapes the same way.
    assert!(matches!(linear_relu::reference(&xm, &w_bad, &bm), Err(GemmError::Shape { .. })));

    // A bias of the wrong length.
    let bias_bad = Row::from_host(&dev, &bias[..n - 1]).unwrap();
    let err = linear_relu(&xm, &wm, &bias_bad).unwrap_err();
    assert!(matches!(err, GemmError::Shape { .. }), "{err:?}");
    assert!(err.to_string().contains("`bias`"), "{err}");

    assert_eq!(linear_relu::SPEC.name, "linear_relu");
}
