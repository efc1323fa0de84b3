//! Times generated kernels on the best device at large shapes: the planner's default
//! config and (with `--configs N`) its next N-1 candidates, reporting the best. Each
//! result is checked on 256 sampled output elements against f64 dot products on the
//! host (a full host reference at 4096³ would take minutes).
//!
//! `cargo run --release --example throughput -- [--configs N] [--reps R] [--verbose] [MxNxK ...]`
//!
//! Times are host wall-clock over R back-to-back launches after a device sync, so they
//! include launch overhead; the benchmark harness with CUDA events and cuBLAS side by
//! side is `crossgemm bench` (issue 4).

use crossgemm::prelude::*;
use crossgemm::TileConfig;
use rand::{Rng, SeedableRng};
use std::time::Instant;

#[gemm_kernel]
fn f16_nt(x: Matrix<f16>, w: Matrix<f16, ColMajor>) -> Matrix<f16> {
    x * w
}
#[gemm_kernel]
fn bf16_nt(x: Matrix<bf16>, w: Matrix<bf16, ColMajor>) -> Matrix<bf16> {
    x * w
}
#[gemm_kernel]
fn f16_bias_relu(x: Matrix<f16>, w: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> {
    relu(x * w + bias)
}

struct Case<'a> {
    name: &'a str,
    spec: &'static crossgemm::KernelSpec,
    run: &'a dyn Fn(&TileConfig) -> Result<(), GemmError>,
    check: &'a dyn Fn() -> Result<f32, GemmError>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut configs = 1usize;
    let mut reps = 20usize;
    let mut verbose = false;
    let mut shapes = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--configs" => configs = args.next().ok_or("--configs N")?.parse()?,
            "--reps" => reps = args.next().ok_or("--reps R")?.parse()?,
            "--verbose" => verbose = true,
            s => {
                let v: Vec<usize> = s.split('x').map(str::parse).collect::<Result<_, _>>()?;
                let [m, n, k] = v[..] else {
                    return Err(format!("shape `{s}`: expected MxNxK").into());
                };
                shapes.push((m, n, k));
            }
        }
    }
    if shapes.is_empty() {
        shapes = vec![
            (4096, 4096, 4096),
            (2048, 2048, 2048),
            (1024, 1024, 2048),
            (128, 12288, 4096),
            (16, 4096, 4096),
            (1000, 1000, 1000),
        ];
    }
    let dev = Device::best()?;
    println!("device: {}", dev.info());
    println!(
        "{:<14} {:>18} {:>10} {:>9} {:>10}  config",
        "kernel", "MxNxK", "us", "TFLOP/s", "max_rel"
    );
    for &(m, n, k) in &shapes {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let xs: Vec<f32> = (0..m * k).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let ws: Vec<f32> = (0..k * n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let bs: Vec<f32> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let h16 = |v: &[f32]| v.iter().map(|x| f16::from_f32(*x)).collect::<Vec<_>>();
        let hb16 = |v: &[f32]| v.iter().map(|x| bf16::from_f32(*x)).collect::<Vec<_>>();
        let (x16, w16, b16) = (h16(&xs), h16(&ws), h16(&bs));
        let (xb, wb) = (hb16(&xs), hb16(&ws));
        let x = Matrix::<f16>::from_host(&dev, m, k, &x16)?;
        let w = Matrix::<f16, ColMajor>::from_host(&dev, k, n, &w16)?;
        let bias = Row::from_host(&dev, &b16)?;
        let xbm = Matrix::<bf16>::from_host(&dev, m, k, &xb)?;
        let wbm = Matrix::<bf16, ColMajor>::from_host(&dev, k, n, &wb)?;
        let out16 = std::cell::RefCell::new(Matrix::<f16>::zeros(&dev, m, n)?);
        let outb = std::cell::RefCell::new(Matrix::<bf16>::zeros(&dev, m, n)?);
        // Sampled reference: f64 dot products of the rounded inputs.
        let samples: Vec<(usize, usize)> = (0..256).map(|_| (rng.gen_range(0..m), rng.gen_range(0..n))).collect();
        let dot = |xh: &dyn Fn(usize) -> f32, wh: &dyn Fn(usize) -> f32, i: usize, j: usize| -> f64 {
            (0..k).map(|kk| xh(i * k + kk) as f64 * wh(j * k + kk) as f64).sum()
        };
        let max_rel = |got: &dyn Fn(usize) -> f32, want: &dyn Fn(usize, usize) -> f64| -> f32 {
            let scale = (k as f64).sqrt() / 3.0;
            samples
                .iter()
                .map(|&(i, j)| ((got(i * n + j) as f64 - want(i, j)).abs() / (want(i, j).abs() + scale)) as f32)
                .fold(0.0, f32::max)
        };
        let run_f16 = |c: &TileConfig| f16_nt::run_with(c, &x, &w, &mut out16.borrow_mut());
        let chk_f16 = || -> Result<f32, GemmError> {
            let got = out16.borrow().to_host()?;
            Ok(max_rel(&|idx| got[idx].to_f32(), &|i, j| {
                dot(&|p| x16[p].to_f32(), &|p| w16[p].to_f32(), i, j)
            }))
        };
        let run_bf16 = |c: &TileConfig| bf16_nt::run_with(c, &xbm, &wbm, &mut outb.borrow_mut());
        let chk_bf16 = || -> Result<f32, GemmError> {
            let got = outb.borrow().to_host()?;
            Ok(max_rel(&|idx| got[idx].to_f32(), &|i, j| {
                dot(&|p| xb[p].to_f32(), &|p| wb[p].to_f32(), i, j)
            }))
        };
        let run_br = |c: &TileConfig| f16_bias_relu::run_with(c, &x, &w, &bias, &mut out16.borrow_mut());
        let chk_br = || -> Result<f32, GemmError> {
            let got = out16.borrow().to_host()?;
            Ok(max_rel(&|idx| got[idx].to_f32(), &|i, j| {
                (dot(&|p| x16[p].to_f32(), &|p| w16[p].to_f32(), i, j) + b16[j].to_f32() as f64).max(0.0)
            }))
        };
        let cases = [
            Case {
                name: "f16",
                spec: &f16_nt::SPEC,
                run: &run_f16,
                check: &chk_f16,
            },
            Case {
                name: "bf16",
                spec: &bf16_nt::SPEC,
                run: &run_bf16,
                check: &chk_bf16,
            },
            Case {
                name: "f16+bias+relu",
                spec: &f16_bias_relu::SPEC,
                run: &run_br,
                check: &chk_br,
            },
        ];
        for case in &cases {
            let Ok(tk) = case.spec.target_for(&dev) else {
                println!("{:<14} no target for this device", case.name);
                continue;
            };
            let mut best: Option<(f64, TileConfig, f32)> = None;
            for cfg in tk.plan().configs.iter().take(configs) {
                if let Err(e) = (case.run)(cfg) {
                    println!("{:<14} {cfg}: {e}", case.name);
                    continue;
                }
                dev.synchronize()?;
                let err = (case.check)()?;
                let t = Instant::now();
                for _ in 0..reps {
                    (case.run)(cfg)?;
                }
                dev.synchronize()?;
                let us = t.elapsed().as_secs_f64() * 1e6 / reps as f64;
                if verbose {
                    println!(
                        "  {:<12} {:>18} {:>10.1} {:>9.1} {:>10.2e}  {cfg}",
                        case.name,
                        format!("{m}x{n}x{k}"),
                        us,
                        2.0 * (m * n * k) as f64 / us / 1e6,
                        err
                    );
                }
                if best.as_ref().is_none_or(|b| us < b.0) {
                    best = Some((us, *cfg, err));
                }
            }
            if let Some((us, cfg, err)) = best {
                let tf = 2.0 * (m * n * k) as f64 / us / 1e6;
                println!(
                    "{:<14} {:>18} {:>10.1} {:>9.1} {:>10.2e}  {cfg}",
                    case.name,
                    format!("{m}x{n}x{k}"),
                    us,
                    tf,
                    err
                );
            }
        }
    }
    Ok(())
}
