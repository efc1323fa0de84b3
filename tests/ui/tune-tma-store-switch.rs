use crossgemm::prelude::*;

// `tma_store` is a switch: only 1 adds the TMA-store variants.
#[gemm_kernel(tune(tma_store = [1, 2]))]
fn linear(x: Matrix<f16>, w: Matrix<f16, ColMajor>) -> Matrix<f16> {
    x * w
}

fn main() {}
