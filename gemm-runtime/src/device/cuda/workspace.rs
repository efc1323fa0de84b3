//! The scratch memory of launches that take a [`Workspace`] (the wgmma family's split-K):
//! one pair of buffers per device, grown to the largest a launch has needed.
//!
//! Every launch of a device runs on its one stream, so launches that share the buffers
//! run one after the other; the counters are zero at allocation, and each kernel that
//! counts on them leaves them zero, so they are zero for the next launch too. A buffer
//! that is replaced by a larger one is freed in stream order (cudarc frees asynchronously
//! on the stream, or synchronises first), after the launches that still use it.

use super::driver_err;
use crate::error::Result;
use cudarc::driver::{sys as dsys, CudaSlice, CudaStream, DevicePtr};
use gemm_core::Workspace;
use std::sync::{Arc, Mutex};

/// Allocations grow in steps of this many bytes at least, so that a tune over a few
/// shapes does not reallocate at each.
const STEP: usize = 1 << 20;

struct Buffers {
    data: CudaSlice<u8>,
    flags: CudaSlice<u8>,
}

/// A device's workspace (see the module doc).
#[derive(Default)]
pub(super) struct Workspaces {
    held: Mutex<Option<Buffers>>,
}

impl Workspaces {
    /// The device addresses of scratch data of at least `need.bytes` and of `need.flags`
    /// zeroed counters, valid for launches queued on `stream` from now until the next call.
    pub(super) fn pointers(
        &self,
        stream: &Arc<CudaStream>,
        need: Workspace,
    ) -> Result<(dsys::CUdeviceptr, dsys::CUdeviceptr)> {
        let data_bytes = usize::try_from(need.bytes).unwrap_or(usize::MAX).max(16);
        let flag_bytes = usize::try_from(need.flags.saturating_mul(4))
            .unwrap_or(usize::MAX)
            .max(16);
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let alloc = |bytes: usize, what: &str| {
            let bytes = bytes.div_ceil(STEP) * STEP;
            stream
                .alloc_zeros::<u8>(bytes)
                .map_err(|e| driver_err(format!("allocating {bytes} bytes of split-K {what}"), e))
        };
        // Each buffer is kept when it is large enough, else replaced.
        let keep = |old: Option<CudaSlice<u8>>, bytes: usize, what: &str| match old {
            Some(s) if s.len() >= bytes => Ok(s),
            _ => alloc(bytes, what),
        };
        let (old_data, old_flags) = held.take().map(|b| (b.data, b.flags)).unzip();
        let data = keep(old_data, data_bytes, "workspace")?;
        let flags = keep(old_flags, flag_bytes, "counters")?;
        let (d, _r1) = data.device_ptr(stream);
        let (f, _r2) = flags.device_ptr(stream);
        drop((_r1, _r2));
        *held = Some(Buffers { data, flags });
        Ok((d, f))
    }
}
