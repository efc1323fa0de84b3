use crossgemm::prelude::*;

#[gemm_kernel]
fn mixed(x: Matrix<f16>, w: Matrix<bf16, ColMajor>) -> Matrix<f16> {
    x * w
}

fn main() {}
