//! `crossgemm`: list devices, tune the built-in kernels, and manage the tuning cache and
//! tuning records. `crossgemm --help` says how; the README has a short tour.

mod cli;

use cli::{Dtype, Epilogue, KernelEntry};
use crossgemm::prelude::*;

// The f16 kernels take the wgmma family's opt-in stream-K configs as tuning candidates
// under the `streamk-candidates` feature, the f16 and bf16 kernels its TMA-store
// epilogue variants under `tma-store-candidates` and its turned-around tiles under
// `turned-candidates` (the first of those three that is on wins): builds for measuring
// them (bench/README.md), not defaults, until a measurement says they belong in every
// plan.

#[cfg_attr(
    not(any(
        feature = "streamk-candidates",
        feature = "tma-store-candidates",
        feature = "turned-candidates"
    )),
    gemm_kernel
)]
#[cfg_attr(feature = "streamk-candidates", gemm_kernel(tune(streamk = 1)))]
#[cfg_attr(
    all(feature = "tma-store-candidates", not(feature = "streamk-candidates")),
    gemm_kernel(tune(tma_store = 1))
)]
#[cfg_attr(
    all(
        feature = "turned-candidates",
        not(any(feature = "streamk-candidates", feature = "tma-store-candidates"))
    ),
    gemm_kernel(tune(turned = 1))
)]
fn gemm_f16_none(x: Matrix<f16>, w: Matrix<f16, ColMajor>) -> Matrix<f16> {
    x * w
}

#[cfg_attr(
    not(any(
        feature = "streamk-candidates",
        feature = "tma-store-candidates",
        feature = "turned-candidates"
    )),
    gemm_kernel
)]
#[cfg_attr(feature = "streamk-candidates", gemm_kernel(tune(streamk = 1)))]
#[cfg_attr(
    all(feature = "tma-store-candidates", not(feature = "streamk-candidates")),
    gemm_kernel(tune(tma_store = 1))
)]
#[cfg_attr(
    all(
        feature = "turned-candidates",
        not(any(feature = "streamk-candidates", feature = "tma-store-candidates"))
    ),
    gemm_kernel(tune(turned = 1))
)]
fn gemm_f16_bias_relu(x: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> {
    relu(x * w + bias)
}

#[cfg_attr(
    not(any(
        feature = "streamk-candidates",
        feature = "tma-store-candidates",
        feature = "turned-candidates"
    )),
    gemm_kernel
)]
#[cfg_attr(feature = "streamk-candidates", gemm_kernel(tune(streamk = 1)))]
#[cfg_attr(
    all(feature = "tma-store-candidates", not(feature = "streamk-candidates")),
    gemm_kernel(tune(tma_store = 1))
)]
#[cfg_attr(
    all(
        feature = "turned-candidates",
        not(any(feature = "streamk-candidates", feature = "tma-store-candidates"))
    ),
    gemm_kernel(tune(turned = 1))
)]
fn gemm_f16_bias_gelu(x: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> {
    gelu(x * w + bias)
}

#[cfg_attr(
    not(any(feature = "tma-store-candidates", feature = "turned-candidates")),
    gemm_kernel
)]
#[cfg_attr(feature = "tma-store-candidates", gemm_kernel(tune(tma_store = 1)))]
#[cfg_attr(
    all(feature = "turned-candidates", not(feature = "tma-store-candidates")),
    gemm_kernel(tune(turned = 1))
)]
fn gemm_bf16_none(x: Matrix<bf16>, w: Matrix<bf16, ColMajor>) -> Matrix<bf16> {
    x * w
}

#[cfg_attr(
    not(any(feature = "tma-store-candidates", feature = "turned-candidates")),
    gemm_kernel
)]
#[cfg_attr(feature = "tma-store-candidates", gemm_kernel(tune(tma_store = 1)))]
#[cfg_attr(
    all(feature = "turned-candidates", not(feature = "tma-store-candidates")),
    gemm_kernel(tune(turned = 1))
)]
fn gemm_bf16_bias_relu(x: Matrix<bf16>, w: Matrix<bf16, ColMajor>, bias: Row<bf16>) -> Matrix<bf16> {
    relu(x * w + bias)
}

#[cfg_attr(
    not(any(feature = "tma-store-candidates", feature = "turned-candidates")),
    gemm_kernel
)]
#[cfg_attr(feature = "tma-store-candidates", gemm_kernel(tune(tma_store = 1)))]
#[cfg_attr(
    all(feature = "turned-candidates", not(feature = "tma-store-candidates")),
    gemm_kernel(tune(turned = 1))
)]
fn gemm_bf16_bias_gelu(x: Matrix<bf16>, w: Matrix<bf16, ColMajor>, bias: Row<bf16>) -> Matrix<bf16> {
    gelu(x * w + bias)
}

// `x · W` with W stored K×N (row-major, N-contiguous), as NumPy, JAX and the DSL's
// default layout keep it: what `bench --w-layout row` runs.
#[cfg_attr(not(feature = "turned-candidates"), gemm_kernel)]
#[cfg_attr(feature = "turned-candidates", gemm_kernel(tune(turned = 1)))]
fn gemm_f16_none_wrow(x: Matrix<f16>, w: Matrix<f16>) -> Matrix<f16> {
    x * w
}

#[cfg_attr(not(feature = "turned-candidates"), gemm_kernel)]
#[cfg_attr(feature = "turned-candidates", gemm_kernel(tune(turned = 1)))]
fn gemm_f16_bias_relu_wrow(x: Matrix<f16>, w: Matrix<f16>, bias: Row<f16>) -> Matrix<f16> {
    relu(x * w + bias)
}

#[cfg_attr(not(feature = "turned-candidates"), gemm_kernel)]
#[cfg_attr(feature = "turned-candidates", gemm_kernel(tune(turned = 1)))]
fn gemm_f16_bias_gelu_wrow(x: Matrix<f16>, w: Matrix<f16>, bias: Row<f16>) -> Matrix<f16> {
    gelu(x * w + bias)
}

#[cfg_attr(not(feature = "turned-candidates"), gemm_kernel)]
#[cfg_attr(feature = "turned-candidates", gemm_kernel(tune(turned = 1)))]
fn gemm_bf16_none_wrow(x: Matrix<bf16>, w: Matrix<bf16>) -> Matrix<bf16> {
    x * w
}

#[cfg_attr(not(feature = "turned-candidates"), gemm_kernel)]
#[cfg_attr(feature = "turned-candidates", gemm_kernel(tune(turned = 1)))]
fn gemm_bf16_bias_relu_wrow(x: Matrix<bf16>, w: Matrix<bf16>, bias: Row<bf16>) -> Matrix<bf16> {
    relu(x * w + bias)
}

#[cfg_attr(not(feature = "turned-candidates"), gemm_kernel)]
#[cfg_attr(feature = "turned-candidates", gemm_kernel(tune(turned = 1)))]
fn gemm_bf16_bias_gelu_wrow(x: Matrix<bf16>, w: Matrix<bf16>, bias: Row<bf16>) -> Matrix<bf16> {
    gelu(x * w + bias)
}

// Exact f32 is what these are for: scalar FMA on the CUDA targets is accepted.
#[gemm_kernel(fma_ok)]
fn gemm_f32_none(x: Matrix<f32>, w: Matrix<f32, ColMajor>) -> Matrix<f32> {
    x * w
}

// Exact f32 is what these are for: scalar FMA on the CUDA targets is accepted.
#[gemm_kernel(fma_ok)]
fn gemm_f32_bias_relu(x: Matrix<f32>, w: Matrix<f32, ColMajor>, bias: Row<f32>) -> Matrix<f32> {
    relu(x * w + bias)
}

// Exact f32 is what these are for: scalar FMA on the CUDA targets is accepted.
#[gemm_kernel(fma_ok)]
fn gemm_f32_bias_gelu(x: Matrix<f32>, w: Matrix<f32, ColMajor>, bias: Row<f32>) -> Matrix<f32> {
    gelu(x * w + bias)
}

#[gemm_kernel(acc = tf32)]
fn gemm_tf32_none(x: Matrix<f32>, w: Matrix<f32, ColMajor>) -> Matrix<f32> {
    x * w
}

#[gemm_kernel(acc = tf32)]
fn gemm_tf32_bias_relu(x: Matrix<f32>, w: Matrix<f32, ColMajor>, bias: Row<f32>) -> Matrix<f32> {
    relu(x * w + bias)
}

#[gemm_kernel(acc = tf32)]
fn gemm_tf32_bias_gelu(x: Matrix<f32>, w: Matrix<f32, ColMajor>, bias: Row<f32>) -> Matrix<f32> {
    gelu(x * w + bias)
}

/// Every kernel the CLI can tune and benchmark.
static KERNELS: &[KernelEntry] = &[
    KernelEntry::new(Dtype::F16, Epilogue::None, &gemm_f16_none::SPEC),
    KernelEntry::new(Dtype::F16, Epilogue::BiasRelu, &gemm_f16_bias_relu::SPEC),
    KernelEntry::new(Dtype::F16, Epilogue::BiasGelu, &gemm_f16_bias_gelu::SPEC),
    KernelEntry::new(Dtype::Bf16, Epilogue::None, &gemm_bf16_none::SPEC),
    KernelEntry::new(Dtype::Bf16, Epilogue::BiasRelu, &gemm_bf16_bias_relu::SPEC),
    KernelEntry::new(Dtype::Bf16, Epilogue::BiasGelu, &gemm_bf16_bias_gelu::SPEC),
    KernelEntry::new(Dtype::F32, Epilogue::None, &gemm_f32_none::SPEC),
    KernelEntry::new(Dtype::F32, Epilogue::BiasRelu, &gemm_f32_bias_relu::SPEC),
    KernelEntry::new(Dtype::F32, Epilogue::BiasGelu, &gemm_f32_bias_gelu::SPEC),
    KernelEntry::new(Dtype::Tf32, Epilogue::None, &gemm_tf32_none::SPEC),
    KernelEntry::new(Dtype::Tf32, Epilogue::BiasRelu, &gemm_tf32_bias_relu::SPEC),
    KernelEntry::new(Dtype::Tf32, Epilogue::BiasGelu, &gemm_tf32_bias_gelu::SPEC),
    KernelEntry::new(Dtype::F16, Epilogue::None, &gemm_f16_none_wrow::SPEC),
    KernelEntry::new(Dtype::F16, Epilogue::BiasRelu, &gemm_f16_bias_relu_wrow::SPEC),
    KernelEntry::new(Dtype::F16, Epilogue::BiasGelu, &gemm_f16_bias_gelu_wrow::SPEC),
    KernelEntry::new(Dtype::Bf16, Epilogue::None, &gemm_bf16_none_wrow::SPEC),
    KernelEntry::new(Dtype::Bf16, Epilogue::BiasRelu, &gemm_bf16_bias_relu_wrow::SPEC),
    KernelEntry::new(Dtype::Bf16, Epilogue::BiasGelu, &gemm_bf16_bias_gelu_wrow::SPEC),
];

fn main() -> std::process::ExitCode {
    cli::main(KERNELS)
}
