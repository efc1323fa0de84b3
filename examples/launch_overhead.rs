//! Launch overhead on the best device (`CROSSGEMM_DEVICE` picks another):
//!
//! (a) a bare driver launch: an empty kernel, launched back to back, host-timed up to a
//!     final synchronize, µs per launch;
//! (b) a warm call of a tiny generated kernel (1x8x8 f16 GEMM, tuned and cached first)
//!     through its typed `_into` wrapper, timed the same way; the difference is what
//!     crossgemm adds to a launch;
//! (c) a new process with a warm cache (tuning and compiled binaries): this program
//!     re-runs itself with the same `CROSSGEMM_CACHE_DIR` and reports the child's first
//!     call (synchronized) against its warm calls (each synchronized), and how many
//!     kernels the child compiled (0 when the binary cache hit).
//!
//! `cargo run --release --example launch_overhead [ITERS]` (default 20000). The last line
//! of output is one JSON object with every figure.

use crossgemm::prelude::*;
use std::process::Command;
use std::time::Instant;

#[gemm_kernel]
fn tiny_gemm(a: Matrix<f16>, b: Matrix<f16, ColMajor>) -> Matrix<f16> {
    a * b
}

const CHILD_ENV: &str = "CROSSGEMM_LAUNCH_OVERHEAD_CHILD";
const SHAPE: (usize, usize, usize) = (1, 8, 8);

struct Ops {
    a: Matrix<f16>,
    b: Matrix<f16, ColMajor>,
    out: Matrix<f16>,
}

fn ops(dev: &Device) -> Result<Ops, GemmError> {
    let (m, n, k) = SHAPE;
    let v = |len: usize| {
        (0..len)
            .map(|i| f16::from_f32((i % 7) as f32 / 8.0))
            .collect::<Vec<_>>()
    };
    Ok(Ops {
        a: Matrix::from_host(dev, m, k, &v(m * k))?,
        b: Matrix::from_host(dev, k, n, &v(k * n))?,
        out: Matrix::zeros(dev, m, n)?,
    })
}

/// µs per call of `iters` back-to-back warm calls, host-timed up to a final synchronize.
fn warm_call_us(dev: &Device, o: &mut Ops, iters: usize) -> Result<f64, GemmError> {
    crossgemm::bench::back_to_back_us(dev, iters, &mut || tiny_gemm_into(&o.a, &o.b, &mut o.out))
}

/// One synchronized call, µs.
fn one_call_us(dev: &Device, o: &mut Ops) -> Result<f64, GemmError> {
    let t = Instant::now();
    tiny_gemm_into(&o.a, &o.b, &mut o.out)?;
    dev.synchronize()?;
    Ok(t.elapsed().as_secs_f64() * 1e6)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// The child: device and operands first (not counted: process and driver start-up),
/// then the first call, then warm synchronized calls.
fn child() -> Result<(), Box<dyn std::error::Error>> {
    let t0 = Instant::now();
    let dev = Device::best()?;
    let mut o = ops(&dev)?;
    dev.synchronize()?;
    let setup_ms = t0.elapsed().as_secs_f64() * 1e3;
    let first_us = one_call_us(&dev, &mut o)?;
    let warm_us = median((0..200).map(|_| one_call_us(&dev, &mut o)).collect::<Result<_, _>>()?);
    let s = crossgemm::compile_stats();
    let t = crossgemm::tune_stats();
    println!(
        "CHILD {first_us} {warm_us} {setup_ms} {} {} {} {}",
        s.compiles, s.binary_hits, t.tunes, t.disk_hits
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::var_os(CHILD_ENV).is_some() {
        return child();
    }
    let iters: usize = match std::env::args().nth(1) {
        Some(s) => s.parse()?,
        None => 20_000,
    };
    let dev = Device::best()?;
    let cache = crossgemm::cache_dir();
    println!("device: {}", dev.info());
    println!(
        "cache: {}",
        cache
            .as_ref()
            .map_or("none (results stay in the process)".into(), |d| d.display().to_string())
    );

    // (a) bare driver launch.
    let bare_us = crossgemm::bench::bare_launch_us(&dev, iters)?;
    // (b) warm call: the first call tunes on a cache miss (or reads the cache), compiles
    // (or loads the cached binary); then warm calls are timed.
    let mut o = ops(&dev)?;
    let t = Instant::now();
    tiny_gemm_into(&o.a, &o.b, &mut o.out)?;
    dev.synchronize()?;
    let parent_first_ms = t.elapsed().as_secs_f64() * 1e3;
    let warm_us = warm_call_us(&dev, &mut o, iters)?;
    // Correctness, so a fast wrong kernel is not measured.
    let got = o.out.to_host()?;
    let want = tiny_gemm::reference(&o.a, &o.b)?;
    let max_err = got
        .iter()
        .zip(&want)
        .map(|(g, w)| (g.to_f32() - w.to_f32()).abs())
        .fold(0.0f32, f32::max);
    if max_err > 1e-2 {
        return Err(format!("tiny_gemm differs from the reference by {max_err}").into());
    }
    let warm_sync_us = median((0..200).map(|_| one_call_us(&dev, &mut o)).collect::<Result<_, _>>()?);
    // Submission cost alone: back-to-back launches measure the kernel's run time as soon
    // as it exceeds the launch cost, so also time 200 calls without waiting for them.
    let bare_submit_us = crossgemm::bench::bare_submit_us(&dev, 200)?;
    dev.synchronize()?;
    let t = Instant::now();
    for _ in 0..200 {
        tiny_gemm_into(&o.a, &o.b, &mut o.out)?;
    }
    let submit_us = t.elapsed().as_secs_f64() * 1e6 / 200.0;
    dev.synchronize()?;
    println!(
        "(a') host cost to submit one launch: bare {bare_submit_us:.2} µs, tiny_gemm_into {submit_us:.2} µs (+{:.2} µs)",
        submit_us - bare_submit_us
    );
    println!("(a) bare driver launch (empty kernel):   {bare_us:.2} µs/launch ({iters} back to back)");
    println!(
        "(b) warm call tiny_gemm_into 1x8x8 f16:  {warm_us:.2} µs/call  (+{:.2} µs over bare)",
        warm_us - bare_us
    );
    println!(
        "    (first call in this process: {parent_first_ms:.1} ms; one synchronized warm call: {warm_sync_us:.1} µs)"
    );

    // (c) a new process with the cache this one just warmed.
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.env(CHILD_ENV, "1").env_remove("CROSSGEMM_ALWAYS_COMPILE");
    if let Some(d) = &cache {
        cmd.env("CROSSGEMM_CACHE_DIR", d);
    }
    if std::env::var_os("CROSSGEMM_DEVICE").is_none() {
        cmd.env("CROSSGEMM_DEVICE", &dev.info().id);
    }
    let out = cmd.output()?;
    if !out.status.success() {
        return Err(format!(
            "the child failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("CHILD "))
        .ok_or_else(|| format!("no CHILD line in the child's output:\n{text}"))?;
    let f: Vec<f64> = line.split(' ').map(|x| x.parse()).collect::<Result<_, _>>()?;
    let (first_us, child_warm_us, setup_ms) = (f[0], f[1], f[2]);
    let (compiles, hits, tunes, disk_hits) = (f[3] as u64, f[4] as u64, f[5] as u64, f[6] as u64);
    let first_over_ms = (first_us - child_warm_us) / 1e3;
    println!(
        "(c) new process, warm cache: first call {:.2} ms, warm call {:.1} µs (both synchronized) → first call costs +{first_over_ms:.2} ms",
        first_us / 1e3,
        child_warm_us
    );
    println!(
        "    child: device+operands set-up {setup_ms:.1} ms (not counted); {compiles} real compiles, {hits} binary-cache hits, {tunes} tunes, {disk_hits} tuning-cache hits"
    );
    println!(
        "targets: warm call ≤ bare + 5 µs: back to back {}, submission {}; first call ≤ warm + 50 ms: {}",
        if warm_us - bare_us <= 5.0 { "met" } else { "NOT met" },
        if submit_us - bare_submit_us <= 5.0 {
            "met"
        } else {
            "NOT met"
        },
        if first_over_ms <= 50.0 { "met" } else { "NOT met" }
    );
    println!(
        "{{\"device\":{:?},\"iters\":{iters},\"bare_launch_us\":{bare_us:.3},\"warm_call_us\":{warm_us:.3},\"warm_over_bare_us\":{:.3},\"bare_submit_us\":{bare_submit_us:.3},\"submit_us\":{submit_us:.3},\"warm_sync_call_us\":{warm_sync_us:.3},\"parent_first_call_ms\":{parent_first_ms:.3},\"child_first_call_ms\":{:.3},\"child_warm_sync_call_us\":{child_warm_us:.3},\"first_over_warm_ms\":{first_over_ms:.3},\"child_setup_ms\":{setup_ms:.3},\"child_compiles\":{compiles},\"child_binary_hits\":{hits},\"child_tunes\":{tunes},\"child_tune_disk_hits\":{disk_hits}}}",
        dev.info().to_string(),
        warm_us - bare_us,
        first_us / 1e3
    );
    Ok(())
}
