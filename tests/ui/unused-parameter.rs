use crossgemm::prelude::*;

#[gemm_kernel]
fn linear(x: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> {
    relu(x * w)
}

fn main() {}
