use crossgemm::prelude::*;

// A Row is one value per output column; `.t()` would need a Col.
#[gemm_kernel]
fn row_t(x: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> {
    x * w + bias.t()
}

fn main() {}
