//! A batched kernel on views of larger buffers: per-head attention scores with one
//! projection for every head, the way an inference engine holds its tensors.
//!
//! `q` is one `[heads × seq × (dim + pad)]` buffer (each head's `seq × dim` block has
//! padded rows, as a slice of a wider tensor would); `w` is a single `dim × out` matrix
//! shared by every head (batch stride 0: broadcast); the bias is one row for all heads;
//! the scores land in every other `seq × out` slot of a larger output buffer. One launch
//! computes every head (the batch is the grid's third dimension), the bias and GELU fused.
//!
//! `cargo run --release --example strided_batched` (on the best device found: a GPU, else
//! OpenCL on the CPU, else the host). It prints the max error against the host reference
//! and `ok`.

use crossgemm::prelude::*;

#[gemm_kernel]
fn head_proj(q: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f32>) -> Matrix<f16> {
    gelu(q * w + bias)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (heads, seq, dim, out_dim, pad) = (6, 48, 64, 40, 8);
    let dev = Device::best()?;
    println!("device: {}", dev.info());

    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    };
    // The program's tensors: q with padded rows, one projection, one bias, an output
    // with room for twice the heads.
    let ld = dim + pad;
    let q_all: Vec<f16> = (0..heads * seq * ld).map(|_| f16::from_f32(rand())).collect();
    let w: Vec<f16> = (0..dim * out_dim).map(|_| f16::from_f32(rand())).collect();
    let bias: Vec<f32> = (0..out_dim).map(|_| rand()).collect();
    let q_buf = Matrix::<f16>::from_host(&dev, heads * seq, ld, &q_all)?;
    let w = Matrix::<f16, ColMajor>::from_host(&dev, dim, out_dim, &w)?;
    let bias = Row::from_host(&dev, &bias)?;
    let mut scores = Matrix::<f16>::zeros(&dev, 2 * heads * seq, out_dim)?;

    // Views: head h of q starts h·seq·ld elements in, rows ld apart; output head h goes
    // to slot 2h.
    let q = q_buf.strided(0, seq, dim, ld)?.batched(heads, seq * ld)?;
    let mut out = scores
        .strided_mut(0, seq, out_dim, out_dim)?
        .batched(heads, 2 * seq * out_dim)?;
    head_proj_into(&q, &w, &bias, &mut out)?;

    let got = out.to_host()?;
    let want = head_proj::reference(&q, &w, &bias)?;
    let max_err = got
        .iter()
        .zip(&want)
        .map(|(g, w)| (g.to_f32() - w.to_f32()).abs())
        .fold(0.0f32, f32::max);
    let max_ref = want.iter().map(|w| w.to_f32().abs()).fold(0.0f32, f32::max);
    println!(
        "{heads} heads of {seq}x{out_dim}x{dim} (q rows {ld} apart, w and bias broadcast, every other output slot): max abs error vs host reference {max_err:.3e} (max |ref| {max_ref:.2})"
    );
    // The odd slots were never written.
    let all = scores.to_host()?;
    let slot = seq * out_dim;
    if (0..heads).any(|h| {
        all[(2 * h + 1) * slot..(2 * h + 2) * slot]
            .iter()
            .any(|v| v.to_f32() != 0.0)
    }) {
        return Err("an output slot outside the view was written".into());
    }
    let tol = max_ref * 2f32.powi(-10) + 1e-3;
    if max_err > tol {
        return Err(format!("result differs from the reference: max error {max_err} > {tol}").into());
    }
    println!("ok");
    Ok(())
}
