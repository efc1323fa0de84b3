//! The caller's CUDA stream and memory (issue 13): a [`Device`] whose every piece of work
//! goes to a stream the program made ([`Device::from_cuda_stream`]), and views of the
//! program's device memory without a copy ([`Matrix::from_cuda_slice`](crate::Matrix::from_cuda_slice)
//! and its siblings), the CUDA counterpart of the OpenCL queue and buffer interop.

use super::{cuda_present, device_info, driver_err, driver_version, nvrtc_present, Ctx, CudaBackend};
use crate::device::{Device, RawBuffer};
use crate::error::{GemmError, Result};
use cudarc::driver::{sys as dsys, CudaContext, CudaSlice, CudaStream, CudaView, DevicePtr};
use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The alignment every view's first byte needs: crossgemm's CUDA kernels move operands in
/// 16-byte chunks from the base address on (cp.async and vector loads where a row is a
/// multiple of 16 bytes, TMA maps, whose global address must be 16-byte aligned, and the
/// epilogue's 16-byte stores), all of which assume an aligned base; its own allocations
/// are 256-byte aligned.
pub(crate) const VIEW_ALIGN: u64 = 16;

/// Numbers the devices made from callers' streams, for their ids (`cuda:0+stream3`).
static EXTERNAL: AtomicUsize = AtomicUsize::new(0);

/// A view of device memory that crossgemm does not own (the caller's), as a
/// [`RawBuffer`] holds it. Dropping it never frees the memory.
pub(crate) struct CudaBorrowed {
    /// The view's first byte.
    pub(crate) ptr: dsys::CUdeviceptr,
    /// The view's size.
    pub(crate) bytes: usize,
    /// The `CUcontext` the memory belongs to (that of the device it was made for).
    pub(crate) ctx: usize,
    /// The stream the caller's memory lives on, where that is not the device's, and the
    /// device's stream: the first is made to wait for the second when the view is dropped.
    join_on_drop: Option<(Arc<CudaStream>, Arc<CudaStream>)>,
    /// The caller's `Arc<CudaSlice<T>>`, which keeps the memory alive while the view is
    /// (`None` where the caller promised to, `unsafe` constructors).
    _keep: Option<Arc<dyn Any + Send + Sync>>,
}

impl Drop for CudaBorrowed {
    fn drop(&mut self) {
        // cudarc frees a slice on its own stream (when its last `Arc` goes, maybe this
        // view's), and that stream knows nothing of the kernels crossgemm queued on the
        // device's: without this a free, or the caller's next write, could overtake them.
        if let Some((owner, device)) = &self.join_on_drop {
            // A drop cannot return the error; cudarc keeps it and its next call reports it.
            owner.context().record_err(owner.join(device));
        }
    }
}

/// The caller's memory a view is cut from, as far as crossgemm can tell.
struct Source {
    /// Its first byte.
    base: dsys::CUdeviceptr,
    /// Its size.
    bytes: usize,
    /// The stream it lives on, where known (a cudarc slice's).
    stream: Option<Arc<CudaStream>>,
    /// What keeps it alive, where crossgemm holds that.
    keep: Option<Arc<dyn Any + Send + Sync>>,
}

fn interop_err(op: &str, message: String) -> GemmError {
    GemmError::Driver {
        backend: "CUDA",
        op: op.into(),
        message,
        source: None,
    }
}

const VIEW_OP: &str = "viewing a caller's CUDA memory";

/// A caller's stream needs NVRTC (every kernel is compiled for the device) and the driver
/// library as cudarc loads it: cudarc panics where either is missing, so say so first.
fn check_libraries(op: &str) -> Result<()> {
    if !cuda_present() {
        return Err(interop_err(op, "libcuda.so.1 was not found".into()));
    }
    if !nvrtc_present() {
        return Err(interop_err(
            op,
            "libnvrtc.so.13, which compiles crossgemm's kernels, was not found (is its folder on LD_LIBRARY_PATH?)"
                .into(),
        ));
    }
    Ok(())
}

impl CudaBackend {
    /// A backend whose context and stream are `c`, made already: nothing is created, and
    /// cudarc's event tracking stays as the context's owner set it.
    fn on_stream(c: Ctx) -> Result<CudaBackend> {
        let ordinal = c.ctx.ordinal();
        let id = format!("cuda:{ordinal}+stream{}", EXTERNAL.fetch_add(1, Ordering::Relaxed));
        let driver = driver_version().unwrap_or_else(|| "unknown".into());
        let info = device_info(c.ctx.cu_device(), id, &driver)?;
        Ok(CudaBackend::with_ctx(info, ordinal, OnceLock::from(Ok(c))))
    }
}

impl Device {
    /// A device that runs everything on the caller's CUDA stream: every upload, launch,
    /// download, fill and copy of crossgemm's calls on it is queued there, in order with
    /// the caller's own work on it, and a launch returns without waiting (only
    /// [`Device::synchronize`], a download, an upload of host data, a tune (under
    /// `CROSSGEMM_TUNE=full`, a launch whose shape has no winner yet) and the first launch
    /// of a config at a new build variant, which checks it, wait for the stream).
    ///
    /// Its context is the stream's ([`CudaStream::context`]); the device holds the
    /// stream's `Arc`, so stream and context live while the device or a buffer of it
    /// does, whatever the caller drops. Its [`DeviceInfo`](crate::DeviceInfo) is read from
    /// the context's device as discovery reads it (name, compute capability, SM count,
    /// shared memory), so target matching, the tuning cache (keyed by device name), the
    /// compiled-kernel cache and the TMA/wgmma kernels work as on
    /// [`Device::open`]`("cuda:N")`; its id is `cuda:N+streamK`.
    ///
    /// Views of the caller's memory of the same context can be operands
    /// ([`Matrix::from_cuda_slice`](crate::Matrix::from_cuda_slice)); crossgemm's own
    /// devices do not mix with this one in a call (they are other devices, whatever
    /// their context). cudarc's event tracking is left as the caller set it on the
    /// context: crossgemm orders its own work by the one stream, and work of the caller's
    /// on other streams is ordered with it as the views' docs say. Like cudarc's own
    /// calls, crossgemm's make the context current on the calling thread.
    ///
    /// An error if NVRTC (libnvrtc.so.13, which compiles the kernels) cannot be loaded.
    pub fn from_cuda_stream(stream: &Arc<CudaStream>) -> Result<Device> {
        check_libraries("making a device from a caller's CUDA stream")?;
        let c = Ctx {
            ctx: stream.context().clone(),
            stream: stream.clone(),
        };
        Ok(Device::from_backend(Box::new(CudaBackend::on_stream(c)?)))
    }

    /// [`Device::from_cuda_stream`] for another binding's raw handles (the CUDA runtime
    /// API's, PyTorch's): `stream` of the context `ctx`.
    ///
    /// `ctx` must be its device's **primary** context (the one the runtime API and
    /// `cudarc::driver::CudaContext::new` use), which crossgemm retains like any user of
    /// it, so that it lives while the device does. Another context is an error: cudarc
    /// 0.19 can wrap a foreign context only by taking it over
    /// (`CudaContext::from_raw_context` destroys it when dropped), so it cannot be
    /// borrowed; wrap such a context in a `CudaContext` yourself (handing it over) and use
    /// [`Device::from_cuda_stream`]. A stream of another context is an error too.
    ///
    /// # Safety
    /// `ctx` must be a valid context and `stream` a valid stream of it, and the stream
    /// must outlive the returned device, its clones and every buffer made on them
    /// (crossgemm borrows it: dropping the device never destroys it). The null stream
    /// (`0`) and the per-thread stream (`2`) are valid streams of every context.
    pub unsafe fn from_raw_cuda_stream(ctx: dsys::CUcontext, stream: dsys::CUstream) -> Result<Device> {
        let op = "making a device from a caller's raw CUDA stream";
        check_libraries(op)?;
        super::dres::init().map_err(|e| driver_err(op, e))?;
        // SAFETY (caller): `ctx` is a valid context.
        let dev = unsafe { context_device(ctx) }.map_err(|e| driver_err(op, e))?;
        let ours = primary_context(dev, ctx, op)?;
        // SAFETY (caller): `stream` is a valid stream; `ours` is current (CudaContext::new).
        let of_stream = unsafe { stream_context(stream) }.map_err(|e| driver_err(op, e))?;
        if of_stream != ctx {
            return Err(interop_err(
                op,
                "the stream belongs to another context than `ctx`".into(),
            ));
        }
        // SAFETY: the context is crossgemm's handle alone; everything on it goes to the
        // one stream, as on a discovered device.
        unsafe { ours.disable_event_tracking() };
        // SAFETY: a stream of this context (checked), which the caller keeps alive while
        // the device and its buffers live; crossgemm's work on it is ordered by the stream.
        let stream = unsafe { ours.wrap_borrowed_stream(stream) };
        let c = Ctx { ctx: ours, stream };
        Ok(Device::from_backend(Box::new(CudaBackend::on_stream(c)?)))
    }

    /// A view of `bytes` from byte `origin` of the caller's `slice`, which it holds (an
    /// `Arc` clone) so that the memory lives as long as the view.
    pub(crate) fn view_cuda_slice<T: 'static>(
        &self,
        slice: &Arc<CudaSlice<T>>,
        origin: usize,
        bytes: usize,
    ) -> Result<RawBuffer> {
        let keep: Arc<dyn Any + Send + Sync> = slice.clone();
        self.view_cuda_memory(&**slice, Some(keep), origin, bytes)
    }

    /// A view of `bytes` from byte `origin` of the caller's `view`.
    ///
    /// # Safety
    /// The slice `view` is of must outlive the returned buffer.
    pub(crate) unsafe fn view_cuda_view<T>(
        &self,
        view: &CudaView<'_, T>,
        origin: usize,
        bytes: usize,
    ) -> Result<RawBuffer> {
        self.view_cuda_memory(view, None, origin, bytes)
    }

    /// A view of `bytes` from byte `origin` of `len` bytes of the caller's memory at `ptr`.
    ///
    /// # Safety
    /// `ptr` must be `len` bytes of device memory of this device's context that outlive
    /// the returned buffer.
    pub(crate) unsafe fn view_raw_cuda_ptr(
        &self,
        ptr: dsys::CUdeviceptr,
        len: usize,
        origin: usize,
        bytes: usize,
    ) -> Result<RawBuffer> {
        let (b, c) = self.cuda_for_view()?;
        let src = Source {
            base: ptr,
            bytes: len,
            stream: None,
            keep: None,
        };
        self.cut_view(b, c, src, origin, bytes)
    }

    /// A view of a cudarc slice or view (`mem`): checked to be of this device's context
    /// before crossgemm touches it.
    fn view_cuda_memory<T, M: DevicePtr<T>>(
        &self,
        mem: &M,
        keep: Option<Arc<dyn Any + Send + Sync>>,
        origin: usize,
        bytes: usize,
    ) -> Result<RawBuffer> {
        let (b, c) = self.cuda_for_view()?;
        let stream = mem.stream();
        if stream.context().cu_ctx() != c.ctx.cu_ctx() {
            return Err(interop_err(
                VIEW_OP,
                format!(
                    "the memory belongs to another CUDA context than {}'s stream: make the device from a stream of the slice's context",
                    b.info.id
                ),
            ));
        }
        // Where cudarc tracks the slice's events (its context's owner's choice), this
        // makes the device's stream wait for the slice's pending writes; otherwise the
        // guard does nothing. crossgemm's later use goes unrecorded: see the views' docs.
        let (base, _sync) = mem.device_ptr(&c.stream);
        let src = Source {
            base,
            bytes: mem.num_bytes(),
            stream: Some(stream.clone()),
            keep,
        };
        self.cut_view(b, c, src, origin, bytes)
    }

    /// This device's CUDA backend and context, for a view; an error for other devices.
    fn cuda_for_view(&self) -> Result<(&CudaBackend, &Ctx)> {
        let b = self
            .backend()
            .as_cuda()
            .ok_or_else(|| interop_err(VIEW_OP, format!("{} is not a CUDA device", self.info().id)))?;
        Ok((b, b.ctx()?))
    }

    /// The view of `bytes` from byte `origin` of `src`: inside it, aligned, and with the
    /// streams ordered where the memory lives on another stream than the device's.
    fn cut_view(&self, b: &CudaBackend, c: &Ctx, src: Source, origin: usize, bytes: usize) -> Result<RawBuffer> {
        let ptr = view_start(src.base, src.bytes, origin, bytes).map_err(|m| interop_err(VIEW_OP, m))?;
        let join_on_drop = match src.stream {
            Some(owner) if owner.cu_stream() != c.stream.cu_stream() => {
                // The caller's work on the memory's own stream so far (its writes of the
                // operand) comes before crossgemm's on the device's.
                c.stream
                    .join(&owner)
                    .map_err(|e| driver_err(format!("ordering the streams of a view on {}", b.info.id), e))?;
                Some((owner, c.stream.clone()))
            }
            _ => None,
        };
        Ok(RawBuffer {
            device: self.clone(),
            bytes,
            inner: Box::new(CudaBorrowed {
                ptr,
                bytes,
                ctx: c.ctx.cu_ctx() as usize,
                join_on_drop,
                _keep: src.keep,
            }),
        })
    }
}

/// The first byte of a view of `bytes` from byte `origin` of `held` bytes at `base`, or
/// why there is none: past the end, or not 16-byte aligned ([`VIEW_ALIGN`]).
fn view_start(base: dsys::CUdeviceptr, held: usize, origin: usize, bytes: usize) -> std::result::Result<u64, String> {
    if origin.checked_add(bytes).is_none_or(|end| end > held) {
        return Err(format!(
            "the memory holds {held} bytes; the view needs {bytes} from byte {origin}"
        ));
    }
    let ptr = base
        .checked_add(origin as u64)
        .ok_or_else(|| format!("byte {origin} of memory at {base:#x} is past the address space"))?;
    if !ptr.is_multiple_of(VIEW_ALIGN) {
        return Err(format!(
            "the view starts at {ptr:#x} (byte {origin} of memory at {base:#x}), which is not {VIEW_ALIGN}-byte aligned: crossgemm's CUDA kernels load and store operands in 16-byte chunks from their base"
        ));
    }
    Ok(ptr)
}

/// The device of the context `ctx`, without leaving it current.
///
/// # Safety
/// `ctx` must be a valid context.
unsafe fn context_device(ctx: dsys::CUcontext) -> std::result::Result<dsys::CUdevice, super::dres::DriverError> {
    unsafe { dsys::cuCtxPushCurrent_v2(ctx) }.result()?;
    let mut dev: dsys::CUdevice = 0;
    // SAFETY: writes one device handle; `ctx` is current.
    let got = unsafe { dsys::cuCtxGetDevice(&mut dev) }.result();
    let mut popped: dsys::CUcontext = std::ptr::null_mut();
    // SAFETY: pops what was pushed above.
    unsafe { dsys::cuCtxPopCurrent_v2(&mut popped) }.result()?;
    got.map(|_| dev)
}

/// The context of `stream` (for the null and per-thread streams: the current one).
///
/// # Safety
/// `stream` must be a valid stream.
unsafe fn stream_context(stream: dsys::CUstream) -> std::result::Result<dsys::CUcontext, super::dres::DriverError> {
    let mut ctx: dsys::CUcontext = std::ptr::null_mut();
    // SAFETY: writes one context handle.
    unsafe { dsys::cuStreamGetCtx(stream, &mut ctx) }.result()?;
    Ok(ctx)
}

/// crossgemm's own handle of `raw`, which must be `dev`'s primary context: retaining the
/// primary context again is a reference like any other user's, released when the handle
/// drops, so it borrows `raw` without taking it over.
fn primary_context(dev: dsys::CUdevice, raw: dsys::CUcontext, op: &str) -> Result<Arc<CudaContext>> {
    let (mut flags, mut active) = (0u32, 0i32);
    // SAFETY: writes two ints; `dev` came from a live context.
    unsafe { dsys::cuDevicePrimaryCtxGetState(dev, &mut flags, &mut active) }
        .result()
        .map_err(|e| driver_err(op, e))?;
    // An inactive primary context cannot be `raw`, and retaining it would create it.
    if active != 0 {
        let ordinal = ordinal_of(dev).map_err(|e| driver_err(op, e))?;
        let ours = CudaContext::new(ordinal).map_err(|e| driver_err(op, e))?;
        if ours.cu_ctx() == raw {
            return Ok(ours);
        }
    }
    Err(interop_err(
        op,
        "`ctx` is not its device's primary context, and cudarc can wrap another context only by taking it over: make a cudarc CudaContext of it (CudaContext::from_raw_context) and use Device::from_cuda_stream"
            .into(),
    ))
}

/// The ordinal cudarc and `cuDeviceGet` number `dev` by.
fn ordinal_of(dev: dsys::CUdevice) -> std::result::Result<usize, super::dres::DriverError> {
    let count = super::dres::device::get_count()?;
    for ordinal in 0..count {
        if super::dres::device::get(ordinal)? == dev {
            return Ok(ordinal as usize);
        }
    }
    // A device handle from a live context is always one of them.
    Err(super::dres::DriverError(dsys::CUresult::CUDA_ERROR_INVALID_DEVICE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_must_fit_and_start_16_byte_aligned() {
        let base = 0x7f00_0000_0100;
        assert_eq!(view_start(base, 64, 0, 64), Ok(base));
        assert_eq!(view_start(base, 64, 48, 16), Ok(base + 48));
        // An empty view at the very end is still inside.
        assert_eq!(view_start(base, 64, 64, 0), Ok(base + 64));
        let e = view_start(base, 64, 16, 64).unwrap_err();
        assert!(e.contains("holds 64 bytes; the view needs 64 from byte 16"), "{e}");
        assert!(view_start(base, 64, usize::MAX, 2).is_err());
        for origin in [2, 8, 30] {
            let e = view_start(base, 64, origin, 2).unwrap_err();
            assert!(e.contains("not 16-byte aligned"), "{origin}: {e}");
        }
        // A base of the caller's that is itself misaligned.
        assert!(view_start(base + 4, 64, 0, 4).is_err());
    }
}
