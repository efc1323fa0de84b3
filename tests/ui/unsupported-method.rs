use crossgemm::prelude::*;

#[gemm_kernel]
fn linear_sqrt(x: Matrix<f32>, w: Matrix<f32, ColMajor>, bias: Row<f32>) -> Matrix<f32> {
    (x * w + bias).sqrt()
}

fn main() {}
