use crossgemm::prelude::*;

// `k_into_res` exists for a matrix only the epilogue reads that can hold the result (the
// output's type and layout): not for the product's operands, not for a residual of
// another layout or type.
#[gemm_kernel]
fn k(x: Matrix<f16>, w: Matrix<f16, ColMajor>, r: Matrix<f16>, c: Matrix<f16, ColMajor>, d: Matrix<f32>) -> Matrix<f16> {
    x * w + r + c + d
}

fn main() -> Result<(), GemmError> {
    let dev = Device::host();
    let mut x = Matrix::<f16>::zeros(&dev, 2, 2)?;
    let mut w = Matrix::<f16, ColMajor>::zeros(&dev, 2, 2)?;
    let mut r = Matrix::<f16>::zeros(&dev, 2, 2)?;
    let mut c = Matrix::<f16, ColMajor>::zeros(&dev, 2, 2)?;
    let mut d = Matrix::<f32>::zeros(&dev, 2, 2)?;
    k_into_r(&x, &w, &c, &d, &mut r)?;
    k_into_x(&w, &r, &c, &d, &mut x)?;
    k_into_w(&x, &r, &c, &d, &mut w)?;
    k_into_c(&x, &w, &r, &d, &mut c)?;
    k_into_d(&x, &w, &r, &c, &mut d)?;
    Ok(())
}
