// A full-f32 kernel runs on scalar FMA on the CUDA targets: a performance note per target
// (a deprecation warning, made an error here so that its text is pinned).
#![deny(deprecated)]

use crossgemm::prelude::*;

#[gemm_kernel(targets(a100, opencl_cpu))]
fn f32_linear(x: Matrix<f32>, w: Matrix<f32, ColMajor>) -> Matrix<f32> {
    x * w
}

fn main() {}
