//! One kernel, one config, one codegen variant, timed on the call's operands: what
//! `crossgemm diagnose` compares the tuned winner with (its load-only, no-epilogue and
//! compute-only variants, its stage/warp neighbours, other launch orders).

use super::{Sample, Timer};
use crate::call::{Arg, Call, OutArg};
use crate::error::Result;
use crate::spec::KernelSpec;
use gemm_core::codegen::Variant;
use gemm_core::TileConfig;

/// One timed config: its time, and the resources that decide how many of its blocks
/// fit on a multiprocessor at once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConfigRun {
    /// The timing.
    pub sample: Sample,
    /// Threads per block.
    pub threads: u32,
    /// Dynamic shared memory per block, bytes.
    pub smem_bytes: u32,
    /// Registers per thread and spilled bytes, as the compiler reported them (CUDA).
    pub registers: Option<(u32, u32)>,
}

/// Compiles `spec`'s kernel for the output's device with `config` and codegen `variant`
/// (see [`Variant`]: only `Full` computes the declared GEMM) and times it with `timer`,
/// writing into `out`. The compile goes through the compiled-kernel caches but not the
/// tuning cache: nothing here changes what launches use.
pub fn time_config(
    spec: &'static KernelSpec,
    args: &[Arg<'_>],
    out: OutArg<'_>,
    config: &TileConfig,
    variant: Variant,
    timer: &Timer,
) -> Result<ConfigRun> {
    let call = Call::new(spec, args, out)?;
    let dev = call.device();
    let ir = spec.ir();
    let tk = call.target()?;
    call.check_config(tk, config)?;
    let source = tk.source_of(config)?;
    let defines = config.owned_defines(ir, tk.backend, call.problem);
    // The full kernel through the device's kernel map, as launches get it (the winner is
    // compiled already); variants are compiled here.
    let kernel = match variant {
        Variant::Full => dev.kernel(source, &ir.symbol(), &defines, &config.compile_needs())?,
        v => dev.backend().compile(
            &config.family_id().emit(ir, tk.backend, v),
            &ir.symbol(),
            &defines,
            &config.compile_needs(),
        )?,
    };
    let dims = config.launch(ir, call.problem, call.machine());
    let kargs = call.kernel_args(config, out.buf);
    let sample = timer.time(&mut || dev.backend().launch(&*kernel, dims, &kargs))?;
    Ok(ConfigRun {
        sample,
        threads: dims.block.iter().product(),
        smem_bytes: dims.smem_bytes,
        registers: crate::device::kernel_registers(&*kernel),
    })
}
