use crossgemm::prelude::*;

#[gemm_kernel]
fn two_products(a: Matrix<f16>, b: Matrix<f16>, c: Matrix<f16>, d: Matrix<f16>) -> Matrix<f16> {
    a * b + c * d
}

fn main() {}
