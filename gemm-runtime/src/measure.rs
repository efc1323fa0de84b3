//! The timing protocol: warm-up, an L2 flush before every timed run (outside the timed
//! region: TLX #1679 shows a flush inside it picking the wrong winner), device-side
//! timing of the kernel alone, and the median of at least [`MIN_REPS`] runs.

use crate::device::{Device, KernelArg, KernelArgs, RawBuffer};
use crate::error::Result;
use gemm_core::target::DeviceType;
use gemm_core::LaunchDims;
use std::any::Any;

/// Names the protocol below; part of the cache key, so that changing how candidates
/// are timed retunes instead of comparing old and new numbers.
pub(crate) const PROTOCOL: &str = "warmup2-flush-median5..50-final6x10pct-paired-se-v4";

/// Fewest timed runs per candidate.
pub(crate) const MIN_REPS: usize = 5;
/// Most timed runs per candidate (fast kernels on GPUs get more, to beat noise).
const MAX_REPS: usize = 50;
/// Device time a GPU candidate may spend in timed runs; sets the repetition count.
const GPU_BUDGET_MS: f64 = 20.0;

/// Bytes to overwrite between runs so that the operands are not served from the
/// last-level cache: twice the target's L2, at least 8 MiB, and on CPU devices at most
/// 32 MiB (their caches are per core, and a fill costs real time on PoCL).
pub(crate) fn flush_bytes(l2_bytes: u64, device_type: DeviceType, global_mem: u64) -> usize {
    let want = (2 * l2_bytes).max(8 << 20);
    let cap = match device_type {
        DeviceType::Cpu => 32 << 20,
        _ => (global_mem / 16).max(8 << 20),
    };
    want.min(cap) as usize
}

/// How many timed runs after a first one of `first_ms`.
pub(crate) fn reps_for(first_ms: f64, device_type: DeviceType) -> usize {
    if device_type == DeviceType::Cpu || first_ms.is_nan() || first_ms <= 0.0 {
        return MIN_REPS;
    }
    ((GPU_BUDGET_MS / first_ms) as usize).clamp(MIN_REPS, MAX_REPS)
}

/// Median of a non-empty sample (mean of the middle two for an even count).
pub(crate) fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// A candidate slower than this many times the best so far stops after one timed run:
/// it cannot win, and its remaining runs would only lengthen the tune.
pub(crate) const TOO_SLOW_FACTOR: f64 = 20.0;

/// A candidate's timed runs, summarised.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Timed {
    /// Median, ms.
    pub(crate) ms: f64,
    /// How far apart two medians may lie by noise alone (the tuner's tie band): for
    /// runs timed one after the other, their interquartile range over their median; for
    /// a final round's paired timings ([`paired`]), the noise of the median per-round
    /// ratio ([`median_noise`]).
    pub(crate) spread: f64,
}

impl Timed {
    /// The median and spread of a non-empty sample.
    pub(crate) fn of(times: &mut [f64]) -> Timed {
        let ms = median(times);
        // `median` sorted the sample; quartiles by nearest rank.
        let q = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
        let spread = if ms > 0.0 { (q(0.75) - q(0.25)) / ms } else { 0.0 };
        Timed { ms, spread }
    }
}

/// What timing one candidate gave.
pub(crate) enum Measured {
    /// The timed runs' median and spread.
    Median(Timed),
    /// The first timed run (ms) passed the limit; no further runs were made.
    TooSlow(f64),
}

/// Times one compiled kernel: one untimed launch (the first touches the code and the
/// operands), then flushed, device-timed runs; returns the median in ms, or gives up
/// after one run slower than `limit_ms`. `time_scale` is 1 except when a test injects a
/// slow candidate.
pub(crate) fn measure(
    dev: &Device,
    kernel: &(dyn Any + Send + Sync),
    dims: LaunchDims,
    args: &[KernelArg<'_>],
    flush: Option<&RawBuffer>,
    limit_ms: f64,
    time_scale: f64,
) -> Result<Measured> {
    let b = dev.backend();
    b.launch(kernel, dims, args)?;
    let timed = |b: &dyn crate::device::DeviceBackend| -> Result<f64> {
        if let Some(f) = flush {
            f.fill(0)?;
        }
        Ok(b.time_launch(kernel, dims, args)? * time_scale)
    };
    let first = timed(b)?;
    if first > limit_ms {
        return Ok(Measured::TooSlow(first));
    }
    let mut times = vec![first];
    for _ in 1..reps_for(first, dev.info().device_type) {
        times.push(timed(b)?);
    }
    Ok(Measured::Median(Timed::of(&mut times)))
}

/// Runs `rounds` rounds of `works`, each a flushed run of every work in turn, and returns
/// each work's times (what it returned for each run). Timing works in rounds rather than
/// one after the other means a device whose clock drifts (a GPU heating up to its power
/// limit) slows every work's sample alike: the tuner's final round and the bench's rows.
/// Every other round runs the works in reverse order, so that no work always runs first
/// after the flush or right after the same neighbour.
pub(crate) fn in_rounds<W: FnMut() -> Result<f64>>(
    works: &mut [W],
    flush: Option<&RawBuffer>,
    rounds: usize,
) -> Result<Vec<Vec<f64>>> {
    let mut times = vec![Vec::with_capacity(rounds); works.len()];
    for round in 0..rounds.max(1) {
        for step in 0..works.len() {
            let w = if round % 2 == 0 { step } else { works.len() - 1 - step };
            if let Some(f) = flush {
                f.fill(0)?;
            }
            times[w].push(works[w]()?);
        }
    }
    Ok(times)
}

/// Each work's timing from rounds of runs ([`in_rounds`]), compared **round by round**
/// with the work of the lowest median (the reference): work `i`'s time is the
/// reference's median times the median over rounds of `t_i / t_ref` in that round, and
/// its spread is the noise of that median ratio ([`median_noise`]; the reference's: the
/// median of the others'). A clock that drifts over the rounds moves both sides of each
/// ratio alike, so the spread is the noise of the comparison, not the drift: on the H200
/// at 2048x11008x4096 the final round's medians spread 3-5% under the power cap, wide
/// enough to tie a config 3% slower with the fastest (bench/results/h200-2026-12-02zg).
pub(crate) fn paired(times: &[Vec<f64>]) -> Vec<Timed> {
    let medians: Vec<f64> = times.iter().map(|t| median(&mut t.clone())).collect();
    let Some(r) = (0..times.len()).min_by(|&a, &b| medians[a].total_cmp(&medians[b])) else {
        return Vec::new();
    };
    let mut out: Vec<Timed> = times
        .iter()
        .map(|t| {
            let mut ratios: Vec<f64> = t
                .iter()
                .zip(&times[r])
                .filter(|(_, &tr)| tr > 0.0)
                .map(|(&ti, &tr)| ti / tr)
                .collect();
            if ratios.is_empty() {
                return Timed {
                    ms: medians[r],
                    spread: 0.0,
                };
            }
            let n = ratios.len();
            let t = Timed::of(&mut ratios);
            Timed {
                ms: medians[r] * t.ms,
                spread: median_noise(t.spread, n),
            }
        })
        .collect();
    let mut others: Vec<f64> = (0..out.len()).filter(|&i| i != r).map(|i| out[i].spread).collect();
    out[r] = Timed {
        ms: medians[r],
        spread: if others.is_empty() { 0.0 } else { median(&mut others) },
    };
    out
}

/// How far the median of `n` samples whose interquartile range is `iqr` (relative) may
/// lie from the true median by noise alone: two standard errors, where one is about
/// `1.2533 σ / √n` and `σ ≈ IQR / 1.349` for a normal sample, so `1.86 IQR / √n`. The
/// final round's decision is about the median ratio of up to 50 rounds, not about one
/// round's ratio: the IQR of the ratios itself (what the tie band was before) tied
/// configs 2.3% apart on the H200 at 2048x11008x4096 (bench/results/h200-2026-12-02zl).
/// With the 5 rounds a CPU device gets, this is 0.83 IQR, about what it was.
pub(crate) fn median_noise(iqr: f64, n: usize) -> f64 {
    if n == 0 {
        return iqr;
    }
    1.86 * iqr / (n as f64).sqrt()
}

/// Times `kernels` together ([`in_rounds`]), device-timed, compared round by round
/// ([`paired`]): the tuner's final round.
pub(crate) fn interleaved(
    dev: &Device,
    kernels: &[(&(dyn Any + Send + Sync), LaunchDims, KernelArgs<'_>)],
    flush: Option<&RawBuffer>,
    rounds: usize,
) -> Result<Vec<Timed>> {
    let b = dev.backend();
    let mut runs: Vec<_> = kernels
        .iter()
        .map(|(kernel, dims, args)| move || b.time_launch(*kernel, *dims, args))
        .collect();
    Ok(paired(&in_rounds(&mut runs, flush, rounds)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_reps() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(reps_for(1.0, DeviceType::Cpu), MIN_REPS);
        assert_eq!(reps_for(100.0, DeviceType::Gpu), MIN_REPS);
        assert_eq!(reps_for(1.0, DeviceType::Gpu), 20);
        assert_eq!(reps_for(0.001, DeviceType::Gpu), MAX_REPS);
        assert_eq!(reps_for(0.0, DeviceType::Gpu), MIN_REPS);
    }

    #[test]
    fn spread_is_the_relative_interquartile_range() {
        let t = Timed::of(&mut [1.0, 1.0, 1.0, 1.0, 1.0]);
        assert_eq!((t.ms, t.spread), (1.0, 0.0));
        // Sorted 0.9 1.0 1.0 1.1 5.0: quartiles 1.0 and 1.1 (the outlier does not count).
        let t = Timed::of(&mut [1.1, 5.0, 1.0, 0.9, 1.0]);
        assert_eq!(t.ms, 1.0);
        assert!((t.spread - 0.1).abs() < 1e-12, "{t:?}");
        assert_eq!(Timed::of(&mut [0.0, 0.0]).spread, 0.0);
    }

    #[test]
    fn rounds_alternate_their_order() {
        let order = std::cell::RefCell::new(Vec::new());
        let mut works: Vec<_> = (0..3)
            .map(|w| {
                let order = &order;
                move || {
                    order.borrow_mut().push(w);
                    Ok(w as f64)
                }
            })
            .collect();
        let times = in_rounds(&mut works, None, 3).unwrap();
        assert_eq!(*order.borrow(), vec![0, 1, 2, 2, 1, 0, 0, 1, 2]);
        assert_eq!(times, vec![vec![0.0; 3], vec![1.0; 3], vec![2.0; 3]]);
    }

    #[test]
    fn paired_timing_sees_through_a_drifting_clock() {
        // The clock slows 1% a round over 20 rounds; work 1 is 3% slower than work 0 in
        // every round. Its runs' own spread (and the reference's) is ~10%, so medians
        // would tie; round by round the 3% is exact.
        let drift = |t: usize| 1.0 + 0.01 * t as f64;
        let times: Vec<Vec<f64>> = [1.0, 1.03]
            .iter()
            .map(|&k| (0..20).map(|t| k * drift(t)).collect())
            .collect();
        let plain: Vec<Timed> = times.iter().map(|t| Timed::of(&mut t.clone())).collect();
        assert!(plain[0].spread > 0.08, "{plain:?}");
        let p = paired(&times);
        assert!((p[1].ms / p[0].ms - 1.03).abs() < 1e-9, "{p:?}");
        assert!(p[1].spread < 1e-9 && p[0].spread < 1e-9, "{p:?}");
        // The reference is the lowest median wherever it sits.
        let p = paired(&[times[1].clone(), times[0].clone()]);
        assert!((p[0].ms / p[1].ms - 1.03).abs() < 1e-9, "{p:?}");
        assert!(paired(&[]).is_empty());
    }

    #[test]
    fn the_paired_spread_is_the_noise_of_the_median_ratio() {
        // Work 1 runs 2% behind work 0 with a per-round jitter of up to 3% either way.
        let jitter = [1.03, 0.97, 1.0, 1.02, 0.98, 1.01, 0.99];
        let rounds = |n: usize| -> Vec<Vec<f64>> {
            vec![vec![1.0; n], (0..n).map(|t| 1.02 * jitter[t % jitter.len()]).collect()]
        };
        for n in [5, 49] {
            let p = paired(&rounds(n));
            let mut ratios = rounds(n)[1].clone();
            let one = Timed::of(&mut ratios);
            assert!((p[1].ms - one.ms).abs() < 1e-12, "{p:?}");
            assert!(
                (p[1].spread - 1.86 * one.spread / (n as f64).sqrt()).abs() < 1e-12,
                "{p:?}"
            );
            // The reference takes the other's noise.
            assert_eq!(p[0].spread, p[1].spread);
        }
        // Over 49 rounds the 2% is outside the noise; one round's IQR (4% here) was not.
        let many = paired(&rounds(49));
        assert!(
            many[1].spread < 0.02 && many[1].ms / many[0].ms - 1.0 > many[1].spread,
            "{many:?}"
        );
        assert_eq!(median_noise(0.05, 0), 0.05);
    }

    #[test]
    fn flush_sizes() {
        // H200: 50 MiB of L2 → 100 MiB.
        assert_eq!(flush_bytes(50 << 20, DeviceType::Gpu, 140 << 30), 100 << 20);
        assert_eq!(flush_bytes(0, DeviceType::Gpu, 140 << 30), 8 << 20);
        assert_eq!(flush_bytes(256 << 20, DeviceType::Cpu, 64 << 30), 32 << 20);
    }
}
