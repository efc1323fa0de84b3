use crossgemm::prelude::*;

#[gemm_kernel]
fn modulo(x: Matrix<f32>, w: Matrix<f32, ColMajor>) -> Matrix<f32> {
    x * w % 2.0
}

fn main() {}
