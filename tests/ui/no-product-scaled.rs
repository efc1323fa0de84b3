use crossgemm::prelude::*;

// `alpha * x * w` parses as `(alpha * x) * w`: not a product of two Matrix parameters.
#[gemm_kernel]
fn scaled(alpha: f32, x: Matrix<f16>, w: Matrix<f16, ColMajor>) -> Matrix<f16> {
    alpha * x * w
}

fn main() {}
