//! One kernel, one config, one codegen variant, timed on the call's operands: what
//! `crossgemm diagnose` compares the tuned winner with (its load-only, no-epilogue and
//! compute-only variants, its stage/warp neighbours, other launch orders).

use super::{Sample, Timer};
use crate::error::{GemmError, Result};
use crate::launch::{self, Arg, OutArg};
use crate::spec::KernelSpec;
use gemm_core::codegen::{emit_variant, Variant};
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
    launch::check_devices(spec, args, &out)?;
    let mnk = launch::dims(spec, args)?;
    launch::check_out(spec, &out, mnk.0, mnk.1)?;
    let dev = &out.buf.device;
    let ir = spec.ir();
    let tk = spec.target_for(dev)?;
    if !launch::fits(config, dev.info(), ir.ab_dtype) {
        return Err(GemmError::Unsupported(format!(
            "config {config} does not fit {}",
            dev.info()
        )));
    }
    let defines = launch::all_defines(ir, tk, config, mnk);
    // The full kernel through the device's kernel map, as launches get it (the winner is
    // compiled already); variants are compiled here.
    let kernel = match variant {
        Variant::Full => dev.kernel(tk.source, &ir.symbol(), &defines)?,
        v => dev
            .backend()
            .compile(&emit_variant(ir, tk.spec(), v).0, &ir.symbol(), &defines)?,
    };
    let dims = config.launch(mnk.0, mnk.1, ir.ab_dtype);
    let kargs = launch::kernel_args(args, out.buf, mnk);
    let sample = timer.time(&mut || dev.backend().launch(&*kernel, dims, &kargs))?;
    Ok(ConfigRun {
        sample,
        threads: dims.block.iter().product(),
        smem_bytes: dims.smem_bytes,
        registers: crate::device::kernel_registers(&*kernel),
    })
}
