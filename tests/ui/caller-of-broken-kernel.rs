use crossgemm::prelude::*;

// A kernel with a mistake in its body: the build reports the mistake, and nothing about
// the code that calls the kernel (the wrappers keep their signatures).
#[gemm_kernel]
fn broken(x: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f16>, res: Matrix<f16>) -> Matrix<f16> {
    swish(x * w + bias) + res
}

fn main() -> Result<(), GemmError> {
    let dev = Device::host();
    let x = Matrix::<f16>::zeros(&dev, 2, 3)?;
    let w = Matrix::<f16, ColMajor>::zeros(&dev, 3, 4)?;
    let bias = Row::from_host(&dev, &[f16::ZERO; 4])?;
    let res = Matrix::<f16>::zeros(&dev, 2, 4)?;
    let y: Matrix<f16> = broken(&x, &w, &bias, &res)?;
    let mut out = Matrix::<f16>::zeros(&dev, 2, 4)?;
    broken_into(&x, &w, &bias, &res, &mut out)?;
    broken_into_res(&x, &w, &bias, &mut out)?;
    let want: Vec<f16> = broken::reference(&x, &w, &bias, &res)?;
    assert_eq!(y.to_host()?, want);
    Ok(())
}
