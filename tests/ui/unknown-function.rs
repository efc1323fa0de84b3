use crossgemm::prelude::*;

#[gemm_kernel]
fn softplus_linear(x: Matrix<f16>, w: Matrix<f16, ColMajor>) -> Matrix<f16> {
    softplus(x * w)
}

fn main() {}
