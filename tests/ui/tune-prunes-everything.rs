use crossgemm::prelude::*;

// 5 stages of 256x256x64 f16 tiles need 5 x (256+256) x 64 x 2 B = 327680 B of shared
// memory, more than the A100's 166912 B opt-in limit.
#[gemm_kernel(targets(a100), tune(block_m = [256], block_n = [256], block_k = [64], stages = [5]))]
fn huge_tiles(x: Matrix<f16>, w: Matrix<f16, ColMajor>) -> Matrix<f16> {
    x * w
}

fn main() {}
