//! `crossgemm tune`: random operands on the chosen device, then the tuner (or, with
//! `CROSSGEMM_TUNE=cached`, only the lookup a `cached` launch does).

use super::operands::Inputs;
use super::{open_device, CliResult, ConfigArgs, Dtype, KernelEntry, ProblemArgs};
use crossgemm::tune::{lookup, tune_with};
use crossgemm::{
    Device, Element, GemmError, LookupSource, Matrix, ProgressHook, TuneMode, TuneOptions, TuneProgress, TuneReport,
    TuneStage,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::json;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(clap::Args, Debug)]
pub struct TuneArgs {
    #[command(flatten)]
    p: ProblemArgs,
    #[command(flatten)]
    configs: ConfigArgs,
    /// Most candidates to try (default CROSSGEMM_TUNE_MAX, else 48 on GPUs, 6 on CPUs;
    /// not with `--config`, whose configs are all timed).
    #[arg(long, conflicts_with = "configs")]
    max: Option<usize>,
    /// Time every candidate whatever the problem's size (without it, problems under
    /// 8.4 MFLOP take the first candidate that passes and under 1.07 GFLOP the first 16).
    #[arg(long)]
    thorough: bool,
    /// Stop the search after this many milliseconds, compiles included, with the best so
    /// far (default CROSSGEMM_TUNE_BUDGET_MS, else no limit).
    #[arg(long, value_name = "MS", value_parser = parse_budget)]
    budget_ms: Option<f64>,
    /// Tune even when the cache has a winner (the new winner replaces it).
    #[arg(long)]
    force: bool,
    /// Key the winner by the exact shape instead of its power-of-two bucket.
    #[arg(long)]
    exact: bool,
    /// Print one JSON object instead of a summary (with `timings`: every timed candidate's
    /// median, fastest first).
    #[arg(long)]
    json: bool,
}

fn parse_budget(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(ms) if ms.is_finite() && ms > 0.0 => Ok(ms),
        _ => Err(format!("`{s}` is not a number of milliseconds > 0")),
    }
}

pub(super) fn parse_shape(s: &str) -> Result<(usize, usize, usize), String> {
    let v: Vec<usize> = s
        .split(['x', 'X'])
        .map(|d| d.trim().parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("`{s}` is not MxNxK (e.g. 256x512x128)"))?;
    match v[..] {
        [m, n, k] if m > 0 && n > 0 && k > 0 => Ok((m, n, k)),
        _ => Err(format!("`{s}` is not MxNxK with M, N, K >= 1")),
    }
}

enum Outcome {
    // Boxed: a report is far larger than a lookup, and one of them exists at a time.
    Tuned(Box<TuneReport>),
    Looked(crossgemm::Lookup),
}

fn run_kernel<T: Element>(
    entry: &KernelEntry,
    dev: &Device,
    (m, n, k): (usize, usize, usize),
    opts: &TuneOptions,
    cached_only: bool,
) -> Result<Outcome, GemmError> {
    let spec = entry.spec;
    let inp = Inputs::<T>::for_entry(dev, (m, n, k), entry)?;
    let mut out = Matrix::<T>::zeros(dev, m, n)?;
    let args = inp.args();
    if cached_only {
        lookup(spec, &args, out.__out(), opts).map(Outcome::Looked)
    } else {
        tune_with(spec, &args, out.__out(), opts).map(|t| Outcome::Tuned(Box::new(t)))
    }
}

/// An indicatif bar fed by the tuner, on a terminal only.
fn progress_hook() -> Option<ProgressHook> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg:<24} [{bar:30}] {pos}/{len} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    Some(ProgressHook(Arc::new(move |p: &TuneProgress| match p.stage {
        TuneStage::Compiling => {
            bar.set_length(p.total as u64);
            bar.set_position(p.done as u64);
            bar.set_message("compiling");
        }
        TuneStage::Timing => {
            bar.set_length(p.total as u64);
            bar.set_position(p.done as u64);
            bar.set_message(match p.best_ms {
                Some(ms) => format!("timing (best {:.1} us)", ms * 1e3),
                None => "timing".to_string(),
            });
        }
        TuneStage::Done => bar.finish_and_clear(),
    })))
}

fn tflops((m, n, k): (usize, usize, usize), ms: f64) -> Option<f64> {
    (ms.is_finite() && ms > 0.0).then(|| 2.0 * m as f64 * n as f64 * k as f64 / (ms * 1e-3) / 1e12)
}

pub fn run(kernels: &'static [KernelEntry], a: &TuneArgs, cache_dir: Option<PathBuf>) -> CliResult {
    let entry = a.p.kernel(kernels)?;
    let dev = open_device(a.p.device.as_deref(), "tune")?;
    let mut opts = super::tune_options(cache_dir, a.max, &a.configs);
    opts.force = a.force;
    opts.thorough = a.thorough;
    if a.budget_ms.is_some() {
        opts.budget_ms = a.budget_ms;
    }
    opts.exact_shape |= a.exact;
    // CROSSGEMM_TUNE=cached: the lookup a `cached` launch does; off: what an `off` launch
    // uses, the planner's default (the lookup says so under `off`, reading no cache).
    let mode = TuneMode::from_env();
    let cached_only = mode != TuneMode::Full;
    if cached_only && !a.configs.configs.is_empty() {
        return Err(format!(
            "--config times the given configs, and CROSSGEMM_TUNE={} tunes nothing (unset it to time them)",
            std::env::var("CROSSGEMM_TUNE").unwrap_or_default()
        ));
    }
    if mode == TuneMode::Off {
        opts.cache_dir = None;
    }
    if !cached_only {
        opts.on_progress = progress_hook();
    }
    let shape = a.p.shape;
    let r = match a.p.dtype {
        Dtype::F16 => run_kernel::<crossgemm::f16>(entry, &dev, shape, &opts, cached_only),
        Dtype::Bf16 => run_kernel::<crossgemm::bf16>(entry, &dev, shape, &opts, cached_only),
        Dtype::F32 | Dtype::Tf32 | Dtype::Tf32x3 => run_kernel::<f32>(entry, &dev, shape, &opts, cached_only),
    }
    .map_err(|e| e.to_string())?;
    let (m, n, k) = shape;
    let common = json!({
        "kernel": entry.spec.name,
        "shape": format!("{m}x{n}x{k}"),
        "dtype": a.p.dtype.name(),
        "epilogue": a.p.epilogue.name(),
        "device": dev.info().to_string(),
        "device_id": dev.info().id,
        // The times are the tool's under one (the warning on stderr says so too).
        "under_tool": super::under_tool::detected(),
    });
    let mut j = common;
    match &r {
        Outcome::Tuned(t) => {
            let failed: Vec<_> = t
                .failed
                .iter()
                .map(|f| {
                    json!({
                        "config": f.config.to_string(),
                        "stage": f.stage,
                        "reason": f.reason,
                        "from_cache": f.from_cache,
                    })
                })
                .collect();
            let o = j.as_object_mut().expect("an object");
            o.insert("target".into(), json!(t.target));
            o.insert("shape_key".into(), json!(t.shape_key));
            o.insert("mode".into(), json!("tune"));
            o.insert("source".into(), json!(if t.cache_hit { "cache" } else { "tuned" }));
            o.insert("cache_hit".into(), json!(t.cache_hit));
            o.insert("candidates".into(), json!(t.candidates.len()));
            o.insert("seeded_from".into(), json!(t.seeded_from));
            o.insert("timed".into(), json!(t.timings.len()));
            // Every timed candidate's median, fastest first: what the winner beat.
            let mut timings = t.timings.clone();
            timings.sort_by(|a, b| a.ms.total_cmp(&b.ms));
            o.insert(
                "timings".into(),
                json!(timings
                    .iter()
                    .map(|t| json!({"config": t.config.to_string(), "us": t.ms * 1e3}))
                    .collect::<Vec<_>>()),
            );
            // The final round's medians (the fastest few timed again together), which
            // decided the winner.
            o.insert(
                "final_round".into(),
                json!(t
                    .final_round
                    .iter()
                    .map(|t| json!({"config": t.config.to_string(), "us": t.ms * 1e3}))
                    .collect::<Vec<_>>()),
            );
            o.insert("scope".into(), json!(t.scope));
            o.insert(
                "skipped".into(),
                json!(t.skipped.iter().map(|c| c.to_string()).collect::<Vec<_>>()),
            );
            o.insert("budget_spent".into(), json!(t.budget_spent));
            o.insert(
                "tied".into(),
                json!(t.tied.iter().map(|c| c.to_string()).collect::<Vec<_>>()),
            );
            o.insert("compiled".into(), json!(t.compiled));
            o.insert("failed".into(), json!(failed));
            o.insert("best".into(), json!(t.best.to_string()));
            o.insert("best_config".into(), json!(t.best));
            o.insert(
                "best_us".into(),
                json!(t.best_ms.is_finite().then_some(t.best_ms * 1e3)),
            );
            o.insert("tflops".into(), json!(tflops(shape, t.best_ms)));
            o.insert("tune_ms".into(), json!(t.tune_ms));
            o.insert("cache_file".into(), json!(t.cache_file));
        }
        Outcome::Looked(l) => {
            let source = l.source.name();
            let from = match &l.source {
                LookupSource::Nearest(b) => Some(b.clone()),
                LookupSource::Table { entry, .. } => Some(entry.clone()),
                LookupSource::Cache | LookupSource::Default => None,
            };
            let ms = match l.source {
                LookupSource::Cache | LookupSource::Table { winner: true, .. } => l.ms,
                _ => None,
            };
            let o = j.as_object_mut().expect("an object");
            o.insert("target".into(), json!(l.target));
            o.insert("shape_key".into(), json!(l.shape_key));
            o.insert(
                "mode".into(),
                json!(if mode == TuneMode::Off { "off" } else { "cached" }),
            );
            o.insert("source".into(), json!(source));
            o.insert("staged".into(), json!(l.staged));
            o.insert("cache_hit".into(), json!(l.source == LookupSource::Cache));
            o.insert("candidates".into(), json!(0));
            o.insert("scope".into(), json!(null));
            o.insert("skipped".into(), json!([]));
            o.insert("budget_spent".into(), json!(false));
            o.insert("tied".into(), json!([]));
            o.insert("timings".into(), json!([]));
            o.insert("final_round".into(), json!([]));
            o.insert("seeded_from".into(), json!(from));
            o.insert("failed".into(), json!([]));
            o.insert("best".into(), json!(l.config.to_string()));
            o.insert("best_config".into(), json!(l.config));
            o.insert("best_us".into(), json!(ms.map(|ms| ms * 1e3)));
            o.insert("tflops".into(), json!(ms.and_then(|ms| tflops(shape, ms))));
            o.insert("tune_ms".into(), json!(0.0));
        }
    }
    if a.json {
        println!("{j}");
        return Ok(());
    }
    let s = |k: &str| j[k].as_str().unwrap_or("").to_string();
    println!(
        "{} {} ({} {}) on {} [{}]",
        s("kernel"),
        s("shape"),
        s("dtype"),
        s("epilogue"),
        s("device"),
        s("target")
    );
    match &r {
        Outcome::Tuned(t) if t.cache_hit => println!("cache hit ({}): nothing tuned", t.shape_key),
        Outcome::Tuned(t) => {
            println!(
                "tuned {}: {} candidates, {} timed, {} failed, {} compiled, {:.0} ms{}",
                t.shape_key,
                t.candidates.len(),
                t.timings.len(),
                t.failed.len(),
                t.compiled,
                t.tune_ms,
                t.seeded_from
                    .as_ref()
                    .map(|b| format!(" (started from the winner of {b})"))
                    .unwrap_or_default()
            );
            println!(
                "  scope: {}; {} skipped{}",
                t.scope,
                t.skipped.len(),
                if t.budget_spent { " (time budget spent)" } else { "" }
            );
            if !t.final_round.is_empty() {
                println!(
                    "  final round (timed together, one run each in turn): {}",
                    t.final_round
                        .iter()
                        .map(|f| format!("{} {:.1} us", f.config, f.ms * 1e3))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            if t.tied.len() > 1 {
                println!(
                    "  {} tied within noise; the planner's first won: {}",
                    t.tied.len(),
                    t.tied.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ")
                );
            }
            for f in &t.failed {
                println!(
                    "  failed {} ({:?}{}): {}",
                    f.config,
                    f.stage,
                    if f.from_cache { ", cached" } else { "" },
                    f.reason.lines().next().unwrap_or("")
                );
            }
        }
        Outcome::Looked(_) if mode == TuneMode::Off => {
            println!("CROSSGEMM_TUNE=off: nothing tuned and no cache read; a launch uses the planner's default config")
        }
        Outcome::Looked(_) => println!(
            "CROSSGEMM_TUNE=cached: nothing tuned; a launch uses the {} config{}{}",
            s("source"),
            j["seeded_from"]
                .as_str()
                .map(|b| format!(" (winner of {b})"))
                .unwrap_or_default(),
            if j["staged"].as_array().is_some_and(|v| v.iter().any(|x| x == true)) {
                ", on aligned copies of the misaligned operands (staged)"
            } else {
                ""
            }
        ),
    }
    print!("best: {}", s("best"));
    if let (Some(us), Some(tf)) = (j["best_us"].as_f64(), j["tflops"].as_f64()) {
        print!(", {us:.1} us, {tf:.3} TFLOP/s");
    }
    println!();
    Ok(())
}
