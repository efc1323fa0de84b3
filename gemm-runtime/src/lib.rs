//! crossgemm's runtime: devices, buffers, JIT compilation (NVRTC through cudarc, OpenCL
//! through opencl3) and launch of the kernels that `#[gemm_kernel]` generates.

pub mod bench;
mod binary_cache;
mod buffer;
mod cache;
pub mod device;
mod element;
mod error;
mod launch;
#[cfg(feature = "cuda")]
mod nvrtc_check;
pub mod records;
pub mod reference;
mod spec;
mod tune;

pub use buffer::{Col, Matrix, Row};
pub use cache::cache_dir;
pub use device::{Device, DeviceInfo, DeviceKind};
pub use element::{ColMajor, Element, LayoutType, RowMajor};
pub use error::{GemmError, Result};
pub use gemm_core;
pub use half::{bf16, f16};
#[cfg(feature = "cuda")]
pub use nvrtc_check::{check_cuda_compiles, nvrtc_available, CompileReport};
pub use spec::{KernelSpec, TargetKernel};
pub use tune::{
    tune_stats, FailStage, Failure, Lookup, LookupSource, ProgressHook, Timing, TuneMode, TuneOptions, TuneProgress,
    TuneReport, TuneStage, TuneStats,
};

/// What the code `#[gemm_kernel]` expands to refers to. Not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::bench::{bare_launch_us, bare_submit_us};
    pub use crate::binary_cache::{compile_stats, CompileStats};
    pub use crate::launch::{dims, launch, launch_with, reference, Arg, OutArg};
    pub use crate::spec::{KernelSpec, TargetKernel};
    pub use crate::tune::{lookup, tune, tune_with, Inject};
    pub use gemm_core::Backend;
    pub use gemm_core::TileConfig;
}
