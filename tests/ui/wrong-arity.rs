use crossgemm::prelude::*;

#[gemm_kernel]
fn clamped(x: Matrix<f16>, w: Matrix<f16, ColMajor>) -> Matrix<f16> {
    clamp(x * w, 0.0)
}

fn main() {}
