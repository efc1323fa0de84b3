//! crossgemm's runtime: devices, buffers, JIT compilation (NVRTC through cudarc, OpenCL
//! through opencl3) and launch of the kernels that `#[gemm_kernel]` generates.

mod buffer;
pub mod device;
mod element;
mod error;
mod launch;
#[cfg(feature = "cuda")]
mod nvrtc_check;
pub mod reference;
mod spec;

pub use buffer::{Col, Matrix, Row};
pub use device::{Device, DeviceInfo, DeviceKind};
pub use element::{ColMajor, Element, LayoutType, RowMajor};
pub use error::{GemmError, Result};
#[cfg(feature = "cuda")]
pub use nvrtc_check::{check_cuda_compiles, nvrtc_available, CompileReport};
pub use gemm_core;
pub use half::{bf16, f16};
pub use spec::{KernelSpec, TargetKernel};

/// What the code `#[gemm_kernel]` expands to refers to. Not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::launch::{dims, launch, launch_with, reference, Arg, OutArg};
    pub use gemm_core::TileConfig;
    pub use crate::spec::{KernelSpec, TargetKernel};
    pub use gemm_core::Backend;
}
