//! # crossgemm
//!
//! Write a GEMM with its fused epilogue once, as an ordinary Rust fn; get planned,
//! generated CUDA and OpenCL kernels for every chip enabled by cargo features, and a
//! typed launcher that runs on the best device found.
//!
//! ```no_run
//! use crossgemm::prelude::*;
//!
//! #[gemm_kernel]
//! fn linear_relu(x: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> {
//!     relu(x * w + bias)
//! }
//!
//! # fn main() -> Result<(), GemmError> {
//! let dev = Device::best()?;
//! let x = Matrix::<f16>::from_host(&dev, 2, 3, &[f16::from_f32(1.0); 6])?;
//! let w = Matrix::<f16, ColMajor>::from_host(&dev, 3, 4, &[f16::from_f32(0.5); 12])?;
//! let bias = Row::from_host(&dev, &[f16::from_f32(-1.0); 4])?;
//! let y = linear_relu(&x, &w, &bias)?; // 2x4, on `dev`
//! assert_eq!(y.to_host()?, linear_relu::reference(&x, &w, &bias)?);
//! # Ok(()) }
//! ```
//!
//! ## The DSL
//! - Parameters: `Matrix<T>` / `Matrix<T, RowMajor | ColMajor>`, `Row<T>` (one value per
//!   output column, broadcast along M), `Col<T>` (one value per output row), `f32`
//!   scalars; `T` is `f16`, `bf16` or `f32`. The result is a `Matrix<T>` (any layout).
//! - The body is one expression with exactly one matrix product `a * b` of two Matrix
//!   parameters (either may be `.t()`), and any elementwise epilogue over it: `+ - * /`,
//!   literals, parameters, and `relu`, `gelu` (tanh form), `gelu_erf`, `silu`, `sigmoid`,
//!   `tanh`, `exp`, `abs`, `min`, `max`, `clamp`, `leaky_relu`. It is evaluated in f32.
//!   `relu`, `min`, `max` and `clamp` take the non-NaN argument where one is NaN (C's
//!   `fmax`/`fmin`): `relu(NaN)` is 0, where PyTorch's `relu` keeps the NaN.
//! - `*` is the matrix product only between two bare Matrix parameters; everywhere else it
//!   is elementwise. `a * b * c` with a third Matrix `c` is a compile error (it reads like
//!   a chained product, which a kernel does not compute): write `(a * b) * c` for the
//!   product multiplied elementwise by `c`. Scaling by a scalar or a `Row`/`Col`
//!   (`x * w * alpha`) is not ambiguous and needs no parentheses.
//! - Attribute arguments: `acc = f32 | tf32` (tf32: tensor cores for f32 operands),
//!   `targets(h200, opencl_cpu, ..)`, `tune(block_m = [64, 128], stages = 2..=4, ..)`,
//!   `fma_ok`, `layout_ok`, `records = "path" | none`, `crate = path`. `tune` restricts
//!   the planner's choices (`block_m`, `block_n`, `block_k`, `warps_m`, `warps_n`,
//!   `stages`, `group_m`, `vector`, `ksplit`, `cluster_n`) or, with the switches
//!   `streamk = 1`, `tma_store = 1` and `turned = 1`, adds the wgmma family's opt-in
//!   variants (stream-K, the TMA-store epilogue, the turned-around tiles for products with
//!   few rows); the README says what each does and what it measured.
//! - A kernel that runs on scalar FMA on a chip with matrix instructions (full-f32
//!   operands on `a100`/`h200`: no tensor-core instruction takes them) gets a build-time
//!   performance note naming the target, shown as a deprecation warning at the attribute
//!   and only when this crate's feature for that target (`sm80`, `sm90`) is on.
//!   `#[gemm_kernel(fma_ok)]` accepts the FMA path and silences it; `acc = tf32` puts f32
//!   on tensor cores instead.
//! - A tf32 kernel whose A is M-major or B N-major (after `.t()`) gets the same kind of
//!   note on `h200`: its wgmma takes tf32 operands K-major only, so the kernel runs on
//!   mma.sync there. `#[gemm_kernel(layout_ok)]` keeps the layouts and silences it.
//!
//! Every misuse is a compile error at the offending token. At run time, wrong shapes,
//! mixed devices and driver failures are `Err(GemmError::..)`.
//!
//! ## Cargo features
//! `opencl` (OpenCL backend + OpenCL targets), `cuda` (CUDA backend), `sm80` (Ampere+
//! tensor-core code), `sm90` (H200-planned code), `baseline` (cuBLAS beside ours in
//! `crossgemm bench`), `cli` (the `crossgemm` binary and its dependencies: clap,
//! indicatif, plotters, toml). All are on by default; the drivers are loaded at run time,
//! so a default build runs on a machine with no GPU. A library user who wants none of the
//! CLI's dependencies turns default features off and picks the rest, e.g.
//! `default-features = false, features = ["opencl", "cuda", "sm80", "sm90"]`.

pub use gemm_macros::gemm_kernel;
pub use gemm_runtime::*;

// What `#[gemm_kernel]` wraps around a note about one target: the note is kept where this
// crate's feature of the target is on, and dropped where it is off (the macro itself may be
// built with more targets than this crate asks for, through cargo's feature unification).
#[cfg(feature = "sm80")]
#[doc(hidden)]
#[macro_export]
macro_rules! __if_sm80 {
    ($($t:tt)*) => { $($t)* };
}
#[cfg(not(feature = "sm80"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __if_sm80 {
    ($($t:tt)*) => {};
}
#[cfg(feature = "sm90")]
#[doc(hidden)]
#[macro_export]
macro_rules! __if_sm90 {
    ($($t:tt)*) => { $($t)* };
}
#[cfg(not(feature = "sm90"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __if_sm90 {
    ($($t:tt)*) => {};
}
#[cfg(feature = "opencl")]
#[doc(hidden)]
#[macro_export]
macro_rules! __if_opencl {
    ($($t:tt)*) => { $($t)* };
}
#[cfg(not(feature = "opencl"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __if_opencl {
    ($($t:tt)*) => {};
}

/// Everything a kernel definition and its caller need.
pub mod prelude {
    pub use crate::{
        bf16, f16, gemm_kernel, Backend, Col, ColMajor, ColView, Device, GemmError, Matrix, MatrixView, MatrixViewMut,
        Row, RowMajor, RowView,
    };
}
