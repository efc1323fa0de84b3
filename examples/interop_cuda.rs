//! A program that owns its CUDA context, stream and device memory (made with cudarc) runs
//! a `#[gemm_kernel]` on them: no copy into crossgemm's buffers, the kernel queued on the
//! program's own stream, the result read back by the program itself. Prints the device,
//! the max error against the host reference and `ok`.
//!
//! `cargo run --example interop_cuda` (the first CUDA device; without one it says so and
//! exits 0).

use crossgemm::cudarc::driver::{CudaContext, CudaSlice};
use crossgemm::prelude::*;
use std::sync::Arc;

#[gemm_kernel]
fn linear_relu(x: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> {
    relu(x * w + bias)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // crossgemm's discovery first: it checks that libcuda loads, where cudarc would panic.
    let Some(ordinal) = Device::list()
        .iter()
        .find_map(|d| d.info().id.strip_prefix("cuda:")?.parse::<usize>().ok())
    else {
        println!("no CUDA device: nothing to show (libcuda, libnvrtc and a GPU are needed)");
        return Ok(());
    };

    // The program's side: its own context, stream and slices.
    let ctx = CudaContext::new(ordinal)?;
    let stream = ctx.new_stream()?;
    let (m, n, k) = (100, 300, 200);
    let host = |len: usize, salt: usize| -> Vec<f16> {
        (0..len)
            .map(|i| f16::from_f32((((i * 37 + salt * 11) % 61) as f32 - 30.0) / 64.0))
            .collect()
    };
    // Shared (`Arc`) so that crossgemm's views can hold the memory as long as they live.
    let slice = |data: &[f16]| -> Result<Arc<CudaSlice<f16>>, Box<dyn std::error::Error>> {
        Ok(Arc::new(stream.clone_htod(data)?))
    };
    let (xb, wb, bb) = (slice(&host(m * k, 1))?, slice(&host(k * n, 2))?, slice(&host(n, 3))?);
    let ob = slice(&vec![f16::ZERO; m * n])?;

    // crossgemm on top: a device on the program's stream, views of its slices.
    let dev = Device::from_cuda_stream(&stream)?;
    println!("device: {}", dev.info());
    let x = Matrix::<f16>::from_cuda_slice(&dev, &xb, m, k)?;
    let w = Matrix::<f16, ColMajor>::from_cuda_slice(&dev, &wb, k, n)?;
    let bias = Row::<f16>::from_cuda_slice(&dev, &bb, n)?;
    let mut out = Matrix::<f16>::from_cuda_slice(&dev, &ob, m, n)?;
    linear_relu_into(&x, &w, &bias, &mut out)?; // queued on `stream`; returns without waiting
    let want = linear_relu::reference(&x, &w, &bias)?;
    drop((x, w, bias, out));

    // The program reads its own slice, after its stream's work.
    let got = stream.clone_dtoh(&*ob)?;
    let err = got
        .iter()
        .zip(&want)
        .map(|(g, r)| (g.to_f32() - r.to_f32()).abs() / r.to_f32().abs().max(1.0))
        // f32::max would drop a NaN; an unwritten element must show.
        .fold(
            0.0f32,
            |a, e| if a.is_nan() || e.is_nan() { f32::NAN } else { a.max(e) },
        );
    println!("{m}x{n}x{k}: max relative error {err:.2e}");
    if err.is_nan() || err > 1e-2 {
        return Err(format!("max relative error {err} over 1e-2").into());
    }
    println!("ok");
    Ok(())
}
