//! A stack of MLP blocks with residual connections, the hidden state updated in place:
//! `u = gelu(h·W1 + b1)`, then `h = u·W2 + h` written over `h` itself by the generated
//! `mlp_down_into_h` (no second buffer for the sum, no copy back), as a transformer layer
//! updates its residual stream.
//!
//! `cargo run --release --example residual_in_place` (on the best device found: a GPU,
//! else OpenCL on the CPU, else the host). Each layer is checked against the host
//! reference of the same step; it prints the largest error and `ok`.

use crossgemm::prelude::*;

#[gemm_kernel]
fn mlp_up(h: Matrix<f16>, w1: Matrix<f16, ColMajor>, b1: Row<f16>) -> Matrix<f16> {
    gelu(h * w1 + b1)
}

/// `h` is only added: the result may be written over it (`mlp_down_into_h`).
#[gemm_kernel]
fn mlp_down(u: Matrix<f16>, w2: Matrix<f16, ColMajor>, h: Matrix<f16>) -> Matrix<f16> {
    u * w2 + h
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (tokens, d_model, d_ff, layers) = (24, 64, 256, 4);
    let dev = Device::best()?;
    println!("device: {}", dev.info());

    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut rand = move |scale: f32| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        f16::from_f32(((seed >> 40) as f32 / (1u64 << 23) as f32 - 1.0) * scale)
    };
    let mut h = Matrix::<f16>::from_host(
        &dev,
        tokens,
        d_model,
        &(0..tokens * d_model).map(|_| rand(1.0)).collect::<Vec<_>>(),
    )?;
    let mut u = Matrix::<f16>::zeros(&dev, tokens, d_ff)?;
    let mut worst = 0.0f32;
    for layer in 0..layers {
        // Weights scaled so that the stream stays of order 1 through the stack.
        let w1 = Matrix::<f16, ColMajor>::from_host(
            &dev,
            d_model,
            d_ff,
            &(0..d_model * d_ff).map(|_| rand(0.25)).collect::<Vec<_>>(),
        )?;
        let b1 = Row::<f16>::from_host(&dev, &(0..d_ff).map(|_| rand(0.1)).collect::<Vec<_>>())?;
        let w2 = Matrix::<f16, ColMajor>::from_host(
            &dev,
            d_ff,
            d_model,
            &(0..d_ff * d_model).map(|_| rand(0.125)).collect::<Vec<_>>(),
        )?;
        mlp_up_into(&h, &w1, &b1, &mut u)?;
        // What this layer's h must become, from the same u and h.
        let want = mlp_down::reference(&u, &w2, &h)?;
        mlp_down_into_h(&u, &w2, &mut h)?;
        let got = h.to_host()?;
        let max_ref = want.iter().map(|w| w.to_f32().abs()).fold(0.0f32, f32::max);
        let err = got
            .iter()
            .zip(&want)
            .map(|(g, w)| (g.to_f32() - w.to_f32()).abs())
            .fold(0.0f32, f32::max);
        println!("layer {layer}: h = u·W2 + h in place, {tokens}x{d_model}x{d_ff}: max abs error {err:.3e} (max |ref| {max_ref:.2})");
        let tol = max_ref * 2f32.powi(-9) + 1e-3;
        if err > tol {
            return Err(format!("layer {layer}: result differs from the reference: {err} > {tol}").into());
        }
        worst = worst.max(err);
    }
    println!("{layers} layers, largest error {worst:.3e}");
    println!("ok");
    Ok(())
}
