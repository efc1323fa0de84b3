//! crossgemm's runtime: devices, buffers, JIT compilation (NVRTC through cudarc, OpenCL
//! through opencl3) and launch of the kernels that `#[gemm_kernel]` generates.
//!
//! The crate is layered; each layer uses only those below it:
//!
//! | layer | modules |
//! |---|---|
//! | public call: launch plans, typed wrappers' entry points | `launch` |
//! | tuner (options, search, verification) and measuring API | [`tune`], [`mod@bench`] |
//! | timing protocol shared by both | `measure` |
//! | staging misaligned operands into aligned scratch | `stage` |
//! | call preparation: checks, dims, defines, operands | `call` |
//! | tuning caches and records (disk formats) | `cache`, [`records`] |
//! | generated-kernel descriptions and their prebuilt CUBINs | `spec`, `prebuilt`, `nvrtc_check` |
//! | devices, their compiled-binary cache | [`device`] |
//! | basics | `aliasing`, `buffer`, `element`, `error`, `env`, [`mod@reference`] |

mod aliasing;
pub mod bench;
mod buffer;
mod cache;
mod call;
mod copies;
pub mod device;
mod element;
mod env;
mod error;
mod host_data;
mod launch;
mod measure;
#[cfg(feature = "cuda")]
mod nvrtc_check;
mod prebuilt;
pub mod records;
pub mod reference;
mod row_copy;
mod spec;
mod split3;
mod stage;
pub mod tune;
mod view;

pub use buffer::{Col, Matrix, Row};
/// The cudarc crate crossgemm's CUDA interop takes (its `CudaStream`, `CudaSlice`,
/// `CudaView` and raw `sys` handles), so that callers build against the same version.
#[cfg(feature = "cuda")]
pub use cudarc;
pub use device::binary_cache::{compile_stats, CompileStats};
#[cfg(feature = "cuda")]
pub use device::cuda::PtxasInfo;
pub use device::{Device, DeviceInfo};
pub use element::{ColMajor, Element, LayoutType, RowMajor};
pub use env::{cache_dir, cache_dir_checked, check_cache_dir, commit, set_cache_dir};
pub use error::{GemmError, Result};
pub use gemm_core::codegen::Variant;
pub use gemm_core::plan::{Plan, Pruned};
pub use gemm_core::records::FailStage;
/// Which misaligned operands a launch copies into aligned scratch first (`CROSSGEMM_STAGE`).
pub use gemm_core::staging;
/// Build-time config tables from tuning records: what a kernel's [`TargetKernel::table`] holds.
pub use gemm_core::table;
pub use gemm_core::target::{Targets, BUILTIN_TARGETS};
pub use gemm_core::{
    AccMode, Backend, DType, FamilyId, GemvTile, Layout, MmaTile, Problem, SimtTile, Stored, TargetSpec, TileConfig,
    WgmmaTile,
};
pub use half::{bf16, f16};
#[cfg(feature = "cuda")]
pub use nvrtc_check::{check_cuda_compiles, check_cuda_variant_compiles, nvrtc_available, CompileReport};
/// The opencl3 crate crossgemm's OpenCL interop takes (its `CommandQueue` and `Buffer`),
/// so that callers build against the same version.
#[cfg(feature = "opencl")]
pub use opencl3;
pub use prebuilt::Prebuilt;
pub use spec::{KernelSpec, TargetKernel};
pub use tune::{
    tune_stats, Failure, Lookup, LookupSource, PrepareReport, ProgressHook, Timing, TuneMode, TuneOptions,
    TuneProgress, TuneReport, TuneStage, TuneStats,
};
pub use view::{ColArg, ColView, MatrixArg, MatrixOut, MatrixView, MatrixViewMut, RowArg, RowView};

/// Running a kernel from its [`KernelSpec`] and an argument list, as the generated
/// wrappers do: for tools that pick kernels at run time (the `crossgemm` CLI, benches).
/// Arguments are in the kernel's signature order; every check of a typed call applies.
pub mod untyped {
    pub use crate::call::{dims, Arg, OutArg};
    pub use crate::launch::{launch, launch_with, reference};
}

/// What the code `#[gemm_kernel]` expands to refers to. Not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::call::{dims, Arg, OutArg};
    pub use crate::device::{fail_next_allocations, scratch_allocations};
    pub use crate::launch::{launch, launch_with, reference};
    pub use crate::prebuilt::Prebuilt;
    pub use crate::spec::{KernelSpec, TargetKernel};
    pub use crate::stage::{fail_next_stagings, staged_operands};
    pub use crate::tune::{prepare, tune};
    pub use gemm_core::Backend;
    pub use gemm_core::TileConfig;
}
