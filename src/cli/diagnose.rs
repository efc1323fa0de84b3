//! `crossgemm diagnose`: the seeds' order of diagnosis, automated for one shape.
//! 1. correctness of the tuned winner against the host reference;
//! 2. the winner beside its load-only, no-epilogue and compute-only variants, each as a
//!    share of the full kernel's time, and the full kernel against the device's memory
//!    and compute roofs;
//! 3. the winner's stage and warp neighbours;
//! 4. other launch orders (GROUP_M);
//!
//! then a short verdict with the numbers behind it.

use super::check::{sampled_error, sampled_reference};
use super::operands::Inputs;
use super::{open_device, CliResult, ConfigArgs, Dtype, Epilogue, KernelEntry, ProblemArgs};
use crossgemm::bench::{
    copy_bytes_for, copy_gbps, prepare_config, run_prepared, time_prepared, Prepared, Timer, Variant,
};
use crossgemm::reference::Sampled;
use crossgemm::tune::tune_with;
use crossgemm::untyped::launch_with;
use crossgemm::TileConfig;
use crossgemm::{Device, Element, GemmError, Matrix, TuneOptions};
use serde_json::json;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct DiagnoseArgs {
    #[command(flatten)]
    p: ProblemArgs,
    #[command(flatten)]
    configs: ConfigArgs,
    /// Timed runs per measurement (median; at least 10).
    #[arg(long, default_value_t = 20)]
    runs: usize,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// One timed config or variant.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    /// What was changed, e.g. "stages 3" or "load_only".
    pub what: String,
    /// The config, as text.
    pub config: String,
    /// Median µs, or why there is none.
    pub us: Result<f64, String>,
    /// Blocks per multiprocessor and what limits them ([`occupancy`]), where known.
    pub occupancy: Option<(u32, &'static str)>,
}

/// Multiprocessor-wide limits NVIDIA GPUs since Volta share: threads and resident blocks.
const SM_THREADS: u32 = 2048;
const SM_BLOCKS: u32 = 32;

/// How many blocks of a config fit on one multiprocessor, and which resource limits it:
/// an estimate from the target's registers per SM (allocated in steps of 8 per thread),
/// its opt-in shared memory (dynamic shared memory only), and 2048 threads. `None`
/// without a register count (OpenCL kernels).
pub fn occupancy(
    threads: u32,
    smem_bytes: u32,
    registers: Option<u32>,
    target: &crossgemm::TargetSpec,
) -> Option<(u32, &'static str)> {
    let regs = registers?;
    let threads = threads.max(1);
    let by_regs = target.regs_per_sm / (regs.div_ceil(8) * 8 * threads).max(1);
    let by_smem = target.smem_per_block_optin.checked_div(smem_bytes).unwrap_or(u32::MAX);
    [
        (SM_THREADS / threads, "threads"),
        (by_regs, "registers"),
        (by_smem, "shared memory"),
        (SM_BLOCKS, "block slots"),
    ]
    .into_iter()
    .min_by_key(|x| x.0)
}

/// What the numbers say, with the numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// "memory-bound", "store-bound", "compute-bound", "pipeline-bound", "raster-bound" or
    /// "balanced".
    pub kind: &'static str,
    /// One line per finding, most important first.
    pub reasons: Vec<String>,
}

/// The inputs of the verdict, µs (`None`: not measured).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timings {
    pub full: f64,
    pub load_only: Option<f64>,
    pub no_epilogue: Option<f64>,
    pub compute_only: Option<f64>,
    /// The kernel without writing its output ([`Variant::NoStore`]).
    pub no_store: Option<f64>,
    /// Bytes of A, B and C (and bias) over the copy bandwidth.
    pub memory_roof: Option<f64>,
    /// 2·M·N·K over the datasheet peak.
    pub compute_roof: Option<f64>,
    /// The fastest stage/warp neighbour: (what, µs).
    pub best_neighbour: Option<(String, f64)>,
    /// The fastest other launch order: (what, µs).
    pub best_order: Option<(String, f64)>,
    /// Blocks per SM of full, load-only and compute-only, where known.
    pub occupancy: [Option<u32>; 3],
}

/// A faster alternative must win by this much to count (timing noise is a few %).
const MARGIN: f64 = 1.05;

/// The verdict: which of the seeds' bottlenecks the timings point at.
///
/// - raster-bound: another launch order (GROUP_M) is faster by more than the margin;
/// - memory-bound: the full kernel runs within 1.25x of the memory roof;
/// - store-bound: writing the output takes a quarter of the time or more (the full
///   kernel against no-store); the load-only and compute-only variants both keep the
///   stores, so this is asked before their shares;
/// - memory-bound too: moving the data alone (load-only) takes 80 % of the time;
/// - compute-bound: the math alone (compute-only) takes 80 % of its time;
/// - pipeline-bound: loads and math each take well under the full time (their sum is
///   not hidden: full > 1.2x the larger), or a deeper/shallower pipeline is faster.
///
/// A load-only time under 90 % of the memory roof cannot have moved the data (the L2 is
/// flushed before every run): the variant lost loads, as the decode family's did when
/// ptxas deleted loads whose words reached no store. It is reported and not used.
pub fn verdict(t: &Timings) -> Verdict {
    let mut reasons = Vec::new();
    let lost_loads = matches!((t.load_only, t.memory_roof), (Some(l), Some(r)) if l < 0.9 * r);
    if lost_loads {
        reasons.push(format!(
            "the load-only variant took {:.1} us, under the memory roof ({:.1} us): it did not do all its loads (a compiler may have removed loads it found dead), so its time is left out",
            t.load_only.unwrap_or(0.0),
            t.memory_roof.unwrap_or(0.0)
        ));
    }
    let t = &Timings {
        load_only: t.load_only.filter(|_| !lost_loads),
        ..t.clone()
    };
    let share = |v: Option<f64>| v.map(|v| v / t.full);
    let mut kind = "balanced";
    if let Some((what, us)) = &t.best_order {
        if us * MARGIN < t.full {
            kind = "raster-bound";
            reasons.push(format!(
                "launch order {what} takes {us:.1} us vs {:.1} us ({:.0}% faster): blocks sharing operands do not run together",
                t.full,
                (t.full / us - 1.0) * 100.0
            ));
        }
    }
    let mem_roof_share = t.memory_roof.map(|r| t.full / r);
    let load = share(t.load_only);
    let comp = share(t.compute_only);
    let store_cost = t.no_store.map(|ns| (t.full - ns) / t.full);
    if kind == "balanced" {
        if mem_roof_share.is_some_and(|s| s <= 1.25) {
            kind = "memory-bound";
        } else if store_cost.is_some_and(|c| c >= 0.25) {
            kind = "store-bound";
        } else if load.is_some_and(|s| s >= 0.8) {
            kind = "memory-bound";
        } else if comp.is_some_and(|s| s >= 0.8) {
            kind = "compute-bound";
        } else if let (Some(l), Some(c)) = (t.load_only, t.compute_only) {
            if t.full > 1.2 * l.max(c) {
                kind = "pipeline-bound";
            }
        }
        if let Some((what, us)) = &t.best_neighbour {
            if us * MARGIN < t.full && kind != "memory-bound" {
                kind = "pipeline-bound";
                reasons.push(format!(
                    "neighbour {what} takes {us:.1} us vs {:.1} us: the tuner's winner is not the best pipeline shape",
                    t.full
                ));
            }
        }
    }
    if let Some(s) = mem_roof_share {
        reasons.push(format!(
            "full kernel {:.1} us = {s:.2}x the memory roof ({:.1} us)",
            t.full,
            t.memory_roof.unwrap_or(0.0)
        ));
    }
    if let Some(r) = t.compute_roof {
        reasons.push(format!(
            "full kernel = {:.2}x the compute roof ({r:.1} us, {:.0}% of peak)",
            t.full / r,
            100.0 * r / t.full
        ));
    }
    if let Some(s) = load {
        let mut r = format!("load-only = {:.0}% of the full time", s * 100.0);
        // Data movement that dominates far from the bandwidth roof is latency-bound
        // (too few loads in flight), which more bandwidth would not fix.
        if let (Some(l), Some(roof)) = (t.load_only, t.memory_roof) {
            if s >= 0.5 && l > 3.0 * roof {
                r.push_str(&format!(
                    ", yet moving the data alone runs at {:.0}% of copy bandwidth: latency-bound loads",
                    100.0 * roof / l
                ));
            }
        }
        reasons.push(r);
    }
    if let Some(s) = comp {
        reasons.push(format!("compute-only = {:.0}% of the full time", s * 100.0));
    }
    // What a part of the kernel costs: the full time against the variant without it.
    let cost = |what: &str, without: f64, said: &str| {
        let c = (t.full - without) / t.full;
        if c.abs() < 0.01 {
            format!("{what} costs nothing measurable ({without:.1} us {said})")
        } else {
            format!("{what} costs {:.0}% ({without:.1} us {said})", c * 100.0)
        }
    };
    if let Some(ns) = t.no_store {
        reasons.push(cost(
            "writing the output",
            ns,
            "without the stores; load-only and compute-only keep them",
        ));
    }
    if let Some(ne) = t.no_epilogue {
        reasons.push(cost("the fused epilogue", ne, "without it"));
    }
    // A variant with fewer registers may fit more blocks per SM than the full kernel:
    // its time is then a lower bound for that part inside the full kernel.
    if let [Some(f), l, c] = t.occupancy {
        if l.is_some_and(|l| l > f) || c.is_some_and(|c| c > f) {
            let n = |x: Option<u32>| x.map_or("?".to_string(), |x| x.to_string());
            reasons.push(format!(
                "the variants fit more blocks per SM than the full kernel (load-only {}, compute-only {}, full {f}): their times are lower bounds for those parts",
                n(l),
                n(c)
            ));
        }
    }
    if kind == "pipeline-bound" && !reasons.iter().any(|r| r.starts_with("neighbour")) {
        if let (Some(l), Some(c)) = (t.load_only, t.compute_only) {
            reasons.insert(
                0,
                format!(
                    "loads ({l:.1} us) and math ({c:.1} us) overlap poorly: the full kernel takes {:.1} us",
                    t.full
                ),
            );
        }
    }
    Verdict { kind, reasons }
}

/// A config's neighbours, as its family names them (pipeline depth and warp grid for the
/// tensor-core families, vector width and thread grid for SIMT), on the same block tile.
pub fn neighbours(c: &TileConfig) -> Vec<(String, TileConfig)> {
    c.family().neighbours(c)
}

/// The same config with other launch orders.
pub fn orders(c: &TileConfig) -> Vec<(String, TileConfig)> {
    let family = c.family();
    [1, 4, 8, 16, 32]
        .into_iter()
        .filter(|&g| g != c.group_m())
        .map(|g| (format!("GROUP_M {g}"), family.with_group_m(c, g)))
        .collect()
}

/// How the output maps onto blocks and the machine: blocks (output tiles times the split
/// of K), waves over the compute units (at one block per unit, the tiles' usual
/// occupancy), and the share of the tile area that is padding past the matrix edge (work
/// done for nothing; small M shows here).
pub fn tiling(c: &TileConfig, (m, n): (usize, usize), units: u32) -> String {
    let (bm, bn) = c.block_mn();
    let (bm, bn) = (bm as usize, bn as usize);
    let tiles = m.div_ceil(bm) * n.div_ceil(bn);
    let split = c.k_split().max(1) as usize;
    let blocks = tiles * split;
    let padding = 1.0 - (m * n) as f64 / (tiles * bm * bn) as f64;
    let what = if split > 1 {
        format!("{blocks} blocks ({tiles} tiles of {bm}x{bn}, split {split} ways along K)")
    } else {
        format!("{blocks} blocks of {bm}x{bn}")
    };
    format!(
        "{what} on {units} compute units ({:.2} waves at one block per unit); {:.0}% of the tile area is padding",
        blocks as f64 / units.max(1) as f64,
        padding * 100.0
    )
}

pub fn run(kernels: &'static [KernelEntry], a: &DiagnoseArgs, cache_dir: Option<PathBuf>) -> CliResult {
    let entry = a.p.kernel(kernels)?;
    let dev = open_device(a.p.device.as_deref(), "diagnose")?;
    let opts = super::tune_options(cache_dir, None, &a.configs);
    let d = match a.p.dtype {
        Dtype::F16 => diagnose::<crossgemm::f16>(entry, &dev, a, &opts),
        Dtype::Bf16 => diagnose::<crossgemm::bf16>(entry, &dev, a, &opts),
        Dtype::F32 | Dtype::Tf32 => diagnose::<f32>(entry, &dev, a, &opts),
    }
    .map_err(|e| e.to_string())?;
    print(&d, a);
    if d.error > ERR_LIMIT {
        return Err(format!(
            "the tuned kernel is wrong: max rel err {:.2e} against the host reference",
            d.error
        ));
    }
    Ok(())
}

/// Largest error against the reference a correct kernel may show here (f16/bf16 outputs
/// with K up to ~10^4 stay well below it; a wrong tile or index shows O(1)).
const ERR_LIMIT: f64 = 5e-2;

struct Diagnosis {
    device: String,
    config: String,
    error: f64,
    variants: Vec<Probe>,
    neighbours: Vec<Probe>,
    orders: Vec<Probe>,
    timings: Timings,
    copy_gbps: Option<f64>,
    peak_tflops: Option<u32>,
    verdict: Verdict,
}

fn diagnose<T: Element>(
    entry: &KernelEntry,
    dev: &Device,
    a: &DiagnoseArgs,
    opts: &TuneOptions,
) -> Result<Diagnosis, GemmError> {
    let (m, n, k) = a.p.shape;
    let spec = entry.spec;
    let inp = Inputs::<T>::new(dev, (m, n, k), entry.epilogue != Epilogue::None)?;
    let mut out = Matrix::<T>::zeros(dev, m, n)?;
    let args = inp.args();
    let tk = spec.target_for(dev)?;
    let timer = Timer::new(dev, Timer::flush_bytes_for(dev, tk.spec().l2_bytes), 3, a.runs)?;

    // 1. Correctness first: exactly the config reported, into a NaN-filled output, vs
    //    the reference.
    let report = tune_with(spec, &args, out.__out(), opts)?;
    let winner = report.best;
    let reference = sampled_reference(spec, &inp, (m, n, k));
    let ((), error) = checked(&mut out, &reference, |o| launch_with(spec, &winner, &args, o.__out()))?;
    let mut d = Diagnosis {
        device: dev.info().to_string(),
        config: winner.to_string(),
        error,
        variants: Vec::new(),
        neighbours: Vec::new(),
        orders: Vec::new(),
        timings: Timings::default(),
        copy_gbps: None,
        peak_tflops: tk.spec().peak_tflops.get(a.p.dtype.name()).copied(),
        verdict: Verdict {
            kind: "incorrect",
            reasons: vec![format!("max rel err {error:.2e} against the host reference")],
        },
    };
    if error > ERR_LIMIT {
        return Ok(d);
    }

    // 2-4. The variants (as shares of the full kernel and of the roofs), the stage/warp
    //      neighbours and the launch orders: each compiled and, where it computes the
    //      GEMM, checked on its own; then all timed in the same rounds, so that their
    //      shares of each other do not carry the clock's drift between them.
    let first_line = |e: GemmError| e.to_string().lines().next().unwrap_or("").to_string();
    let mut probes: Vec<(usize, String, TileConfig, Variant)> = Variant::ALL
        .iter()
        .map(|&v| (0, v.name().to_string(), winner, v))
        .collect();
    probes.extend(
        neighbours(&winner)
            .into_iter()
            .map(|(what, c)| (1, what, c, Variant::Full)),
    );
    probes.extend(orders(&winner).into_iter().map(|(what, c)| (2, what, c, Variant::Full)));
    let mut ready: Vec<Result<Prepared, String>> = Vec::new();
    for (_, _, cfg, v) in &probes {
        let p = prepare_config(spec, &args, out.__out(), cfg, *v).map_err(first_line);
        // A neighbour that is fast but wrong must not look like a better config: the
        // output of each one that computes the GEMM is judged on its own (NaN-filled
        // before it runs).
        let p = match p {
            Ok(p) if *v == Variant::Full => {
                match checked(&mut out, &reference, |o| run_prepared(spec, &args, o.__out(), &p)) {
                    Ok(((), e)) if e > ERR_LIMIT => Err(format!("wrong result (max rel err {e:.2e})")),
                    Ok(_) => Ok(p),
                    Err(e) => Err(first_line(e)),
                }
            }
            other => other,
        };
        ready.push(p);
    }
    let timed: Vec<&Prepared> = ready.iter().filter_map(|p| p.as_ref().ok()).collect();
    let mut runs = time_prepared(spec, &args, out.__out(), &timed, &timer)?.into_iter();
    for ((group, what, cfg, _), p) in probes.into_iter().zip(ready) {
        let occ = p
            .as_ref()
            .ok()
            .and_then(|p| occupancy(p.threads(), p.smem_bytes(), p.registers().map(|x| x.0), tk.spec()));
        let us = p.map(|_| runs.next().expect("a timing for every prepared probe").sample.median_us);
        let probe = Probe {
            what,
            config: cfg.to_string(),
            us,
            occupancy: occ,
        };
        [&mut d.variants, &mut d.neighbours, &mut d.orders][group].push(probe);
    }
    let full = match &d.variants[0].us {
        Ok(us) => *us,
        Err(e) => return Err(GemmError::Unsupported(format!("the winner could not be timed: {e}"))),
    };
    let by = |v: &str| d.variants.iter().find(|p| p.what == v).and_then(|p| p.us.clone().ok());
    d.copy_gbps = copy_gbps(dev, copy_bytes_for(dev, tk.spec().l2_bytes)).ok();
    let elem = std::mem::size_of::<T>() as f64;
    let bytes = elem * (m * k + k * n + m * n + if args.len() > 2 { n } else { 0 }) as f64;
    let occ = |v: Variant| {
        d.variants
            .iter()
            .find(|p| p.what == v.name())
            .and_then(|p| p.occupancy.map(|o| o.0))
    };
    d.timings = Timings {
        occupancy: [occ(Variant::Full), occ(Variant::LoadOnly), occ(Variant::ComputeOnly)],
        full,
        load_only: by(Variant::LoadOnly.name()),
        no_epilogue: by(Variant::NoEpilogue.name()),
        compute_only: by(Variant::ComputeOnly.name()),
        no_store: by(Variant::NoStore.name()),
        memory_roof: d.copy_gbps.map(|g| bytes / (g * 1e9) * 1e6),
        compute_roof: d
            .peak_tflops
            .map(|p| 2.0 * m as f64 * n as f64 * k as f64 / (p as f64 * 1e12) * 1e6),
        ..Timings::default()
    };

    let fastest = |ps: &[Probe]| {
        ps.iter()
            .filter_map(|p| p.us.as_ref().ok().map(|&us| (p.what.clone(), us)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    };
    d.timings.best_neighbour = fastest(&d.neighbours);
    d.timings.best_order = fastest(&d.orders);
    d.verdict = verdict(&d.timings);
    d.verdict
        .reasons
        .push(tiling(&winner, (m, n), dev.info().compute_units));
    Ok(d)
}

/// Fills `out` with NaN, runs `run` (which writes it), and returns what `run` returned
/// and the max rel err of the output against `reference`: an element `run` leaves
/// unwritten reads as an infinite error, never as an earlier run's value.
fn checked<T: Element, R>(
    out: &mut Matrix<T>,
    reference: &Sampled,
    run: impl FnOnce(&mut Matrix<T>) -> Result<R, GemmError>,
) -> Result<(R, f64), GemmError> {
    let nan = vec![T::from_f32(f32::NAN); out.rows() * out.cols()];
    out.upload(&nan)?;
    let r = run(out)?;
    let got: Vec<f32> = out.to_host()?.into_iter().map(T::to_f32).collect();
    Ok((r, sampled_error(reference, &got, out.cols())))
}

fn print(d: &Diagnosis, a: &DiagnoseArgs) {
    let (m, n, k) = a.p.shape;
    let probes = |ps: &[Probe]| -> Vec<serde_json::Value> {
        ps.iter()
            .map(|p| {
                json!({
                    "what": p.what,
                    "config": p.config,
                    "us": p.us.as_ref().ok(),
                    "error": p.us.as_ref().err(),
                    "blocks_per_sm": p.occupancy.map(|o| o.0),
                    "occupancy_limit": p.occupancy.map(|o| o.1),
                })
            })
            .collect()
    };
    if a.json {
        let t = &d.timings;
        println!(
            "{}",
            json!({
                "shape": format!("{m}x{n}x{k}"),
                "dtype": a.p.dtype.name(),
                "epilogue": a.p.epilogue.name(),
                "device": d.device,
                "config": d.config,
                "max_rel_err": d.error,
                "variants": probes(&d.variants),
                "neighbours": probes(&d.neighbours),
                "orders": probes(&d.orders),
                "copy_gbps": d.copy_gbps,
                "peak_tflops": d.peak_tflops,
                "memory_roof_us": t.memory_roof,
                "compute_roof_us": t.compute_roof,
                "verdict": d.verdict.kind,
                "reasons": d.verdict.reasons,
            })
        );
        return;
    }
    println!(
        "{m}x{n}x{k} {} {} on {}\nwinner: {}",
        a.p.dtype.name(),
        a.p.epilogue.name(),
        d.device,
        d.config
    );
    println!(
        "1. correctness: max rel err {:.2e} against the host reference (sampled)",
        d.error
    );
    if d.variants.is_empty() {
        println!("verdict: {}", d.verdict.kind);
        return;
    }
    let full = d.timings.full;
    let occ = |p: &Probe| {
        p.occupancy
            .map(|(n, why)| format!(" ({n} blocks/SM, {why})"))
            .unwrap_or_default()
    };
    let line = |p: &Probe| match &p.us {
        Ok(us) => format!(
            "  {:<16} {:>10.1} us  {:>5.0}%  {}{}",
            p.what,
            us,
            100.0 * us / full,
            p.config,
            occ(p)
        ),
        Err(e) => format!("  {:<16} {:>10}     -    {} ({e})", p.what, "failed", p.config),
    };
    println!("2. variants (share of the full kernel):");
    for p in &d.variants {
        println!("{}", line(p));
    }
    if let Some(r) = d.timings.memory_roof {
        println!(
            "  memory roof      {r:>10.1} us  {:>5.0}%  ({:.0} GB/s copy)",
            100.0 * r / full,
            d.copy_gbps.unwrap_or(0.0)
        );
    }
    if let Some(r) = d.timings.compute_roof {
        println!(
            "  compute roof     {r:>10.1} us  {:>5.0}%  ({} TFLOP/s peak)",
            100.0 * r / full,
            d.peak_tflops.unwrap_or(0)
        );
    }
    println!("3. stage/warp neighbours:");
    for p in &d.neighbours {
        println!("{}", line(p));
    }
    println!("4. launch orders:");
    for p in &d.orders {
        println!("{}", line(p));
    }
    println!("verdict: {}", d.verdict.kind);
    for r in &d.verdict.reasons {
        println!("  - {r}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crossgemm::MmaTile;

    fn mma() -> TileConfig {
        TileConfig::Mma(MmaTile {
            block_m: 128,
            block_n: 256,
            block_k: 64,
            warps_m: 2,
            warps_n: 4,
            stages: 2,
            group_m: 8,
        })
    }

    /// A checked run is judged on what it wrote: a run that writes nothing after a
    /// correct one is an infinite error, not the earlier run's zero.
    #[test]
    fn checked_runs_start_from_nan() {
        let dev = Device::host();
        let entry = KernelEntry::find(crate::KERNELS, Dtype::F32, Epilogue::BiasRelu).unwrap();
        let (m, n, k) = (9, 7, 5);
        let inp = Inputs::<f32>::new(&dev, (m, n, k), true).unwrap();
        let args = inp.args();
        let reference = sampled_reference(entry.spec, &inp, (m, n, k));
        let mut out = Matrix::<f32>::zeros(&dev, m, n).unwrap();
        // The host device runs the reference whatever the config.
        let cfg = mma();
        let ((), e) = checked(&mut out, &reference, |o| {
            launch_with(entry.spec, &cfg, &args, o.__out())
        })
        .unwrap();
        assert_eq!(e, 0.0);
        let ((), e) = checked(&mut out, &reference, |_| Ok(())).unwrap();
        assert_eq!(e, f64::INFINITY, "a run that writes nothing");
    }

    #[test]
    fn neighbours_keep_the_block_tile() {
        let n = neighbours(&mma());
        let names: Vec<&str> = n.iter().map(|(w, _)| w.as_str()).collect();
        assert!(names.contains(&"stages 3"), "{names:?}");
        assert!(!names.contains(&"stages 1"), "{names:?}");
        assert!(
            names.contains(&"warps 4x4") && names.contains(&"warps 1x4"),
            "{names:?}"
        );
        for (_, c) in &n {
            let TileConfig::Mma(t) = c else { panic!() };
            assert_eq!((t.block_m, t.block_n, t.block_k), (128, 256, 64));
            assert_ne!(c, &mma());
        }
        let o = orders(&mma());
        assert_eq!(o.len(), 4);
        assert!(o.iter().all(|(_, c)| matches!(c, TileConfig::Mma(t) if t.group_m != 8)));
    }

    #[test]
    fn occupancy_names_the_limit() {
        use crossgemm::{Targets, BUILTIN_TARGETS};
        let t = Targets::parse(BUILTIN_TARGETS).unwrap();
        let h200 = t.get("h200").unwrap();
        // 256 threads at 232 registers: 59392 registers a block, one fits in 65536.
        assert_eq!(occupancy(256, 98304, Some(232), h200), Some((1, "registers")));
        // 128 threads at 40 registers and 160 KiB of shared memory: shared memory limits.
        assert_eq!(occupancy(128, 160 << 10, Some(40), h200), Some((1, "shared memory")));
        assert_eq!(occupancy(1024, 0, Some(16), h200), Some((2, "threads")));
        assert_eq!(occupancy(32, 0, Some(16), h200), Some((32, "block slots")));
        assert_eq!(occupancy(256, 0, None, h200), None);
    }

    #[test]
    fn tiling_counts_blocks_and_padding() {
        let t = tiling(&mma(), (16, 4096), 132);
        assert!(t.starts_with("16 blocks of 128x256"), "{t}");
        assert!(
            t.contains("0.12 waves") && t.contains("88% of the tile area is padding"),
            "{t}"
        );
        assert!(tiling(&mma(), (4096, 4096), 132).contains("0% of the tile"));
        // Split-K: the blocks are the tiles times the split.
        let split = crossgemm::WgmmaTile {
            ksplit: 2,
            ..crossgemm::WgmmaTile::new(64, 128, 8, 1)
        };
        let t = tiling(&crossgemm::TileConfig::Wgmma(split), (16, 4096), 132);
        assert!(
            t.starts_with("64 blocks (32 tiles of 64x128, split 2 ways along K)") && t.contains("0.48 waves"),
            "{t}"
        );
        assert!(t.contains("75% of the tile area is padding"), "{t}");
    }

    #[test]
    fn verdicts() {
        let base = Timings {
            full: 100.0,
            load_only: Some(40.0),
            no_epilogue: Some(98.0),
            compute_only: Some(50.0),
            no_store: Some(95.0),
            memory_roof: Some(20.0),
            compute_roof: Some(30.0),
            best_neighbour: Some(("stages 3".into(), 99.0)),
            best_order: Some(("GROUP_M 16".into(), 99.0)),
            occupancy: [Some(1), Some(1), Some(1)],
        };
        // Loads 40 + math 50 both far below 100: they do not overlap.
        assert_eq!(verdict(&base).kind, "pipeline-bound");
        let mem = Timings {
            load_only: Some(90.0),
            ..base.clone()
        };
        assert_eq!(verdict(&mem).kind, "memory-bound");
        let at_roof = Timings {
            memory_roof: Some(90.0),
            ..base.clone()
        };
        assert_eq!(verdict(&at_roof).kind, "memory-bound");
        let comp = Timings {
            compute_only: Some(85.0),
            ..base.clone()
        };
        assert_eq!(verdict(&comp).kind, "compute-bound");
        let raster = Timings {
            best_order: Some(("GROUP_M 1".into(), 80.0)),
            ..comp.clone()
        };
        let v = verdict(&raster);
        assert_eq!(v.kind, "raster-bound");
        assert!(
            v.reasons[0].contains("GROUP_M 1") && v.reasons[0].contains("25% faster"),
            "{v:?}"
        );
        let neighbour = Timings {
            best_neighbour: Some(("stages 3".into(), 70.0)),
            ..comp
        };
        assert_eq!(verdict(&neighbour).kind, "pipeline-bound");
        let v = verdict(&base);
        assert!(v.reasons.iter().any(|r| r.contains("epilogue costs 2%")), "{v:?}");
        assert!(
            v.reasons.iter().any(|r| r.contains("writing the output costs 5%")),
            "{v:?}"
        );
        assert!(!v.reasons.iter().any(|r| r.contains("blocks per SM")), "{v:?}");
        // 4096x4096x128 (session p): load-only 87% and compute-only 90% of the full time,
        // both with the stores, which alone take a third of it: store-bound, not memory.
        let short_k = Timings {
            load_only: Some(87.0),
            compute_only: Some(90.0),
            no_store: Some(66.0),
            ..base.clone()
        };
        let sk = verdict(&short_k);
        assert_eq!(sk.kind, "store-bound", "{sk:?}");
        assert!(
            sk.reasons.iter().any(|r| r.contains("writing the output costs 34%")),
            "{sk:?}"
        );
        // Within 1.25x of the memory roof it is memory-bound, stores or not.
        assert_eq!(
            verdict(&Timings {
                memory_roof: Some(85.0),
                ..short_k
            })
            .kind,
            "memory-bound"
        );
        let occ = Timings {
            occupancy: [Some(1), Some(4), Some(1)],
            ..base.clone()
        };
        let v = verdict(&occ);
        assert!(
            v.reasons
                .iter()
                .any(|r| r.contains("load-only 4, compute-only 1, full 1")),
            "{v:?}"
        );
        let slow_loads = Timings {
            load_only: Some(90.0),
            memory_roof: Some(9.0),
            ..base.clone()
        };
        let v = verdict(&slow_loads);
        assert!(v.reasons.iter().any(|r| r.contains("10% of copy bandwidth")), "{v:?}");
        // The decode family's load-only variant before its sink was fixed: 3.6 us against
        // a roof of 8.2 at 16x4096x4096, in a 15.5 us kernel. It said "pipeline-bound".
        let lost = Timings {
            full: 15.5,
            load_only: Some(3.6),
            compute_only: Some(6.0),
            memory_roof: Some(8.2),
            ..base.clone()
        };
        let v = verdict(&lost);
        assert!(v.reasons[0].contains("did not do all its loads"), "{v:?}");
        assert_ne!(v.kind, "pipeline-bound", "{v:?}");
        assert!(!v.reasons.iter().any(|r| r.starts_with("load-only =")), "{v:?}");
        let bare = verdict(&Timings {
            full: 10.0,
            ..Timings::default()
        });
        assert_eq!(bare.kind, "balanced");
        assert!(bare.reasons.is_empty());
    }
}
