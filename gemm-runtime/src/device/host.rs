//! The host "device": buffers in host memory; launches never happen, because the
//! launcher runs the host reference for it directly.

use super::{DeviceBackend, DeviceInfo, KernelArg, RawBuffer, RowCopy};
use crate::error::{GemmError, Result};
use gemm_core::target::DeviceType;
use gemm_core::Backend;
use gemm_core::{CompileNeeds, LaunchDims};
use std::any::Any;
use std::sync::{Arc, RwLock};

pub(crate) struct HostBackend {
    info: DeviceInfo,
}

/// Host memory of a buffer on the host device.
pub(crate) type HostMem = RwLock<Vec<u8>>;

impl HostBackend {
    pub(crate) fn new() -> HostBackend {
        HostBackend {
            info: DeviceInfo {
                kind: Backend::Host,
                id: "host".into(),
                name: "host reference (CPU, f64 accumulation)".into(),
                platform: "crossgemm".into(),
                driver: env!("CARGO_PKG_VERSION").into(),
                device_type: DeviceType::Cpu,
                compute_capability: None,
                compute_units: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
                smem_per_block: 0,
                max_threads_per_block: 1,
                global_mem_bytes: 0,
            },
        }
    }
}

fn mem(buf: &RawBuffer) -> &HostMem {
    buf.inner
        .downcast_ref::<HostMem>()
        .expect("host buffer on the host device")
}

impl DeviceBackend for HostBackend {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }
    fn alloc(&self, bytes: usize) -> Result<Box<dyn Any + Send + Sync>> {
        Ok(Box::new(HostMem::new(vec![0u8; bytes])))
    }
    fn upload(&self, dst: &RawBuffer, src: &[u8]) -> Result<()> {
        mem(dst).write().expect("host buffer poisoned")[..src.len()].copy_from_slice(src);
        Ok(())
    }
    fn download(&self, src: &RawBuffer, dst: &mut [u8]) -> Result<()> {
        let n = dst.len();
        dst.copy_from_slice(&mem(src).read().expect("host buffer poisoned")[..n]);
        Ok(())
    }
    fn compile(
        &self,
        _: &str,
        symbol: &str,
        _: &[(String, u32)],
        _: &CompileNeeds,
    ) -> Result<Arc<dyn Any + Send + Sync>> {
        Err(GemmError::Unsupported(format!(
            "the host device does not compile kernels (`{symbol}`)"
        )))
    }
    fn launch(&self, _: &(dyn Any + Send + Sync), _: LaunchDims, _: &[KernelArg<'_>]) -> Result<()> {
        Err(GemmError::Unsupported("the host device does not launch kernels".into()))
    }
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
    fn fill(&self, buf: &RawBuffer, byte: u8) -> Result<()> {
        mem(buf).write().expect("host buffer poisoned").fill(byte);
        Ok(())
    }
    fn time_launch(&self, _: &(dyn Any + Send + Sync), _: LaunchDims, _: &[KernelArg<'_>]) -> Result<f64> {
        Err(GemmError::Unsupported(
            "the host device does not launch (or time) kernels".into(),
        ))
    }
    fn time_region(&self, work: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        // Host work is synchronous: the wall clock is the device clock.
        let start = std::time::Instant::now();
        work()?;
        Ok(start.elapsed().as_secs_f64() * 1e3)
    }
    fn copy_rows(&self, src: &RawBuffer, dst: &RawBuffer, r: RowCopy) -> Result<()> {
        if !r.fits(src.bytes, dst.bytes) {
            return Err(GemmError::Unsupported(format!(
                "{r:?} between buffers of {} and {} bytes",
                src.bytes, dst.bytes
            )));
        }
        let from = mem(src).read().expect("host buffer poisoned").clone();
        let mut to = mem(dst).write().expect("host buffer poisoned");
        for i in 0..r.rows {
            let (s, d) = (r.src_off + i * r.src_pitch, r.dst_off + i * r.dst_pitch);
            to[d..d + r.row_bytes].copy_from_slice(&from[s..s + r.row_bytes]);
        }
        Ok(())
    }
    fn copy(&self, src: &RawBuffer, dst: &RawBuffer, bytes: usize) -> Result<()> {
        if bytes > src.bytes || bytes > dst.bytes {
            return Err(GemmError::Unsupported(format!(
                "copy of {bytes} bytes between buffers of {} and {} bytes",
                src.bytes, dst.bytes
            )));
        }
        let from = mem(src).read().expect("host buffer poisoned")[..bytes].to_vec();
        mem(dst).write().expect("host buffer poisoned")[..bytes].copy_from_slice(&from);
        Ok(())
    }
}
