//! The public call path: from a typed wrapper's arguments to a kernel launch. The call is
//! checked ([`Call::new`]), its config chosen by the tuner ([`crate::tune::choose`]) or
//! given, its family's source compiled (cached per device) and launched. The host device
//! runs the reference.
//!
//! Warm calls skip all of that: a resolved [`LaunchPlan`] per (kernel, device, shape,
//! tuning mode) holds the compiled kernel and the launch geometry.

use crate::call::{self, Arg, Call, OutArg};
use crate::element::{encode, Element};
use crate::error::{GemmError, Result};
use crate::spec::{KernelSpec, TargetKernel};
use crate::tune::{self, TuneMode};
use gemm_core::{Backend, LaunchDims, TileConfig};
use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

/// What a warm call needs once its config is chosen and its kernel compiled. Resolving
/// that again on every call (tuning-cache lookup, `-D` strings, the compiled-kernel map,
/// the kernel symbol) costs several microseconds of allocation; a plan costs one lookup.
#[derive(Clone)]
struct LaunchPlan {
    config: TileConfig,
    kernel: Arc<dyn Any + Send + Sync>,
    dims: LaunchDims,
    /// The tuner's generation when the plan was made: a later tune may change a winner.
    generation: u64,
}

/// (kernel spec, device, problem, tuning mode). The problem (extents, where A and B lie,
/// the batch) decides the compiled variant, as alignment flags follow the views'
/// geometry; the mode is part of the key so that a process that changes
/// `CROSSGEMM_TUNE` gets what that mode chooses.
type PlanKey = (usize, u64, gemm_core::Problem, TuneMode);

/// Hashed with rustc-hash's Fx rather than SipHash: a warm call hashes the key once, and
/// SipHash over the problem's fields was a tenth of a warm call's own instructions.
type Plans = RwLock<HashMap<PlanKey, LaunchPlan, rustc_hash::FxBuildHasher>>;

fn plans() -> &'static Plans {
    static PLANS: OnceLock<Plans> = OnceLock::new();
    PLANS.get_or_init(Default::default)
}

/// Runs the kernel with the config the tuner chooses for the operands' device and shape.
pub fn launch(spec: &'static KernelSpec, args: &[Arg<'_>], out: OutArg<'_>) -> Result<()> {
    launch_impl(spec, None, args, out)
}

/// Runs the kernel with an explicit config (tests and tuning).
pub fn launch_with(spec: &'static KernelSpec, config: &TileConfig, args: &[Arg<'_>], out: OutArg<'_>) -> Result<()> {
    launch_impl(spec, Some(config), args, out)
}

fn launch_impl(
    spec: &'static KernelSpec,
    config: Option<&TileConfig>,
    args: &[Arg<'_>],
    out: OutArg<'_>,
) -> Result<()> {
    if out.batch > call::MAX_BATCH {
        // Every launch computes at most MAX_BATCH products: the whole call is checked
        // first, so that a bad argument fails before any launch writes.
        call::check(spec, args, &out)?;
        for (start, count) in call::batch_chunks(out.batch) {
            let part: Vec<Arg<'_>> = args.iter().map(|a| a.products(start, count)).collect();
            launch_impl(spec, config, &part, out.products(start, count))?;
        }
        return Ok(());
    }
    let call = Call::new(spec, args, out)?;
    let (m, n, _) = call.mnk();
    if m == 0 || n == 0 {
        return Ok(());
    }
    let dev = call.device();
    if dev.info().kind == Backend::Host {
        // The reference, written into the output's view(s) only.
        let vals = call.host_reference()?;
        let ir = spec.ir();
        let mut bytes = vec![0u8; out.buf.bytes];
        out.buf.download(&mut bytes)?;
        let mut all = crate::element::decode(ir.out_dtype, &bytes);
        crate::host_data::scatter(&mut all, &vals, ir.out_layout, (m, n), out.at, out.batch);
        return out.buf.upload(&encode(ir.out_dtype, &all));
    }
    // Misaligned operands run from aligned scratch copies (stage.rs); the call is then
    // the copies' call, so its plan, tune and kernel are the aligned problem's.
    crate::stage::with_staged(call, |call| launch_call(call, config))
}

/// [`launch_impl`] past the checks, the host device and staging.
fn launch_call(call: &Call<'_, '_>, config: Option<&TileConfig>) -> Result<()> {
    let (spec, dev, out) = (call.spec, call.device(), call.out);
    let key: Option<PlanKey> = config.is_none().then(|| {
        (
            spec as *const KernelSpec as usize,
            dev.serial(),
            call.problem,
            TuneMode::from_env(),
        )
    });
    let generation = tune::generation();
    if let Some(key) = &key {
        let plan = plans().read().unwrap_or_else(|e| e.into_inner()).get(key).cloned();
        if let Some(p) = plan.filter(|p| p.generation == generation) {
            return dev.launch(&*p.kernel, p.dims, &call.kernel_args(&p.config, out.buf));
        }
    }
    let tk = call.target()?;
    let cfg = match config {
        Some(c) => {
            call.check_config(tk, c)?;
            return run(call, tk, *c, None);
        }
        None => tune::choose(call, tk)?,
    };
    match run(call, tk, cfg, key.map(|k| (k, generation))) {
        // A winner the device cannot build or run (a record from another driver, a
        // hand-edited cache): forgotten, recorded as failed, and replaced once.
        Err(e) if is_config_fault(&e) => {
            let other = tune::launch_failed(call, tk, &cfg, &e)?;
            run(call, tk, other, key.map(|k| (k, tune::generation())))
        }
        r => r,
    }
}

/// Whether a failure to build or launch a config is the config's own (a rejected source,
/// a module or launch the driver refuses) rather than the call's (a shape, a device). A
/// device out of memory (a split-K workspace it could not grow) is the moment's, not the
/// config's: recording the winner as failed would retune, or drop it for good, over a
/// transient shortage.
fn is_config_fault(e: &GemmError) -> bool {
    matches!(
        e,
        GemmError::Compile { .. } | GemmError::Driver { .. } | GemmError::ConfigDoesNotFit { .. }
    ) && !e.is_out_of_memory()
}

/// Compiles (cached per device) and launches `cfg` for `call`; with a plan key, remembers
/// the result as the warm path of later calls.
fn run(call: &Call<'_, '_>, tk: &TargetKernel, cfg: TileConfig, plan: Option<(PlanKey, u64)>) -> Result<()> {
    let (ir, dev, out) = (call.ir(), call.device(), call.out);
    let source = tk.source_of(&cfg)?;
    let defines = cfg.owned_defines(ir, tk.backend, call.problem);
    let kernel = dev.kernel(source, &ir.symbol(), &defines, &cfg.compile_needs())?;
    let dims = cfg.launch(ir, call.problem, call.machine());
    if plan.is_some() && tune::take_launch_failure() {
        return Err(GemmError::Driver {
            backend: dev.info().kind.api_name(),
            op: format!("launch of {}", ir.symbol()),
            message: "injected launch failure (crossgemm test)".to_string(),
            source: None,
        });
    }
    dev.launch(&*kernel, dims, &call.kernel_args(&cfg, out.buf))?;
    if let Some((key, generation)) = plan {
        let plan = LaunchPlan {
            config: cfg,
            kernel,
            dims,
            generation,
        };
        plans().write().unwrap_or_else(|e| e.into_inner()).insert(key, plan);
    }
    Ok(())
}

/// The host reference for a call, rounded to the output type, in the output layout;
/// for batched operands every product of the batch (as many as the largest operand
/// batch), one after another.
pub fn reference<T: Element>(spec: &'static KernelSpec, args: &[Arg<'_>]) -> Result<Vec<T>> {
    let (m, n, k) = call::dims(spec, args)?;
    let ir = spec.ir();
    let vals = crate::host_data::reference_values(ir, args, (m, n, k), call::batch_of(args))?;
    Ok(vals.into_iter().map(T::from_f32).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A driver's refusal blames the config; running out of memory does not.
    #[test]
    fn out_of_memory_is_not_the_configs_fault() {
        use crate::error::{test_driver_error, InjectedOutOfMemory};
        assert!(is_config_fault(&test_driver_error(None)));
        assert!(!is_config_fault(&InjectedOutOfMemory::driver_error()));
        assert!(!is_config_fault(&GemmError::Unsupported("x".into())));
    }
}
