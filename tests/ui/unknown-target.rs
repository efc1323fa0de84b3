use crossgemm::prelude::*;

#[gemm_kernel(targets(h200, tpu9000))]
fn linear(x: Matrix<f16>, w: Matrix<f16, ColMajor>) -> Matrix<f16> {
    x * w
}

fn main() {}
