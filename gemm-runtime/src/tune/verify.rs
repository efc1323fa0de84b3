//! Checking a candidate: it runs into its own NaN-poisoned output, and sampled elements
//! are compared with the host reference under a tolerance derived from the operands.

use crate::call::Call;
use crate::device::RawBuffer;
use crate::element::{decode, encode};
use crate::error::{GemmError, Result};
use crate::measure;
use crate::reference::{self, SampledRef};
use gemm_core::{AccMode, DType, GemmIr, Layout, TileConfig};
use std::any::Any;

/// What running one candidate showed.
pub(super) enum Outcome {
    /// Verified; median time, ms.
    Timed(f64),
    /// Its output disagreed with the reference.
    Wrong(String),
    /// Its launch (or timing) failed.
    LaunchFailed(GemmError),
    /// Correct but its first timed run (ms) passed the limit.
    TooSlow(f64),
}

/// Runs one compiled candidate into its own poisoned output, checks it, and times it.
/// `Err` is for failures that are not the candidate's (its output cannot be allocated).
#[allow(clippy::too_many_arguments)]
pub(super) fn run_candidate(
    call: &Call<'_, '_>,
    kern: &(dyn Any + Send + Sync),
    cfg: &TileConfig,
    ops: &[reference::HostOperand<'_>],
    points: &[(usize, usize)],
    refs: &[SampledRef],
    flush: Option<&RawBuffer>,
    corrupt: bool,
    limit_ms: f64,
    time_scale: f64,
) -> Result<Outcome> {
    let (dev, ir) = (call.device(), call.ir());
    let (m, n, k) = call.mnk();
    // Its own buffer, NaN-filled: nothing left by another candidate can pass for its
    // result, and an element it never writes fails (Triton #9230).
    let own = RawBuffer::new(dev, call.out.buf.bytes)?;
    own.fill(0xFF)?;
    let kargs = call.kernel_args(cfg, &own);
    let dims = cfg.launch(ir, call.problem, call.machine());
    let mut bytes = vec![0u8; own.bytes];
    // Errors surface at the launch or at the first wait after it (asynchronous APIs).
    let ran = dev
        .backend()
        .launch(kern, dims, &kargs)
        .and_then(|_| dev.synchronize())
        .and_then(|_| {
            if corrupt {
                own.fill(0x3C)?;
            }
            own.download(&mut bytes)
        });
    if let Err(e) = ran {
        return Ok(Outcome::LaunchFailed(e));
    }
    if let Err(why) = verify(ir, ops, &bytes, m, n, k, points, refs) {
        return Ok(Outcome::Wrong(why));
    }
    // The verification run was the first warm-up.
    Ok(
        match measure::measure(dev, kern, dims, &kargs, flush, 1, limit_ms, time_scale) {
            Ok(measure::Measured::Median(ms)) => Outcome::Timed(ms),
            Ok(measure::Measured::TooSlow(ms)) => Outcome::TooSlow(ms),
            Err(e) => Outcome::LaunchFailed(e),
        },
    )
}

/// Up to 512 pseudo-random elements, the four corners and (evenly spaced) the last
/// row and column, where ragged-tile bugs show; every element of a small output.
pub(super) fn sample_points(m: usize, n: usize, seed: u64) -> Vec<(usize, usize)> {
    if m * n <= 4096 {
        return (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).collect();
    }
    let mut p = vec![(0, 0), (0, n - 1), (m - 1, 0), (m - 1, n - 1)];
    let edge = 32;
    p.extend((0..edge).map(|t| (m - 1, t * (n - 1) / (edge - 1))));
    p.extend((0..edge).map(|t| (t * (m - 1) / (edge - 1), n - 1)));
    let mut s = seed | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    p.extend((0..512).map(|_| ((next() % m as u64) as usize, (next() % n as u64) as usize)));
    p
}

fn eps(d: DType) -> f32 {
    match d {
        DType::F32 => f32::EPSILON,
        DType::F16 => 2f32.powi(-10),
        DType::Bf16 => 2f32.powi(-7),
    }
}

fn value_at(dtype: DType, bytes: &[u8], idx: usize) -> f32 {
    let s = dtype.size() as usize;
    decode(dtype, &bytes[idx * s..(idx + 1) * s])[0]
}

/// Compares the sampled elements with the reference, with the tolerance of the test
/// suite's `assert_close` made scale-aware: two output ulps of the reference, plus the
/// accumulator's summation-order error (calibrated there for terms of magnitude ~1/4)
/// scaled by the actual mean |term| and carried through the kernel's own epilogue (so a
/// `* alpha` or a saturating activation widens or narrows it as it should).
#[allow(clippy::too_many_arguments)]
fn verify(
    ir: &GemmIr,
    ops: &[reference::HostOperand<'_>],
    bytes: &[u8],
    m: usize,
    n: usize,
    k: usize,
    points: &[(usize, usize)],
    refs: &[SampledRef],
) -> std::result::Result<(), String> {
    let e = eps(ir.out_dtype);
    let acc_eps = if ir.acc == AccMode::Tf32 { 2e-3 } else { 1e-5 };
    let mut bad = Vec::new();
    let mut stack = Vec::new();
    for (&(i, j), r) in points.iter().zip(refs) {
        let idx = match ir.out_layout {
            Layout::RowMajor => i * n + j,
            Layout::ColMajor => j * m + i,
        };
        let got = value_at(ir.out_dtype, bytes, idx);
        // The reference rounded to the output type, as the kernel stores it.
        let want = decode(ir.out_dtype, &encode(ir.out_dtype, &[r.value]))[0];
        if got == want || want.is_nan() {
            continue;
        }
        let delta = acc_eps * ((k as f64).sqrt() + 1.0) * 4.0 * (r.abs_sum / k.max(1) as f64);
        let mut through = |d: f64| {
            let v = reference::epilogue(ir, ops, (r.acc + d) as f32, i, j, &mut stack);
            (v - r.value).abs()
        };
        let spread = through(delta).max(through(-delta));
        // The epilogue's own f32 evaluation (tanh, exp, erf on the device) errs by a few
        // ulps of its intermediates, which scale with |acc|: gelu(-15) is -1.7e-7 on a
        // device and -0 on the host, both right.
        let own = 4.0 * f32::EPSILON * (r.acc.abs() as f32 + 1.0);
        let tol = 2.0 * e * want.abs() + 4.0 * f32::EPSILON * want.abs() + spread + own + e * 1e-3;
        if !(got - want).abs().le(&tol) {
            bad.push(format!("({i},{j}): got {got}, reference {want}, tolerance {tol:.3e}"));
        }
    }
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "wrong result at {} of {} sampled elements; first: {}",
            bad.len(),
            points.len(),
            bad[..bad.len().min(3)].join("; ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::{EpOp, Func, Param};
    use reference::HostOperand;

    #[test]
    fn samples_cover_edges_and_stay_in_range() {
        let all = sample_points(3, 5, 1);
        assert_eq!(all.len(), 15);
        let (m, n) = (5000, 3);
        let p = sample_points(m, n, 42);
        assert!(p.len() >= 512 + 4);
        assert!(p.iter().all(|&(i, j)| i < m && j < n));
        for corner in [(0, 0), (0, n - 1), (m - 1, 0), (m - 1, n - 1)] {
            assert!(p.contains(&corner));
        }
        assert!(p.iter().filter(|&&(i, _)| i == m - 1).count() >= 32);
        assert_eq!(sample_points(m, n, 42), p, "deterministic");
    }

    fn ir(out: DType, epilogue: Vec<EpOp>) -> GemmIr {
        GemmIr {
            name: "t".into(),
            params: vec![
                Param::matrix("a", DType::F32, Layout::RowMajor),
                Param::matrix("b", DType::F32, Layout::RowMajor),
                Param::scalar("alpha"),
            ],
            a: 0,
            a_t: false,
            b: 1,
            b_t: false,
            ab_dtype: DType::F32,
            acc: AccMode::F32,
            out_dtype: out,
            out_layout: Layout::ColMajor,
            epilogue,
        }
    }

    /// The check passes what a kernel with another summation order produces, and fails
    /// unwritten (NaN), stale (zero) and slightly-off-by-a-term outputs.
    #[test]
    fn verification_tolerance() {
        let (m, n, k) = (4, 3, 200);
        let a: Vec<f32> = (0..m * k)
            .map(|x| ((x * 7919 % 1000) as f32 / 500.0 - 1.0) * 100.0)
            .collect();
        let b: Vec<f32> = (0..k * n).map(|x| (x * 104729 % 1000) as f32 / 500.0 - 1.0).collect();
        let scaled = ir(
            DType::F32,
            vec![EpOp::Param(2), EpOp::Acc, EpOp::Mul, EpOp::Call(Func::Gelu)],
        );
        for (g, alpha) in [
            (ir(DType::F32, vec![EpOp::Acc]), 1.0),
            (ir(DType::F16, vec![EpOp::Acc]), 1.0),
            (scaled, 0.01),
        ] {
            let ops = [
                HostOperand::Matrix {
                    data: &a,
                    rows: m,
                    cols: k,
                    layout: Layout::RowMajor,
                },
                HostOperand::Matrix {
                    data: &b,
                    rows: k,
                    cols: n,
                    layout: Layout::RowMajor,
                },
                HostOperand::Scalar(alpha),
            ];
            let points = sample_points(m, n, 0);
            let refs = reference::gemm_sampled(&g, &ops, k, &points);
            // A kernel's f32 sum in reverse order, stored in the output type.
            let mut vals = vec![0f32; m * n];
            for &(i, j) in &points {
                let acc: f32 = (0..k).rev().map(|kk| a[i * k + kk] * b[kk * n + j]).sum();
                vals[j * m + i] = reference::epilogue(&g, &ops, acc, i, j, &mut Vec::new());
            }
            let enc = |v: &[f32]| encode(g.out_dtype, v);
            assert_eq!(verify(&g, &ops, &enc(&vals), m, n, k, &points, &refs), Ok(()));
            let mut nan = vals.clone();
            nan[5] = f32::NAN;
            assert!(verify(&g, &ops, &enc(&nan), m, n, k, &points, &refs)
                .unwrap_err()
                .contains("1 of 12"));
            assert!(verify(&g, &ops, &enc(&vec![0.0; m * n]), m, n, k, &points, &refs).is_err());
            // The largest product term missing from one element.
            let mut off = vals.clone();
            let (i, j) = (2, 1);
            let term = |kk: usize| a[i * k + kk] * b[kk * n + j];
            let big = (0..k).max_by(|&x, &y| term(x).abs().total_cmp(&term(y).abs())).unwrap();
            let acc: f32 = (0..k).filter(|&kk| kk != big).map(term).sum();
            off[j * m + i] = reference::epilogue(&g, &ops, acc, i, j, &mut Vec::new());
            assert!(
                verify(&g, &ops, &enc(&off), m, n, k, &points, &refs).is_err(),
                "{:?}",
                g.epilogue
            );
        }
    }
}
