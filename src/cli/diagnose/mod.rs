//! `crossgemm diagnose`: the seeds' order of diagnosis, automated for one shape.
//! 1. correctness of the tuned winner against the host reference;
//! 2. the winner beside its load-only, no-epilogue and compute-only variants, each as a
//!    share of the full kernel's time, and the full kernel against the device's memory
//!    and compute roofs;
//! 3. the winner's stage and warp neighbours;
//! 4. other launch orders (GROUP_M);
//!
//! then a short verdict with the numbers behind it, read above the time an empty launch
//! takes between the same events.

use super::check::{sampled_error, sampled_reference};
use super::operands::Inputs;
use super::{open_device, CliResult, ConfigArgs, Dtype, KernelEntry, ProblemArgs};
use crossgemm::bench::{
    copy_bytes_for, copy_gbps, empty_launch_timed, prepare_config, run_prepared, time_prepared, Prepared, Timer,
    Variant,
};
use crossgemm::reference::Sampled;
use crossgemm::tune::tune_with;
use crossgemm::untyped::launch_with;
use crossgemm::TileConfig;
use crossgemm::{Device, Element, GemmError, Matrix, TuneOptions};
use serde_json::json;
use std::path::PathBuf;

mod verdict;
pub use verdict::{verdict, Timings, Verdict};

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
        Dtype::F32 | Dtype::Tf32 | Dtype::Tf32x3 => diagnose::<f32>(entry, &dev, a, &opts),
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
    let inp = Inputs::<T>::for_entry(dev, (m, n, k), entry)?;
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
        // What every time above holds besides the kernel (a failed measurement leaves
        // the shares of the event times, as before there was one).
        launch_floor: empty_launch_timed(dev, &timer).ok().map(|s| s.median_us),
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
                "launch_floor_us": t.launch_floor,
                "under_tool": super::under_tool::detected(),
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
    // Shares of the time above the launch floor, as the verdict reads them.
    let floor = d.timings.floor();
    let above = d.timings.above_floor(d.timings.full);
    let share = |us: f64| 100.0 * d.timings.above_floor(us) / above;
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
            share(*us),
            p.config,
            occ(p)
        ),
        Err(e) => format!("  {:<16} {:>10}     -    {} ({e})", p.what, "failed", p.config),
    };
    if floor > 0.0 {
        println!("2. variants (share of the full kernel's {above:.1} us above an empty launch's {floor:.1}):");
    } else {
        println!("2. variants (share of the full kernel):");
    }
    for p in &d.variants {
        println!("{}", line(p));
    }
    if let Some(r) = d.timings.memory_roof {
        println!(
            "  memory roof      {r:>10.1} us  {:>5.0}%  ({:.0} GB/s copy)",
            100.0 * r / above,
            d.copy_gbps.unwrap_or(0.0)
        );
    }
    if let Some(r) = d.timings.compute_roof {
        println!(
            "  compute roof     {r:>10.1} us  {:>5.0}%  ({} TFLOP/s peak)",
            100.0 * r / above,
            d.peak_tflops.unwrap_or(0)
        );
    }
    if let Some(f) = d.timings.launch_floor {
        println!(
            "  empty launch     {f:>10.1} us  {:>5.0}%  of the full kernel's event time (timed as the kernels are: the launch and the events, no work{})",
            100.0 * f / d.timings.full,
            if floor > 0.0 { "" } else { "; over half the time, so not taken off" }
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
        let entry = KernelEntry::find(crate::KERNELS, Dtype::F32, crate::cli::Epilogue::BiasRelu).unwrap();
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
}
