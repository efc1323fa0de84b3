use crossgemm::prelude::*;

#[gemm_kernel(tune(block_m = [64, 128], tile_k = 32))]
fn linear(x: Matrix<f16>, w: Matrix<f16, ColMajor>) -> Matrix<f16> {
    x * w
}

fn main() {}
