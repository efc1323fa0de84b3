// tf32 with a row-major B runs on mma.sync on the H200, whose wgmma takes tf32 operands
// K-major only: a performance note (a deprecation warning, made an error here so that
// its text is pinned) that says why and how to get wgmma.
#![deny(deprecated)]

use crossgemm::prelude::*;

#[gemm_kernel(acc = tf32, targets(h200))]
fn tf32_rr(x: Matrix<f32>, w: Matrix<f32>) -> Matrix<f32> {
    x * w
}

fn main() {}
