//! Compile checks of generated CUDA sources with NVRTC alone: no GPU and no libcuda, so
//! a CI machine with only libnvrtc (e.g. PyPI's `nvidia-cuda-nvrtc`) can prove that
//! every planned kernel builds for the chip it was planned for.

use crate::device::cuda::{nvrtc_compile_check, nvrtc_present, Arch, PtxasInfo};
use crate::error::{GemmError, Result};
use crate::spec::TargetKernel;
use gemm_core::codegen::Variant;
use gemm_core::{Backend, GemmIr, Problem, TileConfig};

/// Whether libnvrtc can be loaded, i.e. whether [`check_cuda_compiles`] can run.
///
/// Looks on the dynamic loader's path (`LD_LIBRARY_PATH`, ldconfig), then in
/// `$CUDA_PATH/lib64`, `$CUDA_HOME/lib64` and `/usr/local/cuda/lib64`.
pub fn nvrtc_available() -> bool {
    nvrtc_present()
}

/// What NVRTC and ptxas said about one successful compile.
#[derive(Clone, Debug)]
pub struct CompileReport {
    /// Kernel symbol.
    pub symbol: String,
    /// The architecture compiled for, `sm_<arch>`: e.g. `90`, or `90a` for code of the
    /// Hopper-only families.
    pub arch: String,
    /// The `-D` definitions passed (tile config, then shape flags).
    pub defines: Vec<(String, u32)>,
    /// Registers per thread, as ptxas reported them (`None` if the log lacked the line).
    pub registers: Option<u32>,
    /// Bytes of spill stores (`None` if the log lacked the line).
    pub spill_stores: Option<u32>,
    /// Bytes of spill loads (`None` if the log lacked the line).
    pub spill_loads: Option<u32>,
    /// NVRTC's full program log, ptxas `-v` output included.
    pub log: String,
}

impl CompileReport {
    /// Spill stores plus spill loads, in bytes (0 where ptxas reported none).
    pub fn spill_bytes(&self) -> u32 {
        self.spill_stores.unwrap_or(0) + self.spill_loads.unwrap_or(0)
    }
}

/// Compiles `kernel`'s CUDA source with `config` for an `m × n × k` product, for the
/// target's own compute capability, exactly as a CUDA device would at launch (same
/// options and defines), but needing only libnvrtc.
///
/// `ir` must be the IR of the kernel `kernel` belongs to ([`KernelSpec::ir`]); it names
/// the symbol and decides the shape flags (`A_VEC`, `B_ALIGN`, ..) that `shape` selects.
///
/// Fails with [`GemmError::Unsupported`] for a non-CUDA target or one without a compute
/// capability, and with [`GemmError::Compile`] (carrying NVRTC's log) when libnvrtc is
/// missing, NVRTC rejects the source, or the CUBIN lacks the kernel's symbol.
///
/// [`KernelSpec::ir`]: crate::KernelSpec::ir
pub fn check_cuda_compiles(
    kernel: &TargetKernel,
    ir: &GemmIr,
    config: &TileConfig,
    shape: (usize, usize, usize),
) -> Result<CompileReport> {
    check_cuda_variant_compiles(kernel, ir, config, shape, Variant::Full)
}

/// [`check_cuda_compiles`] for codegen variant `variant` of the config's family: the
/// sources `crossgemm diagnose` compiles beside the kernel (load-only, no epilogue,
/// compute-only, no store; see [`Variant`]), generated here as `diagnose` generates them.
/// `Variant::Full` checks the kernel's own source.
pub fn check_cuda_variant_compiles(
    kernel: &TargetKernel,
    ir: &GemmIr,
    config: &TileConfig,
    shape: (usize, usize, usize),
    variant: Variant,
) -> Result<CompileReport> {
    if kernel.backend != Backend::Cuda {
        return Err(GemmError::Unsupported(format!(
            "target `{}` is not a CUDA target",
            kernel.target
        )));
    }
    let cc = kernel
        .spec()
        .compute_capability
        .ok_or_else(|| GemmError::Unsupported(format!("CUDA target `{}` has no compute capability", kernel.target)))?;
    let arch = Arch {
        cc,
        suffix: config.compile_needs().arch_suffix,
    };
    let (m, n, k) = shape;
    // Same definitions, in the same order, as launch: a check that built anything else
    // could pass while the real compile fails.
    let defines = config.owned_defines(ir, kernel.backend, Problem::new(m, n, k));
    let symbol = ir.symbol();
    // The kernel's own (embedded) source, or the variant generated as `diagnose` does.
    let generated;
    let source = match variant {
        Variant::Full => kernel.source_of(config)?,
        v => {
            generated = config.family_id().emit(ir, kernel.backend, v);
            generated.as_str()
        }
    };
    let log = nvrtc_compile_check(source, &symbol, arch, &defines)?;
    let ptxas = PtxasInfo::parse(&log);
    Ok(CompileReport {
        symbol,
        arch: arch.to_string(),
        defines,
        registers: ptxas.registers,
        spill_stores: ptxas.spill_stores,
        spill_loads: ptxas.spill_loads,
        log,
    })
}
