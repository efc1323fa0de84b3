//! `crossgemm`: list devices, tune the built-in kernels, and manage the tuning cache and
//! tuning records. `crossgemm --help` says how; the README has a short tour.

mod cli;

use cli::{Dtype, Epilogue, KernelEntry};
use crossgemm::prelude::*;

// The CLI's f16 and bf16 kernels take the wgmma family's opt-in configs as tuning
// candidates under the `*-candidates` features: the f16 ones with a column-major w its
// stream-K variants (`streamk-candidates`), the f16 and bf16 ones its TMA-store epilogue
// variants (`tma-store-candidates`) and every f16 and bf16 one its turned-around tiles
// (`turned-candidates`); where several are on, the first of those three wins. Builds for
// measuring them (bench/README.md), not defaults, until a measurement says they belong in
// every plan. Each macro below puts its kernels' attribute on each of them.

/// The f16 kernels with a column-major w.
macro_rules! f16_kernels {
    ($($kernel:item)*) => {$(
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
        $kernel
    )*};
}

/// The bf16 kernels with a column-major w.
macro_rules! bf16_kernels {
    ($($kernel:item)*) => {$(
        #[cfg_attr(
            not(any(feature = "tma-store-candidates", feature = "turned-candidates")),
            gemm_kernel
        )]
        #[cfg_attr(feature = "tma-store-candidates", gemm_kernel(tune(tma_store = 1)))]
        #[cfg_attr(
            all(feature = "turned-candidates", not(feature = "tma-store-candidates")),
            gemm_kernel(tune(turned = 1))
        )]
        $kernel
    )*};
}

/// The f16 and bf16 kernels with a row-major w.
macro_rules! wrow_kernels {
    ($($kernel:item)*) => {$(
        #[cfg_attr(not(feature = "turned-candidates"), gemm_kernel)]
        #[cfg_attr(feature = "turned-candidates", gemm_kernel(tune(turned = 1)))]
        $kernel
    )*};
}

f16_kernels! {
    fn gemm_f16_none(x: Matrix<f16>, w: Matrix<f16, ColMajor>) -> Matrix<f16> {
        x * w
    }

    fn gemm_f16_bias_relu(x: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> {
        relu(x * w + bias)
    }

    fn gemm_f16_bias_gelu(x: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> {
        gelu(x * w + bias)
    }
}

bf16_kernels! {
    fn gemm_bf16_none(x: Matrix<bf16>, w: Matrix<bf16, ColMajor>) -> Matrix<bf16> {
        x * w
    }

    fn gemm_bf16_bias_relu(x: Matrix<bf16>, w: Matrix<bf16, ColMajor>, bias: Row<bf16>) -> Matrix<bf16> {
        relu(x * w + bias)
    }

    fn gemm_bf16_bias_gelu(x: Matrix<bf16>, w: Matrix<bf16, ColMajor>, bias: Row<bf16>) -> Matrix<bf16> {
        gelu(x * w + bias)
    }
}

// `x · W` with W stored K×N (row-major, N-contiguous), as NumPy, JAX and the DSL's
// default layout keep it: what `bench --w-layout row` runs.
wrow_kernels! {
    fn gemm_f16_none_wrow(x: Matrix<f16>, w: Matrix<f16>) -> Matrix<f16> {
        x * w
    }

    fn gemm_f16_bias_relu_wrow(x: Matrix<f16>, w: Matrix<f16>, bias: Row<f16>) -> Matrix<f16> {
        relu(x * w + bias)
    }

    fn gemm_f16_bias_gelu_wrow(x: Matrix<f16>, w: Matrix<f16>, bias: Row<f16>) -> Matrix<f16> {
        gelu(x * w + bias)
    }

    fn gemm_bf16_none_wrow(x: Matrix<bf16>, w: Matrix<bf16>) -> Matrix<bf16> {
        x * w
    }

    fn gemm_bf16_bias_relu_wrow(x: Matrix<bf16>, w: Matrix<bf16>, bias: Row<bf16>) -> Matrix<bf16> {
        relu(x * w + bias)
    }

    fn gemm_bf16_bias_gelu_wrow(x: Matrix<bf16>, w: Matrix<bf16>, bias: Row<bf16>) -> Matrix<bf16> {
        gelu(x * w + bias)
    }
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

// The f32 paths with a row-major W: `bench --w-layout row --dtypes f32,tf32`. tf32's
// wgmma takes K-major operands only, so on h200 these run on the decode_n, gemv_n or
// mma.sync families, as their notes say.
#[gemm_kernel(fma_ok)]
fn gemm_f32_none_wrow(x: Matrix<f32>, w: Matrix<f32>) -> Matrix<f32> {
    x * w
}

// Exact f32 is what these are for: scalar FMA on the CUDA targets is accepted.
#[gemm_kernel(fma_ok)]
fn gemm_f32_bias_relu_wrow(x: Matrix<f32>, w: Matrix<f32>, bias: Row<f32>) -> Matrix<f32> {
    relu(x * w + bias)
}

// Exact f32 is what these are for: scalar FMA on the CUDA targets is accepted.
#[gemm_kernel(fma_ok)]
fn gemm_f32_bias_gelu_wrow(x: Matrix<f32>, w: Matrix<f32>, bias: Row<f32>) -> Matrix<f32> {
    gelu(x * w + bias)
}

#[gemm_kernel(acc = tf32, layout_ok)]
fn gemm_tf32_none_wrow(x: Matrix<f32>, w: Matrix<f32>) -> Matrix<f32> {
    x * w
}

#[gemm_kernel(acc = tf32, layout_ok)]
fn gemm_tf32_bias_relu_wrow(x: Matrix<f32>, w: Matrix<f32>, bias: Row<f32>) -> Matrix<f32> {
    relu(x * w + bias)
}

#[gemm_kernel(acc = tf32, layout_ok)]
fn gemm_tf32_bias_gelu_wrow(x: Matrix<f32>, w: Matrix<f32>, bias: Row<f32>) -> Matrix<f32> {
    gelu(x * w + bias)
}

// f32 at close to f32 accuracy on the tensor cores: each operand split into two tf32
// parts, three tf32 products (`bench --dtypes tf32x3`, against cuBLAS's exact f32).
#[gemm_kernel(acc = tf32x3)]
fn gemm_tf32x3_none(x: Matrix<f32>, w: Matrix<f32, ColMajor>) -> Matrix<f32> {
    x * w
}

#[gemm_kernel(acc = tf32x3)]
fn gemm_tf32x3_bias_relu(x: Matrix<f32>, w: Matrix<f32, ColMajor>, bias: Row<f32>) -> Matrix<f32> {
    relu(x * w + bias)
}

#[gemm_kernel(acc = tf32x3)]
fn gemm_tf32x3_bias_gelu(x: Matrix<f32>, w: Matrix<f32, ColMajor>, bias: Row<f32>) -> Matrix<f32> {
    gelu(x * w + bias)
}

#[gemm_kernel(acc = tf32x3, layout_ok)]
fn gemm_tf32x3_none_wrow(x: Matrix<f32>, w: Matrix<f32>) -> Matrix<f32> {
    x * w
}

#[gemm_kernel(acc = tf32x3, layout_ok)]
fn gemm_tf32x3_bias_relu_wrow(x: Matrix<f32>, w: Matrix<f32>, bias: Row<f32>) -> Matrix<f32> {
    relu(x * w + bias)
}

#[gemm_kernel(acc = tf32x3, layout_ok)]
fn gemm_tf32x3_bias_gelu_wrow(x: Matrix<f32>, w: Matrix<f32>, bias: Row<f32>) -> Matrix<f32> {
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
    KernelEntry::new(Dtype::F32, Epilogue::None, &gemm_f32_none_wrow::SPEC),
    KernelEntry::new(Dtype::F32, Epilogue::BiasRelu, &gemm_f32_bias_relu_wrow::SPEC),
    KernelEntry::new(Dtype::F32, Epilogue::BiasGelu, &gemm_f32_bias_gelu_wrow::SPEC),
    KernelEntry::new(Dtype::Tf32, Epilogue::None, &gemm_tf32_none_wrow::SPEC),
    KernelEntry::new(Dtype::Tf32, Epilogue::BiasRelu, &gemm_tf32_bias_relu_wrow::SPEC),
    KernelEntry::new(Dtype::Tf32, Epilogue::BiasGelu, &gemm_tf32_bias_gelu_wrow::SPEC),
    KernelEntry::new(Dtype::Tf32x3, Epilogue::None, &gemm_tf32x3_none::SPEC),
    KernelEntry::new(Dtype::Tf32x3, Epilogue::BiasRelu, &gemm_tf32x3_bias_relu::SPEC),
    KernelEntry::new(Dtype::Tf32x3, Epilogue::BiasGelu, &gemm_tf32x3_bias_gelu::SPEC),
    KernelEntry::new(Dtype::Tf32x3, Epilogue::None, &gemm_tf32x3_none_wrow::SPEC),
    KernelEntry::new(Dtype::Tf32x3, Epilogue::BiasRelu, &gemm_tf32x3_bias_relu_wrow::SPEC),
    KernelEntry::new(Dtype::Tf32x3, Epilogue::BiasGelu, &gemm_tf32x3_bias_gelu_wrow::SPEC),
];

fn main() -> std::process::ExitCode {
    cli::main(KERNELS)
}
