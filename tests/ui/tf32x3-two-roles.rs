use crossgemm::prelude::*;

// The split copies replace both factors: a factor the epilogue reads again has no split.
#[gemm_kernel(acc = tf32x3)]
fn gram_plus(x: Matrix<f32>, w: Matrix<f32, ColMajor>) -> Matrix<f32> {
    x * w + x
}

#[gemm_kernel(acc = tf32x3)]
fn gram(x: Matrix<f32>) -> Matrix<f32> {
    x * x.t()
}

fn main() {}
