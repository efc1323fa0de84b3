//! Build variants: a winner is verified at each variant it runs as, once per process.
//!
//! Winners are keyed by a shape bucket, but what runs is one compile of the config for
//! the call's exact shape: its `-D` list (tile constants and the shape flags the family
//! derives, e.g. `A_VEC=1` at 4096 and `A_VEC=0` at 4095 for mma.sync) and its compile
//! needs (`sm_90a`), and, at run time, which of M, N and K are multiples of the config's
//! block tile (the edge class: ragged tiles take other paths through the same code). A
//! config verified at one variant says nothing about another, so the first launch of a
//! tuned, cached, nearest-bucket or imported winner at a variant not yet verified in
//! this process checks it there: on the tuner's own operands against the full host
//! reference or sampled plus a whole-output NaN scan (the same rule as candidates), at
//! the call's shape shrunk to a few tiles per dimension where the variant stays the same
//! ([`check_problem`]: at an LLM shape the operands of the full shape took most of a
//! first call that needed no compile). A winner that fails is remembered as failed for
//! that variant; under `CROSSGEMM_TUNE=full` it is marked failed in the tuning cache and
//! the bucket is tuned again at the call's shape (once), else the launch falls back to
//! the planner's default (checked the same way); either with a warning. Variants the
//! tuner verified while tuning are remembered too.

use super::candidate::{Checker, Fault, Verdict};
use super::options::{take_variant_fault, take_variant_out_of_memory};
use super::report::{VARIANT_CHECKS, VARIANT_FAILURES};
use crate::cache::FailStage;
use crate::call::Call;
use crate::error::{GemmError, Result};
use crate::spec::{KernelSpec, TargetKernel};
use gemm_core::{Problem, TileConfig};
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
    describe_at(call.ir(), tk.backend, cfg, call.problem)
}

/// The k-tile of a config's defines (`BK`, `KWG`), 1 where it has none.
fn k_tile(defines: &[(String, u32)]) -> u32 {
    defines
        .iter()
        .find(|(k, _)| k == "BK" || k == "KWG")
        .map_or(1, |(_, v)| *v)
}

/// [`describe`] at problem `p`.
fn describe_at(ir: &gemm_core::GemmIr, backend: gemm_core::Backend, cfg: &TileConfig, p: Problem) -> String {
    let defines = cfg.owned_defines(ir, backend, p);
    let (bm, bn) = cfg.block_mn();
    let bk = k_tile(&defines);
    let (m, n, k) = (p.m, p.n, p.k);
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

/// Whole tiles a shrunk check keeps along M and N (several blocks, so that neighbouring
/// blocks' edges and the grouped order are exercised).
const CHECK_TILES_MN: usize = 2;
/// k-tiles a shrunk check keeps beyond the config's ring (so that it wraps).
const CHECK_TILES_K_PAST_RING: usize = 2;
/// Multiprocessors a shrunk check of a persistent config launches for: from 2 up to this
/// many, the fewest whose grid both loops over the shrunk shape's tiles and does not
/// divide them (so that a stream-K config shares out a wave, as at the call's shape).
const CHECK_UNITS: u32 = 8;

/// The step a shrunk extent moves by: the tile and 16 elements (what the families'
/// alignment flags and copy sizes look at: rows of 16-byte multiples), so that the
/// remainders both see stay.
const CHECK_ALIGN: usize = 16;

/// `x` cut to at least `whole` tiles of `b`, in steps of `lcm(b, CHECK_ALIGN)`, plus its
/// remainder modulo that step (so its edge class, whole or ragged, and its alignment
/// stay), where that is smaller than `x`.
fn shrink(x: usize, b: usize, whole: usize) -> usize {
    if b == 0 {
        return x;
    }
    let step = b / gcd(b, CHECK_ALIGN) * CHECK_ALIGN;
    x.min((whole * b).div_ceil(step) * step + x % step)
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The shape a check of `cfg` at `call`'s build variant runs at, and the machine its
/// launch is sized for: each of M, N and K cut to a few tiles plus its remainder
/// ([`shrink`]: M and N to [`CHECK_TILES_MN`] tiles, K to the ring's depth plus
/// [`CHECK_TILES_K_PAST_RING`] k-tiles). Kept as it is where the cut would change the
/// variant ([`describe_at`]: the defines the family derives from the shape, alignment
/// flags and copy sizes included, or the edge class) or where the family would refuse it.
/// Where the call's blocks loop over several tiles (a persistent grid smaller than the
/// tile count), that loop is part of what runs: the check keeps it by launching the cut
/// shape on a grid sized for 2 to [`CHECK_UNITS`] multiprocessors, which the family's
/// persistent kernels serve with any grid; one that does not divide the tile count, so
/// that a stream-K config runs its shared wave. (Keeping the call's M and N instead made a
/// first call at 4096³ check a 16.8M-element output by samples, through comparison
/// kernels that it had to compile: 240 ms of a 330 ms first call on the H200.) A
/// parameter in two roles (`x * x.t()`, or A or B read again by the epilogue) keeps the
/// call's shape too: its one shape could not follow two cut extents.
pub(crate) fn check_problem(
    ir: &gemm_core::GemmIr,
    backend: gemm_core::Backend,
    cfg: &TileConfig,
    p: Problem,
    machine: gemm_core::Machine,
) -> (Problem, gemm_core::Machine) {
    let epilogue = ir.epilogue_params();
    if ir.a == ir.b || epilogue.contains(&ir.a) || epilogue.contains(&ir.b) {
        return (p, machine);
    }
    let (bm, bn) = cfg.block_mn();
    let (bm, bn) = (bm as usize, bn as usize);
    let bk = k_tile(&cfg.owned_defines(ir, backend, p)) as usize;
    let ring = cfg.family().resources(cfg, ir.ab_dtype).ring_k as usize;
    let k_tiles = ring.div_ceil(bk.max(1)) + CHECK_TILES_K_PAST_RING;
    let tiles = |p: Problem| p.m.div_ceil(bm.max(1)) * p.n.div_ceil(bn.max(1)) * p.batch.max(1);
    let blocks = |p: Problem, machine| {
        cfg.launch(ir, p, machine)
            .grid
            .iter()
            .map(|&g| g as usize)
            .product::<usize>()
    };
    let persistent = blocks(p, machine) < tiles(p);
    let small = Problem::new(
        shrink(p.m, bm, CHECK_TILES_MN),
        shrink(p.n, bn, CHECK_TILES_MN),
        shrink(p.k, bk, k_tiles),
    )
    .stored(p.a, p.b)
    .batched(p.batch);
    let small_machine = if persistent {
        let at = |units: u32| gemm_core::Machine {
            units: units.min(machine.units),
        };
        let loops = |m| blocks(small, m) < tiles(small);
        (2..=CHECK_UNITS)
            .map(at)
            .find(|&m| loops(m) && !tiles(small).is_multiple_of(blocks(small, m)))
            .unwrap_or(at(2))
    } else {
        machine
    };
    let same = describe_at(ir, backend, cfg, small) == describe_at(ir, backend, cfg, p)
        && cfg.family().accepts(cfg, ir, small).is_ok()
        && (!persistent || blocks(small, small_machine) < tiles(small));
    if same {
        (small, small_machine)
    } else {
        (p, machine)
    }
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
    let defines = cfg.owned_defines(ir, tk.backend, call.problem);
    // The JIT compile (hundreds of ms for a wgmma kernel) and the check's operands (tens
    // of millions of elements at an LLM shape) are independent: made at the same time,
    // a first call waits for the longer of the two, not their sum.
    let symbol = ir.symbol();
    let needs = cfg.compile_needs();
    let (kern, checker) = std::thread::scope(|s| {
        let compiling = s.spawn(|| dev.kernel(source, &symbol, &defines, &needs));
        let (problem, machine) = check_problem(ir, tk.backend, cfg, call.problem, call.machine());
        let small = Call { problem, ..*call };
        let checker = Checker::new(&small, &opts.inject, false).map(|c| c.launched_for(machine));
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
        Err(e) => return Ok(unverified(call, cfg, &e)),
    };
    let fault = if take_variant_fault() {
        Fault::Tile(0)
    } else if take_variant_out_of_memory() {
        Fault::OutOfMemory
    } else {
        Fault::None
    };
    Ok(match checker.run(cfg, &*kern, fault)? {
        Verdict::Pass { .. } => Some(Ok(())),
        Verdict::Wrong(why) => Some(Err((FailStage::WrongResult, why))),
        // The check's launch does not fit in memory now (after the staging scratch was
        // freed): not the config's fault; the call's own launch decides.
        Verdict::LaunchFailed(e) if e.is_out_of_memory() => unverified(call, cfg, &e),
        Verdict::LaunchFailed(e) => Some(Err((FailStage::Launch, super::first_line(&e.to_string()).to_string()))),
    })
}

/// A check that could not run (its operands or its launch did not fit in memory): `cfg`
/// runs unverified at this variant, said once a process, and is checked again next time.
fn unverified(call: &Call<'_, '_>, cfg: &TileConfig, e: &GemmError) -> Option<Outcome> {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        eprintln!(
            "crossgemm: warning: `{}` {cfg} is not verified at this shape's build variant: {}",
            call.spec.name,
            super::first_line(&e.to_string())
        )
    });
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::space::TuneSpace;
    use gemm_core::target::{Targets, BUILTIN_TARGETS};
    use gemm_core::{plan_target, AccMode, Backend, DType, GemmIr, Layout, Machine};

    /// A parameter in two roles keeps the call's shape.
    #[test]
    fn a_parameter_in_two_roles_is_checked_at_the_calls_shape() {
        let t = Targets::parse(BUILTIN_TARGETS).unwrap();
        let h200 = t.get("h200").unwrap();
        let mut ir = GemmIr::matmul("t", DType::F16, AccMode::F32, Layout::RowMajor, Layout::ColMajor);
        let p = Problem::new(4096, 4096, 4096);
        let cfg = *plan_target(&ir, h200, &TuneSpace::default())
            .configs
            .iter()
            .find(|c| c.family().accepts(c, &ir, p).is_ok())
            .unwrap();
        let m = Machine { units: 132 };
        assert_ne!(check_problem(&ir, Backend::Cuda, &cfg, p, m).0.k, p.k);
        // `x * w + x` (square): A is read again by the epilogue.
        ir.epilogue = vec![gemm_core::EpOp::Acc, gemm_core::EpOp::Param(ir.a), gemm_core::EpOp::Add];
        assert_eq!(check_problem(&ir, Backend::Cuda, &cfg, p, m), (p, m));
    }

    #[test]
    fn shrink_keeps_the_remainder_and_whole_tiles() {
        // 64-row tiles: steps of 64; 4096 = 64 whole tiles, 4095 one ragged.
        assert_eq!(shrink(4096, 64, 2), 128);
        assert_eq!(shrink(4095, 64, 2), 128 + 4095 % 64);
        // A 192-wide tile steps by 192 (a multiple of 16); 1-wide (gemv K) by 16.
        assert_eq!(shrink(12288, 192, 2), 384);
        assert_eq!(shrink(4099, 1, 40), 48 + 3);
        // Small extents stay.
        assert_eq!(shrink(100, 64, 2), 100);
        assert_eq!(shrink(7, 0, 2), 7);
    }

    /// Every planned config of the H200 and the OpenCL CPU target, f16 and tf32, at LLM
    /// and odd shapes: the check's shape keeps the call's build variant (so the compile
    /// the call runs is the one checked), is no larger, keeps a persistent grid's loop
    /// over tiles (on a smaller grid), and wraps the ring; at 4096³ it is small enough
    /// for the full host reference.
    #[test]
    fn check_shapes_keep_the_variant_and_shrink_the_llm_ones() {
        let targets = Targets::parse(BUILTIN_TARGETS).unwrap();
        for (name, backend, units) in [("h200", Backend::Cuda, 132), ("opencl_cpu", Backend::Opencl, 2)] {
            for (dtype, acc) in [(DType::F16, AccMode::F32), (DType::F32, AccMode::Tf32)] {
                let ir = GemmIr::matmul("t", dtype, acc, Layout::RowMajor, Layout::ColMajor);
                check_shapes(targets.get(name).unwrap(), backend, &ir, Machine { units });
            }
        }
    }

    fn check_shapes(t: &gemm_core::TargetSpec, backend: Backend, ir: &GemmIr, machine: Machine) {
        let plan = plan_target(ir, t, &TuneSpace::default());
        let mut shrunk = 0;
        for cfg in &plan.configs {
            for p in [
                Problem::new(16, 12288, 4096),
                Problem::new(1, 12288, 4096),
                Problem::new(4095, 4097, 4099),
                Problem::new(7, 13, 1),
                Problem::new(4096, 4096, 4096),
            ] {
                if cfg.family().accepts(cfg, ir, p).is_err() {
                    continue;
                }
                let (s, at) = check_problem(ir, backend, cfg, p, machine);
                assert_eq!(
                    describe_at(ir, backend, cfg, s),
                    describe_at(ir, backend, cfg, p),
                    "{cfg} {p:?}"
                );
                assert!(s.m <= p.m && s.n <= p.n && s.k <= p.k, "{cfg} {p:?} -> {s:?}");
                let ring = cfg.family().resources(cfg, ir.ab_dtype).ring_k as usize;
                assert!(s.k == p.k || s.k > ring, "{cfg} {p:?} -> {s:?}: the ring does not wrap");
                let blocks = |p: Problem, m: Machine| -> usize {
                    cfg.launch(ir, p, m).grid.iter().map(|&g| g as usize).product()
                };
                let (bm, bn) = cfg.block_mn();
                let tiles = |p: Problem| p.m.div_ceil(bm as usize) * p.n.div_ceil(bn as usize);
                if blocks(p, machine) < tiles(p) {
                    assert!(
                        blocks(s, at) < tiles(s),
                        "{cfg} {p:?} -> {s:?} on {at:?}: a persistent grid's tile loop"
                    );
                    // (A pair of blocks in a cluster takes two tiles at a time: stream-K has none.)
                    let unclustered = matches!(cfg, TileConfig::Wgmma(w) if w.cluster() == 1);
                    if s != p && tiles(s) >= 3 && unclustered {
                        assert!(
                            !tiles(s).is_multiple_of(blocks(s, at)),
                            "{cfg} {p:?} -> {s:?} on {at:?}: the check's grid divides its tiles (no stream-K wave)"
                        );
                    }
                } else {
                    assert_eq!(at, machine, "{cfg} {p:?}: not persistent, the call's grid");
                }
                if p == Problem::new(4096, 4096, 4096) && s != p {
                    assert!(
                        crate::tune::verify::full_mode(s.m, s.n, s.k, crate::tune::verify::FULL_MACS),
                        "{cfg} {p:?} -> {s:?}: not checked against the full reference"
                    );
                }
                if p.n == 12288 && s != p {
                    shrunk += 1;
                    // A quarter of the work or less; deep rings (split-K, deep k-tiles)
                    // keep what wraps them, at most twice the ring and less than K.
                    assert!(s.k < p.k, "{cfg} {p:?} -> {s:?}");
                    assert!(s.n * s.k * 4 <= p.n * p.k || s.k <= 2 * ring, "{cfg} {p:?} -> {s:?}");
                }
            }
        }
        assert!(
            shrunk >= plan.configs.len(),
            "{}: {shrunk} LLM-shape checks shrunk",
            t.name
        );
    }
}
