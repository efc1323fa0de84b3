use crossgemm::prelude::*;

// With square matrices `a * b * c` could mean a chained product; the DSL would read it as
// `(a * b)` multiplied elementwise by `c`. Ambiguous: an error at the second `*`.
#[gemm_kernel]
fn chained(a: Matrix<f16>, b: Matrix<f16>, c: Matrix<f16>) -> Matrix<f16> {
    a * b * c
}

fn main() {}
