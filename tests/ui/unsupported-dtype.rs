use crossgemm::prelude::*;

#[gemm_kernel]
fn double(x: Matrix<f64>, w: Matrix<f64, ColMajor>) -> Matrix<f32> {
    x * w
}

fn main() {}
