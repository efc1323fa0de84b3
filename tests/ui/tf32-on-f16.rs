use crossgemm::prelude::*;

#[gemm_kernel(acc = tf32)]
fn linear(x: Matrix<f16>, w: Matrix<f16, ColMajor>) -> Matrix<f16> {
    x * w
}

fn main() {}
