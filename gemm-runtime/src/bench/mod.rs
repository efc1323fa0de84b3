//! Measuring on a device, as the benchmark harness (`crossgemm bench`) does it: a
//! [`Timer`] that times any queued work with the device's clock under one protocol
//! (warm-up, L2 flush outside the timed region, median of many runs), the device's copy
//! bandwidth, the cost of a bare launch and, with the `baseline` feature, the vendor
//! libraries (cuBLAS, cuBLASLt) on the same buffers and stream as ours.

#[cfg(feature = "baseline")]
pub mod baseline;
mod epilogue;
mod launch;
mod variant;

pub use epilogue::Epilogue;

pub use gemm_core::codegen::Variant;
pub use launch::{back_to_back_us, bare_launch_us, bare_submit_us, empty_launch_timed};
pub use variant::{prepare_config, run_prepared, time_config, time_prepared, ConfigRun, Prepared};

use crate::device::{Device, RawBuffer};
use crate::error::{GemmError, Result};

/// Fewest timed runs a [`Timer`] makes (the protocol: median of at least 10).
pub const MIN_RUNS: usize = 10;

/// What timing one piece of work gave, µs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Median of the timed runs.
    pub median_us: f64,
    /// Fastest run.
    pub min_us: f64,
    /// Slowest run.
    pub max_us: f64,
    /// Timed runs.
    pub runs: usize,
}

/// Times work queued on one device: `warmup` untimed runs, then `runs` timed ones, each
/// preceded by an overwrite of a buffer larger than the L2 cache (queued before the
/// start timestamp, so it is not counted) and bracketed by device timestamps (CUDA
/// events; on OpenCL the host clock between two queue drains; see `Backend::time_region`).
///
/// The same timer times ours and the vendor libraries, so they see the same protocol.
pub struct Timer {
    device: Device,
    flush: Option<RawBuffer>,
    warmup: usize,
    runs: usize,
}

impl Timer {
    /// A timer on `device` that flushes `flush_bytes` (0: no flush) before each run and
    /// takes the median of `runs` (at least [`MIN_RUNS`]) after `warmup` untimed runs.
    pub fn new(device: &Device, flush_bytes: usize, warmup: usize, runs: usize) -> Result<Timer> {
        let flush = (flush_bytes > 0)
            .then(|| RawBuffer::new(device, flush_bytes))
            .transpose()?;
        Ok(Timer {
            device: device.clone(),
            flush,
            warmup,
            runs: runs.max(MIN_RUNS),
        })
    }

    /// The flush the tuner uses for a target with `l2_bytes` of L2 on `device`.
    pub fn flush_bytes_for(device: &Device, l2_bytes: u64) -> usize {
        let i = device.info();
        crate::measure::flush_bytes(l2_bytes, i.device_type, i.global_mem_bytes)
    }

    /// Timed runs per measurement.
    pub fn runs(&self) -> usize {
        self.runs
    }

    /// Times `work`, which must queue the same work on this timer's device each call.
    pub fn time(&self, work: &mut dyn FnMut() -> Result<()>) -> Result<Sample> {
        let mut s = self.time_together(&mut [work])?;
        Ok(s.remove(0))
    }

    /// Times several works side by side: the warm-ups of each, then `runs` rounds, each a
    /// flushed, timed run of every work in turn (reversed every other round). A GPU's
    /// clock drifts as it heats up to its power limit, so works timed one after the other
    /// are timed at different clocks; in rounds, every work's sample spans the same
    /// stretch of time and their ratio is the works' own.
    pub fn time_together(&self, works: &mut [&mut dyn FnMut() -> Result<()>]) -> Result<Vec<Sample>> {
        let b = self.device.backend();
        for work in works.iter_mut() {
            for _ in 0..self.warmup {
                work()?;
            }
        }
        let mut timed: Vec<_> = works
            .iter_mut()
            .map(|work| move || Ok(b.time_region(&mut **work)? * 1e3))
            .collect();
        let us = crate::measure::in_rounds(&mut timed, self.flush.as_ref(), self.runs)?;
        self.device.synchronize()?;
        Ok(us
            .into_iter()
            .map(|mut us| {
                let (min_us, max_us) = us
                    .iter()
                    .fold((f64::INFINITY, 0f64), |(lo, hi), &t| (lo.min(t), hi.max(t)));
                Sample {
                    median_us: crate::measure::median(&mut us),
                    min_us,
                    max_us,
                    runs: self.runs,
                }
            })
            .collect())
    }
}

/// The buffer size [`copy_gbps`] should copy on `device` so that the copy streams from
/// memory rather than a cache of `l2_bytes`: 4x L2 and at least 512 MiB on GPUs; 64 MiB
/// on CPU devices, whose copies are slow and whose caches are small.
pub fn copy_bytes_for(device: &Device, l2_bytes: u64) -> usize {
    match device.info().device_type {
        gemm_core::target::DeviceType::Cpu => 64 << 20,
        _ => (4 * l2_bytes as usize).max(512 << 20),
    }
}

/// Device-to-device copy bandwidth, GB/s, counting bytes read plus bytes written (as
/// `nvbandwidth` and the STREAM copy do): the ceiling for memory-bound GEMMs. `bytes` is
/// the size of one buffer (use well above the L2 size); median of [`MIN_RUNS`] copies.
pub fn copy_gbps(device: &Device, bytes: usize) -> Result<f64> {
    if bytes == 0 {
        return Err(GemmError::Unsupported("a copy of 0 bytes has no bandwidth".into()));
    }
    let (src, dst) = (RawBuffer::new(device, bytes)?, RawBuffer::new(device, bytes)?);
    src.fill(1)?;
    let timer = Timer::new(device, 0, 2, MIN_RUNS)?;
    let s = timer.time(&mut || device.backend().copy(&src, &dst, bytes))?;
    Ok(2.0 * bytes as f64 / (s.median_us * 1e-6) / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Matrix, Row};

    #[test]
    fn host_timer_and_copy() {
        let dev = Device::host();
        let t = Timer::new(&dev, 1 << 20, 1, 3).unwrap();
        assert_eq!(t.runs(), MIN_RUNS);
        let mut calls = 0;
        let s = t
            .time(&mut || {
                calls += 1;
                std::thread::sleep(std::time::Duration::from_micros(200));
                Ok(())
            })
            .unwrap();
        assert_eq!(calls, 1 + MIN_RUNS);
        assert!(
            s.min_us >= 200.0 && s.min_us <= s.median_us && s.median_us <= s.max_us,
            "{s:?}"
        );
        assert!(copy_gbps(&dev, 1 << 20).unwrap() > 0.0);
        assert!(copy_gbps(&dev, 0).is_err());
    }

    /// On every device found; a missing OpenCL or CUDA device is a reported skip (a
    /// failure under its REQUIRE switch), not a quiet run on the host alone.
    #[test]
    fn copy_moves_the_bytes() {
        let devs = Device::list();
        for dev in &devs {
            let a = Row::<f32>::from_host(dev, &[1.0, 2.0, 3.0, 4.0]).unwrap();
            let b = Matrix::<f32>::zeros(dev, 1, 4).unwrap();
            dev.backend().copy(&a.buf, &b.buf, 12).unwrap();
            assert_eq!(b.to_host().unwrap(), vec![1.0, 2.0, 3.0, 0.0], "{}", dev.info().id);
            assert!(dev.backend().copy(&a.buf, &b.buf, 17).is_err());
        }
        for (kind, switch) in [
            (gemm_core::Backend::Opencl, "CROSSGEMM_REQUIRE_OPENCL"),
            (gemm_core::Backend::Cuda, "CROSSGEMM_REQUIRE_CUDA"),
        ] {
            if !devs.iter().any(|d| d.info().kind == kind) {
                crate::device::test_switches::skip(
                    "bench::copy_moves_the_bytes",
                    &format!("the copy on a {kind:?} device"),
                    &format!("no {kind:?} device was found"),
                    switch,
                );
            }
        }
    }

    #[test]
    fn works_timed_together_take_turns() {
        let t = Timer::new(&Device::host(), 0, 1, MIN_RUNS).unwrap();
        let order = std::cell::RefCell::new(Vec::new());
        let mut a = || {
            order.borrow_mut().push('a');
            std::thread::sleep(std::time::Duration::from_micros(300));
            Ok(())
        };
        let mut b = || {
            order.borrow_mut().push('b');
            Ok(())
        };
        let s = t.time_together(&mut [&mut a, &mut b]).unwrap();
        // Each one's warm-up, then one timed run of each per round, every other round in
        // reverse order.
        let rounds: String = (0..MIN_RUNS).map(|r| if r % 2 == 0 { "ab" } else { "ba" }).collect();
        let want: String = "ab".chars().chain(rounds.chars()).collect();
        assert_eq!(order.borrow().iter().collect::<String>(), want);
        assert_eq!(s.len(), 2);
        assert!(s[0].min_us >= 300.0 && s[1].median_us < s[0].median_us, "{s:?}");
        assert!(s.iter().all(|s| s.runs == MIN_RUNS));
    }

    #[test]
    fn errors_inside_the_timed_work_surface() {
        let t = Timer::new(&Device::host(), 0, 0, 1).unwrap();
        let r = t.time(&mut || Err(GemmError::Unsupported("boom".into())));
        assert!(matches!(r, Err(GemmError::Unsupported(m)) if m == "boom"));
    }
}
