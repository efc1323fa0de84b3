//! Code generation: pure functions from ([`GemmIr`], [`TargetSpec`]) to one kernel
//! source. Tile parameters stay preprocessor constants ([`TileConfig::defines`]), so one
//! source serves every configuration of a target and is compiled per config at run time.
//!
//! Kernel ABI (both backends): `(int M, int N, int K, OUT* out, p0, p1, ...)` where
//! `p<i>` is signature parameter `i`: a pointer to its storage type for matrices and
//! vectors (f16/bf16 as 16-bit unsigned integers), a `float` for scalars.
//!
//! [`TileConfig::defines`]: crate::config::TileConfig::defines

pub mod cuda;
pub mod opencl;
mod prelude;

pub use prelude::Dialect;

use crate::ir::GemmIr;
use crate::target::{Backend, Instr, TargetSpec};

/// The generated source for `ir` on `target`, and the instruction family it uses.
pub fn emit(ir: &GemmIr, target: &TargetSpec) -> (String, Instr) {
    let (instr, _) = target.select_instr(ir.ab_dtype, ir.acc);
    let src = match target.backend {
        Backend::Cuda => cuda::emit(ir, instr),
        Backend::Opencl => opencl::emit(ir),
    };
    (src, instr)
}

/// Source variants that the diagnosis tool asks for; `Full` is the real kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Variant {
    /// The kernel as tuned and launched.
    #[default]
    Full,
}
