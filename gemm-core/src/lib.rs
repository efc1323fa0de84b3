//! The syn-free middle of crossgemm, shared by the `#[gemm_kernel]` macro (at build time)
//! and the runtime (which re-plans and re-generates sources for tuning and diagnosis).
//!
//! Pipeline pieces that live here, each a pure function:
//! - [`ir`]: the GEMM description ([`GemmIr`]) the macro lowers a user fn into;
//! - [`target`]: chip limits ([`TargetSpec`]) parsed from `targets.toml`;
//! - [`config`]: tile configurations and the launch geometry they imply;
//! - [`plan`]: the candidate space per target, pruned by named rules with a report;
//! - [`codegen`]: one CUDA C or OpenCL C source per (IR, backend).

pub mod codegen;
pub mod config;
pub mod ir;
pub mod plan;
pub mod swizzle;
pub mod target;

pub use config::{LaunchDims, MmaTile, SimtTile, TileConfig};
pub use ir::{AccMode, DType, EpOp, Func, GemmIr, Layout, Param, ParamKind};
pub use plan::{plan_target, Plan, Pruned};
pub use target::{Backend, TargetSpec, Targets};
