use crossgemm::prelude::*;

// Switches take the values that switch something; no source splits K 32 ways.
#[gemm_kernel(tune(cluster_n = [1, 3], streamk = 2, ksplit = [2, 32]))]
fn linear(x: Matrix<f16>, w: Matrix<f16, ColMajor>) -> Matrix<f16> {
    x * w
}

fn main() {}
