//! Build variants: a winner is verified at each variant it runs as, once per process.
//!
//! Winners are keyed by a shape bucket, but what runs is one compile of the config for
//! the call's exact shape: its `-D` list (tile constants and the shape flags the family
//! derives, e.g. `A_VEC=1` at 4096 and `A_VEC=0` at 4095 for mma.sync) and its compile
//! needs (`sm_90a`), and, at run time, which of M, N and K are multiples of the config's
//! block tile (the edge class: ragged tiles take other paths through the same code). A
//! config verified at one variant says nothing about another, so the first launch of a
//! tuned, cached, nearest-bucket or imported winner at a variant not yet verified in
//! this process checks it there: on the tuner's own operands at the call's shape,
//! against the full host reference or sampled plus a whole-output NaN scan (the same
//! rule as candidates). A winner that fails is remembered as failed for that variant;
//! under `CROSSGEMM_TUNE=full` it is marked failed in the tuning cache and the bucket is
//! tuned again at the call's shape (once), else the launch falls back to the planner's
//! default (checked the same way); either with a warning. Variants the tuner verified
//! while tuning are remembered too.

use super::candidate::{Checker, Fault, Verdict};
use super::options::take_variant_fault;
use super::report::{VARIANT_CHECKS, VARIANT_FAILURES};
use crate::cache::FailStage;
use crate::call::{self, Call};
use crate::error::Result;
use crate::spec::{KernelSpec, TargetKernel};
use gemm_core::TileConfig;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

/// (kernel spec, device, config, variant description).
type Key = (usize, u64, TileConfig, String);

/// Why a config fails at a variant: the stage (compile, launch, wrong result) and the
/// reason.
pub(crate) type Failed = (FailStage, String);

/// The outcome of a check.
pub(crate) type Outcome = std::result::Result<(), Failed>;

fn verified() -> &'static Mutex<HashMap<Key, Outcome>> {
    static V: std::sync::OnceLock<Mutex<HashMap<Key, Outcome>>> = std::sync::OnceLock::new();
    V.get_or_init(Default::default)
}

/// The build variant `cfg` runs as for `call`: its defines, compile needs and edge class.
pub(crate) fn describe(call: &Call<'_, '_>, tk: &TargetKernel, cfg: &TileConfig) -> String {
    let defines = call::defines(call.ir(), tk.backend, cfg, call.problem);
    let (bm, bn) = cfg.block_mn();
    let bk = defines
        .iter()
        .find(|(k, _)| k == "BK" || k == "KWG")
        .map_or(1, |(_, v)| *v);
    let (m, n, k) = call.mnk();
    let edge = |x: usize, b: u32| {
        if b > 0 && x.is_multiple_of(b as usize) {
            "whole"
        } else {
            "ragged"
        }
    };
    let d: Vec<String> = defines.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(
        "-D {}; {:?}; M {} N {} K {}",
        d.join(" "),
        cfg.compile_needs(),
        edge(m, bm),
        edge(n, bn),
        edge(k, bk)
    )
}

fn key(call: &Call<'_, '_>, tk: &TargetKernel, cfg: &TileConfig) -> Key {
    (
        call.spec as *const KernelSpec as usize,
        call.device().serial(),
        *cfg,
        describe(call, tk, cfg),
    )
}

/// Records the outcome of a check of `cfg` at `call`'s variant.
pub(crate) fn remember(call: &Call<'_, '_>, tk: &TargetKernel, cfg: &TileConfig, r: Outcome) {
    verified()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key(call, tk, cfg), r);
}

/// Whether `cfg` is right at `call`'s build variant: remembered, or checked now (and
/// remembered). The inner `Err` says why not. The outer `Err` is for failures that are
/// not the config's (the device).
pub(crate) fn ensure(call: &Call<'_, '_>, tk: &TargetKernel, cfg: &TileConfig) -> Result<Outcome> {
    let k = key(call, tk, cfg);
    if let Some(r) = verified().lock().unwrap_or_else(|e| e.into_inner()).get(&k) {
        return Ok(r.clone());
    }
    // One check at a time, and none while a tuning run times candidates.
    let _guard = super::TUNING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(r) = verified().lock().unwrap_or_else(|e| e.into_inner()).get(&k) {
        return Ok(r.clone());
    }
    let r = check(call, tk, cfg)?;
    let Some(r) = r else {
        // Not checkable here (no memory for the check): run unverified, said once.
        return Ok(Ok(()));
    };
    VARIANT_CHECKS.fetch_add(1, Ordering::Relaxed);
    if r.is_err() {
        VARIANT_FAILURES.fetch_add(1, Ordering::Relaxed);
    }
    verified()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(k, r.clone());
    Ok(r)
}

/// Compiles `cfg` for `call` (through the device's kernel map, which the launch then
/// uses), runs it once on the tuner's operands and judges it. `None`: the check does not
/// fit in memory.
fn check(call: &Call<'_, '_>, tk: &TargetKernel, cfg: &TileConfig) -> Result<Option<Outcome>> {
    let opts = super::TuneOptions::from_env();
    let dev = call.device();
    let ir = call.ir();
    let source = match tk.source_of(cfg) {
        Ok(s) => s,
        Err(e) => return Ok(Some(Err((FailStage::Compile, e.to_string())))),
    };
    let defines = call::defines(ir, tk.backend, cfg, call.problem);
    // The JIT compile (hundreds of ms for a wgmma kernel) and the check's operands (tens
    // of millions of elements at an LLM shape) are independent: made at the same time,
    // a first call waits for the longer of the two, not their sum.
    let symbol = ir.symbol();
    let needs = cfg.compile_needs();
    let (kern, checker) = std::thread::scope(|s| {
        let compiling = s.spawn(|| dev.kernel(source, &symbol, &defines, &needs));
        let checker = Checker::new(call, &opts.inject, false);
        (compiling.join(), checker)
    });
    let kern = match kern {
        Ok(Ok(k)) => k,
        Ok(Err(e)) => {
            return Ok(Some(Err((
                FailStage::Compile,
                super::first_line(&e.to_string()).to_string(),
            ))))
        }
        Err(panic) => std::panic::resume_unwind(panic),
    };
    let mut checker = match checker {
        Ok(c) => c,
        Err(e) => {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                eprintln!(
                    "crossgemm: warning: `{}` {cfg} is not verified at this shape's build variant: {}",
                    call.spec.name,
                    super::first_line(&e.to_string())
                )
            });
            return Ok(None);
        }
    };
    let fault = if take_variant_fault() { Fault::Tile } else { Fault::None };
    Ok(Some(match checker.run(cfg, &*kern, fault)? {
        Verdict::Pass { .. } => Ok(()),
        Verdict::Wrong(why) => Err((FailStage::WrongResult, why)),
        Verdict::LaunchFailed(e) => Err((FailStage::Launch, super::first_line(&e.to_string()).to_string())),
    }))
}
