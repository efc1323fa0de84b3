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
//! - Attribute arguments: `acc = f32 | tf32` (tf32: tensor cores for f32 operands),
//!   `targets(h200, opencl_cpu, ..)`, `tune(block_m = [64, 128], stages = 2..=4, ..)`,
//!   `crate = path`.
//!
//! Every misuse is a compile error at the offending token. At run time, wrong shapes,
//! mixed devices and driver failures are `Err(GemmError::..)`.
//!
//! ## Cargo features
//! `opencl` (OpenCL backend + OpenCL targets), `cuda` (CUDA backend), `sm80` (Ampere+
//! tensor-core code), `sm90` (H200-planned code). All are on by default; the drivers are
//! loaded at run time, so a default build runs on a machine with no GPU.

pub use gemm_macros::gemm_kernel;
pub use gemm_runtime::*;

/// Everything a kernel definition and its caller need.
pub mod prelude {
    pub use crate::{bf16, f16, gemm_kernel, Backend, Col, ColMajor, Device, GemmError, Matrix, Row, RowMajor};
}
