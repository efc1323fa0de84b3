//! `fma_ok` accepts the FMA path of a full-f32 kernel on chips with tensor cores and
//! `layout_ok` a tf32 layout wgmma cannot take (no performance notes, so
//! `deny(deprecated)` builds), and `(a * b) * c` states the elementwise product that
//! `a * b * c` would leave ambiguous; run on the host device.
#![deny(deprecated)]

use crossgemm::prelude::*;

#[gemm_kernel(fma_ok)]
fn f32_linear(x: Matrix<f32>, w: Matrix<f32, ColMajor>) -> Matrix<f32> {
    x * w
}

#[gemm_kernel(acc = tf32, layout_ok)]
fn tf32_rr(x: Matrix<f32>, w: Matrix<f32>) -> Matrix<f32> {
    x * w
}

#[gemm_kernel(fma_ok)]
fn gated(a: Matrix<f32>, b: Matrix<f32>, c: Matrix<f32>) -> Matrix<f32> {
    (a * b) * c
}

fn main() {
    let dev = Device::host();
    let a = Matrix::<f32>::from_host(&dev, 2, 2, &[1.0, 2.0, 3.0, 4.0]).unwrap();
    let b = Matrix::<f32>::from_host(&dev, 2, 2, &[5.0, 6.0, 7.0, 8.0]).unwrap();
    let c = Matrix::<f32>::from_host(&dev, 2, 2, &[1.0, 0.0, -1.0, 2.0]).unwrap();
    // a·b = [[19, 22], [43, 50]], times c elementwise.
    assert_eq!(gated(&a, &b, &c).unwrap().to_host().unwrap(), vec![19.0, 0.0, -43.0, 100.0]);
    let w = Matrix::<f32, ColMajor>::from_host(&dev, 2, 2, &[5.0, 7.0, 6.0, 8.0]).unwrap();
    assert_eq!(f32_linear(&a, &w).unwrap().to_host().unwrap(), vec![19.0, 22.0, 43.0, 50.0]);
    // Small integers are exact in tf32.
    assert_eq!(tf32_rr(&a, &b).unwrap().to_host().unwrap(), vec![19.0, 22.0, 43.0, 50.0]);
}
