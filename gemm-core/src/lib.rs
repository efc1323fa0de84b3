//! The syn-free middle of crossgemm, shared by the `#[gemm_kernel]` macro (at build time)
//! and the runtime (which re-plans and re-generates sources for tuning and diagnosis).
//!
//! Pipeline pieces that live here, each a pure function:
//! - [`ir`]: the GEMM description ([`GemmIr`]) the macro lowers a user fn into;
//! - [`target`]: chip limits ([`TargetSpec`]) parsed from `targets.toml`;
//! - [`family`]: the kernel families (tile spaces, rules, host contracts, sources);
//! - [`plan`]: per target, the families that serve a kernel and their pruned candidates;
//! - [`codegen`]: one CUDA C or OpenCL C source per (IR, backend, family);
//! - [`records`]: the tuning-records format, [`merge`]: records of several machines
//!   combined, and [`table`]: the config tables that the macro builds from records for
//!   each kernel.

pub mod codegen;
pub mod estimate;
pub mod family;
pub mod ir;
pub mod merge;
pub mod plan;
pub mod records;
pub mod space;
pub mod split3;
pub mod staging;
pub mod swizzle;
pub mod table;
pub mod target;

pub use family::{
    sum_pass, CompileNeeds, FamilyId, GemvTile, LaunchDims, Machine, MmaTile, Problem, SimtTile, Stored, TensorMap,
    TileConfig, WgmmaTile, Workspace, SUM_KERNEL_SUFFIX,
};
pub use ir::{AccMode, DType, EpOp, Func, GemmIr, Layout, Param, ParamKind};
pub use plan::{plan_target, Plan, Pruned};
pub use target::{Backend, TargetSpec, Targets};
