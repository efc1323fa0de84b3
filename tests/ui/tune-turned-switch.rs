use crossgemm::prelude::*;

// `turned` is a switch: only 1 adds the turned-around tiles.
#[gemm_kernel(tune(turned = 2))]
fn linear(x: Matrix<f16>, w: Matrix<f16>) -> Matrix<f16> {
    x * w
}

fn main() {}
