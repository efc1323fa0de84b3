use crossgemm::prelude::*;

#[gemm_kernel]
fn linear_relu(x: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> {
    let y = x * w + bias;
    relu(y)
}

fn main() {}
