//! One kernel, one config, one codegen variant, on the call's operands: what `crossgemm
//! diagnose` compares the tuned winner with (its load-only, no-epilogue and compute-only
//! variants, its stage/warp neighbours, other launch orders). Each is compiled and run
//! on its own ([`prepare_config`], [`run_prepared`]) and then timed with the others in the
//! same rounds ([`time_prepared`]), so that their shares of each other do not carry the
//! clock's drift between them.

use super::{Sample, Timer};
use crate::call::{Arg, Call, OutArg};
use crate::error::{GemmError, Result};
use crate::spec::KernelSpec;
use gemm_core::codegen::Variant;
use gemm_core::{LaunchDims, TileConfig};
use std::any::Any;
use std::sync::Arc;

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

/// A config compiled at one codegen variant for a call's device and shape
/// ([`prepare_config`]): ready to run into that call's output and to be timed.
#[derive(Clone)]
pub struct Prepared {
    config: TileConfig,
    kernel: Arc<dyn Any + Send + Sync>,
    dims: LaunchDims,
}

impl Prepared {
    /// Threads per block.
    pub fn threads(&self) -> u32 {
        self.dims.block.iter().product()
    }
    /// Dynamic shared memory per block, bytes.
    pub fn smem_bytes(&self) -> u32 {
        self.dims.smem_bytes
    }
    /// Registers per thread and spilled bytes, as the compiler reported them (CUDA).
    pub fn registers(&self) -> Option<(u32, u32)> {
        crate::device::kernel_registers(&*self.kernel)
    }
}

/// Compiles `spec`'s kernel for the output's device with `config` and codegen `variant`
/// (see [`Variant`]: only `Full` computes the declared GEMM), for the call of `args`
/// into `out`. The compile goes through the compiled-kernel caches but not the tuning
/// cache: nothing here changes what launches use.
pub fn prepare_config(
    spec: &'static KernelSpec,
    args: &[Arg<'_>],
    out: OutArg<'_>,
    config: &TileConfig,
    variant: Variant,
) -> Result<Prepared> {
    let ir = spec.ir();
    if gemm_core::split3::splits(ir) {
        // Variants run on the call's own operands, and this kernel's launches run on split
        // copies (split3.rs) that nothing here makes: its numbers would be another call's.
        return Err(GemmError::Unsupported(format!(
            "`{}` is an `acc = tf32x3` kernel, whose launches run a tf32 product of split copies at 3K; diagnose a tf32 kernel at that shape instead",
            spec.name
        )));
    }
    let call = Call::new(spec, args, out)?;
    let dev = call.device();
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
    Ok(Prepared {
        config: *config,
        kernel,
        dims: config.launch(ir, call.problem, call.machine()),
    })
}

/// Runs `p` once into `out` (the call it was prepared for) and waits for it.
pub fn run_prepared(spec: &'static KernelSpec, args: &[Arg<'_>], out: OutArg<'_>, p: &Prepared) -> Result<()> {
    let call = Call::new(spec, args, out)?;
    let dev = call.device();
    dev.launch(&*p.kernel, p.dims, &call.kernel_args(&p.config, out.buf))?;
    dev.synchronize()
}

/// Times `prepared` (of the call of `args` into `out`) with `timer`, all in the same
/// rounds ([`Timer::time_together`]), in their order.
pub fn time_prepared(
    spec: &'static KernelSpec,
    args: &[Arg<'_>],
    out: OutArg<'_>,
    prepared: &[&Prepared],
    timer: &Timer,
) -> Result<Vec<ConfigRun>> {
    let call = Call::new(spec, args, out)?;
    let b = call.device().backend();
    let kargs: Vec<_> = prepared.iter().map(|p| call.kernel_args(&p.config, out.buf)).collect();
    let mut runs: Vec<_> = prepared
        .iter()
        .zip(&kargs)
        .map(|(p, a)| move || b.launch(&*p.kernel, p.dims, a))
        .collect();
    let mut works: Vec<&mut dyn FnMut() -> Result<()>> =
        runs.iter_mut().map(|r| r as &mut dyn FnMut() -> Result<()>).collect();
    let samples = timer.time_together(&mut works)?;
    Ok(prepared
        .iter()
        .zip(samples)
        .map(|(p, sample)| ConfigRun {
            sample,
            threads: p.threads(),
            smem_bytes: p.smem_bytes(),
            registers: p.registers(),
        })
        .collect())
}

/// [`prepare_config`], then the config timed alone with `timer`.
pub fn time_config(
    spec: &'static KernelSpec,
    args: &[Arg<'_>],
    out: OutArg<'_>,
    config: &TileConfig,
    variant: Variant,
    timer: &Timer,
) -> Result<ConfigRun> {
    let p = prepare_config(spec, args, out, config, variant)?;
    Ok(time_prepared(spec, args, out, &[&p], timer)?.remove(0))
}
