use crossgemm::prelude::*;

#[gemm_kernel]
fn scaled(x: Matrix<f16>, w: Matrix<f16, ColMajor>, alpha: f16) -> Matrix<f16> {
    alpha * (x * w)
}

fn main() {}
