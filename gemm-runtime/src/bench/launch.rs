//! The cost of a bare driver launch: the floor a generated kernel's warm call is
//! compared with (examples/launch_overhead.rs, `crossgemm bench`), and the floor under a
//! timer's times ([`empty_launch_timed`], `crossgemm diagnose`).

use super::{Sample, Timer};
use crate::device::Device;
use crate::error::{GemmError, Result};
use gemm_core::Backend;
use gemm_core::LaunchDims;
use std::any::Any;
use std::sync::Arc;
use std::time::Instant;

const EMPTY_CUDA: &str = "extern \"C\" __global__ void cg_empty() {}\n";
const EMPTY_OPENCL: &str = "__kernel void cg_empty() {}\n";

/// The cost of a bare driver launch on `device`, µs per launch: an empty kernel with no
/// arguments, one block of one thread, compiled through the backend, launched `iters`
/// times back to back and timed with the host clock up to a final synchronize (after a
/// short warm-up). This is the floor a generated kernel's warm call is compared with.
#[doc(hidden)]
pub fn bare_launch_us(device: &Device, iters: usize) -> Result<f64> {
    bare_launches(device, iters, true)
}

/// Host time to submit one launch of an empty kernel, without waiting for any: the
/// driver's own per-launch cost, against which a wrapper's added cost is measured.
/// `iters` is kept below the launch queue's depth so that submission never blocks.
#[doc(hidden)]
pub fn bare_submit_us(device: &Device, iters: usize) -> Result<f64> {
    bare_launches(device, iters.min(256), false)
}

/// What a timer's time of a kernel holds besides the kernel: an empty kernel launched as
/// `timer` times a call (its L2 overwrite queued before each run, device timestamps around
/// the launch). On the H200 this is 2.8 µs whatever shared memory the kernel asks for
/// (bench/results/h200-2026-12-03t8), a sixth of a 16 µs GEMM: read short kernels' times,
/// and their differences, above it.
pub fn empty_launch_timed(device: &Device, timer: &Timer) -> Result<Sample> {
    let (kernel, dims) = empty_kernel(device)?;
    let backend = device.backend();
    timer.time(&mut || backend.launch(&*kernel, dims, &[]))
}

fn bare_launches(device: &Device, iters: usize, wait: bool) -> Result<f64> {
    let (kernel, dims) = empty_kernel(device)?;
    let backend = device.backend();
    timed_calls(device, iters, wait, &mut || backend.launch(&*kernel, dims, &[]))
}

/// The empty kernel with no arguments, compiled through `device`'s backend, and its launch
/// of one block of one thread.
fn empty_kernel(device: &Device) -> Result<(Arc<dyn Any + Send + Sync>, LaunchDims)> {
    let source = match device.info().kind {
        Backend::Cuda => EMPTY_CUDA,
        Backend::Opencl => EMPTY_OPENCL,
        Backend::Host => {
            return Err(GemmError::Unsupported(
                "the host device has no driver launch to measure".into(),
            ))
        }
    };
    let kernel = device.kernel(source, "cg_empty", &[], &Default::default())?;
    let dims = LaunchDims {
        grid: [1, 1, 1],
        block: [1, 1, 1],
        smem_bytes: 0,
        persistent: None,
    };
    Ok((kernel, dims))
}

/// µs per call of `iters` back-to-back calls of `call` (which queues work on `device`),
/// host-timed up to a final synchronize, after `iters` (10 to 1000) untimed calls: what
/// a warm call of a wrapper costs, to set beside [`bare_launch_us`].
pub fn back_to_back_us(device: &Device, iters: usize, call: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
    timed_calls(device, iters, true, call)
}

/// [`back_to_back_us`]; without `wait` the clock stops when the last call returns, not
/// when the device is done (the host's submission cost).
fn timed_calls(device: &Device, iters: usize, wait: bool, call: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
    for _ in 0..iters.clamp(10, 1000) {
        call()?;
    }
    device.synchronize()?;
    let iters = iters.max(1);
    let start = Instant::now();
    for _ in 0..iters {
        call()?;
    }
    if wait {
        device.synchronize()?;
    }
    let us = start.elapsed().as_secs_f64() * 1e6 / iters as f64;
    device.synchronize()?;
    Ok(us)
}
