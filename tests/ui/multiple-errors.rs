use crossgemm::prelude::*;

// Three independent mistakes, all reported by one build: an unknown tune key, a scalar
// that is not f32, and an unknown function in the body.
#[gemm_kernel(tune(tile_m = [64]))]
fn three_mistakes(x: Matrix<f16>, w: Matrix<f16, ColMajor>, alpha: f64) -> Matrix<f16> {
    swish(x * w)
}

fn main() {}
