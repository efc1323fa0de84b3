//! Quickstart: define a fused linear+ReLU kernel, run it on the best device found (a GPU
//! where there is one, else OpenCL on the CPU, else the host), check it against the host
//! reference, and print the device, shape, max error and time.
//!
//! `cargo run --release --example quickstart [M N K]` (default 512 1024 768).
//! `CROSSGEMM_DEVICE=opencl-cpu|cuda:0|host` picks the device.

use crossgemm::prelude::*;
use std::time::Instant;

#[gemm_kernel]
fn linear_relu(x: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> {
    relu(x * w + bias)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dims: Vec<usize> = std::env::args().skip(1).map(|a| a.parse()).collect::<Result<_, _>>()?;
    let (m, n, k) = match dims[..] {
        [] => (512, 1024, 768),
        [m, n, k] => (m, n, k),
        _ => return Err("usage: quickstart [M N K]".into()),
    };
    let dev = Device::best()?;
    println!("device: {}", dev.info());

    // Deterministic pseudo-random inputs in [-1, 1) (never zeros: they hide bugs).
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        f16::from_f32((seed >> 40) as f32 / (1u64 << 23) as f32 - 1.0)
    };
    let x: Vec<f16> = (0..m * k).map(|_| rand()).collect();
    let w: Vec<f16> = (0..k * n).map(|_| rand()).collect();
    let bias: Vec<f16> = (0..n).map(|_| rand()).collect();
    let x = Matrix::<f16>::from_host(&dev, m, k, &x)?;
    let w = Matrix::<f16, ColMajor>::from_host(&dev, k, n, &w)?;
    let bias = Row::from_host(&dev, &bias)?;

    // First call: JIT compile, autotune on a cache miss (CROSSGEMM_TUNE), run. Then time
    // warm calls.
    let t0 = Instant::now();
    let y = linear_relu(&x, &w, &bias)?;
    dev.synchronize()?;
    let first = t0.elapsed();
    let mut out = Matrix::<f16>::zeros(&dev, m, n)?;
    let reps = if dev.info().kind == Backend::Host { 1 } else { 10 };
    let t1 = Instant::now();
    for _ in 0..reps {
        linear_relu_into(&x, &w, &bias, &mut out)?;
    }
    dev.synchronize()?;
    let warm = t1.elapsed() / reps;

    let got = y.to_host()?;
    let want = linear_relu::reference(&x, &w, &bias)?;
    let max_err = got
        .iter()
        .zip(&want)
        .map(|(g, w)| (g.to_f32() - w.to_f32()).abs())
        .fold(0.0f32, f32::max);
    let max_ref = want.iter().map(|w| w.to_f32().abs()).fold(0.0f32, f32::max);
    let tflops = 2.0 * (m * n * k) as f64 / warm.as_secs_f64() / 1e12;
    println!("shape: {m}x{n}x{k} (f16, relu(x * w + bias))");
    println!("max abs error vs host reference: {max_err:.3e} (max |ref| {max_ref:.2})");
    println!("time: first call {first:.2?} (includes JIT compile and, on a tuning-cache miss, autotuning), warm call {warm:.2?} ({tflops:.3} TFLOP/s, host-timed)");
    // f16 output: one rounding of |ref| <= max_ref, plus f32 summation differences.
    let tol = max_ref * 2f32.powi(-10) + 1e-3;
    if max_err > tol {
        return Err(format!("result differs from the reference: max error {max_err} > {tol}").into());
    }
    println!("ok");
    Ok(())
}
