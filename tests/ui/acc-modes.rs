use crossgemm::prelude::*;

// tf32x3 splits f32 operands: f16 ones always accumulate in f32.
#[gemm_kernel(acc = tf32x3)]
fn half_split(x: Matrix<f16>, w: Matrix<f16, ColMajor>) -> Matrix<f16> {
    x * w
}

// An accumulation mode that does not exist.
#[gemm_kernel(acc = tf64)]
fn unknown(x: Matrix<f32>, w: Matrix<f32, ColMajor>) -> Matrix<f32> {
    x * w
}

fn main() {}
