//! OpenCL devices through opencl3, with libOpenCL loaded at run time (feature `dynamic`):
//! a machine without the library or without an ICD simply has no OpenCL devices.
//!
//! One context and one in-order, profiling-enabled queue per device. Every command goes
//! to that queue, so uploads, launches and downloads on a device are ordered without
//! events, and a blocking download also waits for the launches before it. A device made
//! from a caller's queue ([`Device::from_opencl_queue`]) sends everything to that queue
//! instead, in order with the caller's own work on it.

use super::binary_cache::BinaryCache;
use super::{Device, DeviceBackend, DeviceInfo, KernelArg, RawBuffer, RowCopy};
use crate::error::{GemmError, Result};
use gemm_core::target::DeviceType;
use gemm_core::Backend;
use gemm_core::{CompileNeeds, LaunchDims};
use opencl3::command_queue::{
    enqueue_copy_buffer, enqueue_copy_buffer_rect, enqueue_fill_buffer, enqueue_read_buffer, enqueue_write_buffer,
    retain_command_queue, CommandQueue, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, CL_QUEUE_PROFILING_ENABLE,
};
use opencl3::context::Context;
use opencl3::device::{Device as ClDevice, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU};
use opencl3::error_codes::ClError;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::{retain_mem_object, Buffer, ClMem, CL_MEM_READ_ONLY, CL_MEM_READ_WRITE, CL_MEM_WRITE_ONLY};
use opencl3::platform::get_platforms;
use opencl3::program::Program;
use opencl3::types::{cl_command_queue, cl_float, cl_int, cl_long, cl_mem, CL_BLOCKING};
use std::any::Any;
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

const BACKEND: &str = "OpenCL";

mod compile;
mod interop;

/// Every OpenCL device of this process, found once.
///
/// Cached because `Device::list` (and so `Device::open`/`best`) runs discovery on every
/// call: fresh contexts each time would make a buffer allocated through one `Device::best()`
/// unusable with the next (cl_mem objects belong to one context), would recompile every
/// kernel per handle, and creating a context costs tens of milliseconds on GPU drivers.
pub(crate) fn discover() -> Vec<Device> {
    static ALL: OnceLock<Vec<Device>> = OnceLock::new();
    ALL.get_or_init(discover_uncached).clone()
}

fn discover_uncached() -> Vec<Device> {
    // Without libOpenCL.so.1 or an ICD this is an error code, not a panic: nothing to report.
    let Ok(platforms) = get_platforms() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (p, platform) in platforms.iter().enumerate() {
        let Ok(ids) = platform.get_devices(CL_DEVICE_TYPE_ALL) else {
            continue;
        };
        let platform_name = platform.name().unwrap_or_default().trim().to_string();
        for (d, &id) in ids.iter().enumerate() {
            // A device that cannot be opened is skipped without renumbering the others, so
            // `opencl:P:D` keeps meaning the same device as in `clinfo -l`.
            match OpenclBackend::new(ClDevice::new(id), format!("opencl:{p}:{d}"), &platform_name) {
                Ok(b) => out.push(Device::from_backend(Box::new(b))),
                Err(e) => {
                    if crate::env::log() {
                        eprintln!("crossgemm: skipping OpenCL device opencl:{p}:{d}: {e}");
                    }
                }
            }
        }
    }
    out
}

/// Numbers the devices made from callers' queues, for their ids.
static EXTERNAL: AtomicUsize = AtomicUsize::new(0);

/// The platform and device indices of `dev` as discovery numbers them (`opencl:P:D`),
/// with the platform's name; `(?, ?)` for a device no platform lists.
fn locate(dev: opencl3::types::cl_device_id) -> (String, String, String) {
    if let Ok(platforms) = get_platforms() {
        for (p, platform) in platforms.iter().enumerate() {
            if let Ok(ids) = platform.get_devices(CL_DEVICE_TYPE_ALL) {
                if let Some(d) = ids.iter().position(|&i| i == dev) {
                    let name = platform.name().unwrap_or_default().trim().to_string();
                    return (p.to_string(), d.to_string(), name);
                }
            }
        }
    }
    ("?".into(), "?".into(), String::new())
}

pub(crate) struct OpenclBackend {
    info: DeviceInfo,
    // Declared before `context` so that it is released first.
    queue: CommandQueue,
    context: Context,
    device: ClDevice,
    /// The platform's, device's and OpenCL C versions: part of the binary cache's key.
    compiler: String,
    /// Whether the queue has profiling on (ours always; a caller's may not): without,
    /// a launch is timed on the host clock between two drains of the queue.
    profiling: bool,
    /// Scratch memory of launches that take a workspace (split-K).
    workspaces: crate::device::workspace::Workspaces<Buffer<u8>>,
}

/// Device memory of a buffer on an OpenCL device.
pub(crate) struct ClBuffer {
    mem: Buffer<u8>,
    /// Whether kernels may read and write it (`CL_MEM_READ_ONLY` / `CL_MEM_WRITE_ONLY` of
    /// a caller's memory; a sub-buffer inherits its parent's).
    access: (bool, bool),
    /// The buffer object its memory belongs to (a sub-buffer's parent, else itself) and
    /// its first byte there.
    span: (usize, u64),
    /// The owning context, to refuse a buffer of another context (undefined behaviour on
    /// some drivers rather than a clean error).
    context: usize,
}

/// A compiled kernel. clSetKernelArg is not thread-safe and the arguments are captured
/// only at enqueue time, so the lock is held from the first argument to the enqueue.
pub(crate) struct ClKernel {
    /// Locked while a launch sets their arguments and queues them.
    kernels: Mutex<Passes>,
    // Kept so the program outlives the kernel, whatever the driver's reference counting.
    _program: Program,
    symbol: String,
    context: usize,
}

/// The kernels of one launch, queued in order with the same arguments: the kernel, and
/// where its program has one, a split's second pass over [`gemm_core::sum_pass`]'s grid.
pub(crate) struct Passes {
    main: Kernel,
    sum: Option<Kernel>,
}

/// "launch of `symbol` on device", the operation an error of a launch names.
struct LaunchOp<'a> {
    symbol: &'a str,
    device: &'a str,
}

impl std::fmt::Display for LaunchOp<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "launch of `{}` on {}", self.symbol, self.device)
    }
}

/// A failed OpenCL call: its error as the source, with `context` after its text.
fn cl_err(op: impl Into<String>, e: ClError, context: &str) -> GemmError {
    GemmError::Driver {
        backend: BACKEND,
        op: op.into(),
        message: format!("{e}{context}"),
        source: Some(Box::new(e)),
    }
}

fn driver_err(op: impl Into<String>, message: impl Into<String>) -> GemmError {
    GemmError::Driver {
        backend: BACKEND,
        op: op.into(),
        message: message.into(),
        source: None,
    }
}

fn saturate_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

impl OpenclBackend {
    fn new(device: ClDevice, id: String, platform: &str) -> std::result::Result<OpenclBackend, ClError> {
        let context = Context::from_device(&device)?;
        // clCreateCommandQueue is deprecated since 2.0 but every 1.2–3.0 driver exports
        // it; the 2.0 entry point is only the fallback for a driver that dropped it.
        let queue = match unsafe { CommandQueue::create(&context, device.id(), CL_QUEUE_PROFILING_ENABLE) } {
            Ok(q) => q,
            Err(_) => unsafe {
                CommandQueue::create_with_properties(&context, device.id(), CL_QUEUE_PROFILING_ENABLE, 0)?
            },
        };
        Self::with_queue(device, context, queue, id, platform)
    }

    /// A backend on a queue the caller made (see [`Device::from_opencl_queue`]): its
    /// context and device, retained, so that they outlive the caller's handles if need be.
    ///
    /// # Safety
    /// `raw` must be a valid command queue.
    unsafe fn from_raw_queue(raw: cl_command_queue) -> std::result::Result<OpenclBackend, ClError> {
        // SAFETY (caller): a valid queue. Each retain is matched by the release of the
        // opencl3 wrapper made for it.
        retain_command_queue(raw).map_err(ClError)?;
        let queue = CommandQueue::new(raw, 3);
        let ctx = queue.context()?;
        let dev = queue.device()?;
        opencl3::context::context::retain_context(ctx).map_err(ClError)?;
        let context = Context::new(ctx, &[dev]);
        let device = ClDevice::new(dev);
        let (p, d, platform) = locate(dev);
        let id = format!("opencl:{p}:{d}+queue{}", EXTERNAL.fetch_add(1, Ordering::Relaxed));
        Self::with_queue(device, context, queue, id, &platform)
    }

    /// Whether the queue may run its commands out of order (a caller's queue can).
    pub(super) fn out_of_order(&self) -> std::result::Result<bool, ClError> {
        Ok(self.queue.properties()? & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE != 0)
    }

    fn with_queue(
        device: ClDevice,
        context: Context,
        queue: CommandQueue,
        id: String,
        platform: &str,
    ) -> std::result::Result<OpenclBackend, ClError> {
        let ty = device.dev_type()?;
        let device_type = if ty & CL_DEVICE_TYPE_GPU != 0 {
            DeviceType::Gpu
        } else if ty & CL_DEVICE_TYPE_CPU != 0 {
            DeviceType::Cpu
        } else {
            DeviceType::Accelerator
        };
        let info = DeviceInfo {
            kind: Backend::Opencl,
            id,
            name: device.name()?.trim().to_string(),
            platform: platform.to_string(),
            driver: device.driver_version().unwrap_or_default().trim().to_string(),
            device_type,
            compute_capability: None,
            compute_units: device.max_compute_units()?,
            smem_per_block: saturate_u32(device.local_mem_size()?),
            max_threads_per_block: saturate_u32(device.max_work_group_size()? as u64),
            global_mem_bytes: device.global_mem_size()?,
        };
        let profiling = queue.properties()? & CL_QUEUE_PROFILING_ENABLE != 0;
        let platform_version = device
            .platform()
            .ok()
            .and_then(|p| opencl3::platform::Platform::new(p).version().ok())
            .unwrap_or_default();
        let compiler = format!(
            "{} | {} | {}",
            platform_version.trim(),
            device.version().unwrap_or_default().trim(),
            device.opencl_c_version().unwrap_or_default().trim()
        );
        Ok(OpenclBackend {
            info,
            queue,
            context,
            device,
            compiler,
            profiling,
            workspaces: Default::default(),
        })
    }

    /// A sub-buffer of the caller's `parent` (memory of this backend's context): `bytes`
    /// from byte `origin`, which must be a multiple of the device's base-address
    /// alignment (OpenCL's rule for sub-buffers). The sub-buffer keeps its parent alive.
    ///
    /// # Safety
    /// `parent` must be a valid buffer object.
    pub(crate) unsafe fn sub_buffer(
        &self,
        parent: cl_mem,
        origin: usize,
        bytes: usize,
    ) -> Result<Box<dyn Any + Send + Sync>> {
        let op = || format!("a view at byte {origin} of a caller's cl_mem on {}", self.info.id);
        let align_bits = self.device.mem_base_addr_align().map_err(|e| cl_err(op(), e, ""))? as usize;
        let align = (align_bits / 8).max(1);
        if !origin.is_multiple_of(align) {
            return Err(driver_err(
                op(),
                format!("an OpenCL sub-buffer must start at a multiple of {align} bytes on this device"),
            ));
        }
        // Checked before creating anything: the size and context of the parent.
        let size = opencl3::memory::get_mem_object_info(parent, opencl3::memory::CL_MEM_SIZE)
            .map(usize::from)
            .map_err(|e| cl_err(op(), ClError(e), ""))?;
        if origin.checked_add(bytes).is_none_or(|end| end > size) {
            return Err(driver_err(
                op(),
                format!("the memory holds {size} bytes; the view needs {bytes} from byte {origin}"),
            ));
        }
        let region = opencl3::types::cl_buffer_region {
            origin,
            size: bytes.max(1),
        };
        let sub = opencl3::memory::create_sub_buffer(
            parent,
            0,
            opencl3::memory::CL_BUFFER_CREATE_TYPE_REGION,
            &region as *const _ as *const c_void,
        )
        .map_err(|e| cl_err(op(), ClError(e), " (clCreateSubBuffer)"))?;
        // Our one reference: wrap retains, so let go of the creation's reference after.
        let owned = Buffer::<u8>::new(sub);
        let wrapped = self.wrap(sub, bytes);
        drop(owned);
        wrapped
    }

    /// Wraps `raw`, memory of this backend's context of at least `bytes`, retaining it:
    /// the caller's buffer and the wrapper each hold a reference, and the memory lives
    /// until both are dropped.
    ///
    /// # Safety
    /// `raw` must be a valid memory object.
    pub(crate) unsafe fn wrap(&self, raw: cl_mem, bytes: usize) -> Result<Box<dyn Any + Send + Sync>> {
        let op = || format!("wrapping a caller's cl_mem for {}", self.info.id);
        retain_mem_object(raw).map_err(|e| cl_err(op(), ClError(e), " (clRetainMemObject)"))?;
        // From here the wrapper releases its reference on every path.
        let mem = Buffer::<u8>::new(raw);
        let ctx = mem.context().map_err(|e| cl_err(op(), e, ""))?;
        if ctx as usize != self.context_key() {
            return Err(driver_err(
                op(),
                format!(
                    "the memory belongs to another OpenCL context than {}'s queue: make the device from a queue of the buffer's context",
                    self.info.id
                ),
            ));
        }
        let size = mem.size().map_err(|e| cl_err(op(), e, ""))?;
        if size < bytes {
            return Err(driver_err(
                op(),
                format!("the memory holds {size} bytes; the view needs {bytes}"),
            ));
        }
        let flags = mem.flags().map_err(|e| cl_err(op(), e, ""))?;
        let parent = mem.associated_memobject().map_err(|e| cl_err(op(), e, ""))?;
        let span = if parent.is_null() {
            (raw as usize, 0)
        } else {
            (parent as usize, mem.offset().map_err(|e| cl_err(op(), e, ""))? as u64)
        };
        Ok(Box::new(ClBuffer {
            mem,
            access: (flags & CL_MEM_WRITE_ONLY == 0, flags & CL_MEM_READ_ONLY == 0),
            span,
            context: self.context_key(),
        }))
    }

    fn context_key(&self) -> usize {
        self.context.get() as usize
    }

    /// `buf` as this device's buffer; `op` names the operation in the error, formatted
    /// only when there is one.
    fn buffer<'a>(&self, buf: &'a RawBuffer, op: &dyn std::fmt::Display) -> Result<&'a ClBuffer> {
        let b = buf.inner.downcast_ref::<ClBuffer>().ok_or_else(|| {
            driver_err(
                op.to_string(),
                format!("{buf:?} is not an OpenCL buffer of {}", self.info.id),
            )
        })?;
        if b.context != self.context_key() {
            return Err(driver_err(
                op.to_string(),
                format!("{buf:?} belongs to another OpenCL context than {}", self.info.id),
            ));
        }
        Ok(b)
    }

    /// Launches and returns the launch's events (their profiling counters are enabled).
    pub(crate) fn launch_event(
        &self,
        kernel: &(dyn Any + Send + Sync),
        dims: LaunchDims,
        args: &[KernelArg<'_>],
    ) -> Result<Option<Launched>> {
        let k = kernel
            .downcast_ref::<ClKernel>()
            .ok_or_else(|| driver_err("launch", format!("not a kernel compiled for {}", self.info.id)))?;
        // Every launch names itself in its errors, but only an error spells the name out:
        // a warm call allocates nothing for it.
        let op = LaunchOp {
            symbol: &k.symbol,
            device: &self.info.id,
        };
        if k.context != self.context_key() {
            return Err(driver_err(
                op.to_string(),
                "the kernel was compiled for another OpenCL context",
            ));
        }
        let global = |dims: LaunchDims| -> [usize; 3] {
            std::array::from_fn(|i| dims.grid[i] as usize * dims.block[i] as usize)
        };
        let local: [usize; 3] = dims.block.map(|b| b as usize);
        let sizes = |global: [usize; 3]| format!("global {global:?}, local {local:?}, {} args", args.len());
        // An empty problem has nothing to run, and OpenCL 1.2 rejects a zero global size.
        if global(dims).contains(&0) {
            return Ok(None);
        }
        // The workspace's buffers are held until the launch is queued (device/workspace.rs),
        // taken before the kernel's lock, as every launch takes them.
        let workspace = match args.iter().find_map(|a| match a {
            KernelArg::Workspace(need) => Some(*need),
            _ => None,
        }) {
            Some(need) => Some(self.workspaces.hold(need, |bytes, what, zeroed| {
                let op = || format!("allocating {bytes} bytes of {what} on {}", self.info.id);
                let mem = unsafe { Buffer::<u8>::create(&self.context, CL_MEM_READ_WRITE, bytes, ptr::null_mut()) }
                    .map_err(|e| cl_err(op(), e, ""))?;
                if zeroed {
                    self.zero_fill(&mem, bytes)
                        .map_err(|e| cl_err(op(), e, " while zero-filling"))?;
                }
                Ok(mem)
            })?),
            None => None,
        };
        // The kernel's arguments in order: a workspace is two (data, then counters).
        enum ClArg {
            Int(cl_int),
            Long(cl_long),
            Float(cl_float),
            Mem(cl_mem),
        }
        let mut flat = Vec::with_capacity(args.len() + 1);
        for arg in args {
            match arg {
                KernelArg::Int(v) => flat.push(ClArg::Int(*v as cl_int)),
                KernelArg::Long(v) => flat.push(ClArg::Long(*v as cl_long)),
                KernelArg::Float(v) => flat.push(ClArg::Float(*v as cl_float)),
                KernelArg::Buffer(b) => flat.push(ClArg::Mem(self.buffer(b, &op)?.mem.get())),
                KernelArg::TensorMap(..) => {
                    return Err(driver_err(
                        op.to_string(),
                        "tensor maps are a CUDA feature; no OpenCL kernel takes one",
                    ))
                }
                KernelArg::Workspace(..) => {
                    let held = workspace.as_ref().expect("held above");
                    flat.extend([ClArg::Mem(held.data().get()), ClArg::Mem(held.flags().get())]);
                }
            }
        }
        let passes = k.kernels.lock().unwrap_or_else(|e| e.into_inner());
        let mut events = Vec::with_capacity(2);
        for (kernel, dims) in
            std::iter::once((&passes.main, dims)).chain(passes.sum.iter().map(|s| (s, gemm_core::sum_pass(dims))))
        {
            let extent = global(dims);
            for (i, arg) in flat.iter().enumerate() {
                let idx = i as u32;
                let r = unsafe {
                    match arg {
                        ClArg::Int(v) => kernel.set_arg(idx, v),
                        ClArg::Long(v) => kernel.set_arg(idx, v),
                        ClArg::Float(v) => kernel.set_arg(idx, v),
                        ClArg::Mem(m) => kernel.set_arg(idx, m),
                    }
                };
                r.map_err(|e| cl_err(op.to_string(), e, &format!(" setting argument {i} ({})", sizes(extent))))?;
            }
            // The in-order queue runs a second pass after the first has finished and its
            // writes are visible: the one order OpenCL C 1.2 gives between work-groups.
            let ev = unsafe {
                self.queue
                    .enqueue_nd_range_kernel(kernel.get(), 3, ptr::null(), extent.as_ptr(), local.as_ptr(), &[])
            }
            .map_err(|e| cl_err(op.to_string(), e, &format!(" ({})", sizes(extent))))?;
            events.push(ev);
        }
        let last = events.pop().expect("one kernel at least");
        Ok(Some(Launched {
            first: events.pop(),
            last,
        }))
    }
}

/// The events of a launch's kernels: its first (a split's first pass) where there were
/// two, and its last.
pub(crate) struct Launched {
    first: Option<Event>,
    last: Event,
}

impl OpenclBackend {
    /// Zero-fills `bytes` of `mem` on the queue, so that the fill is ordered before any
    /// later use of the buffer.
    fn zero_fill(&self, mem: &Buffer<u8>, bytes: usize) -> std::result::Result<(), ClError> {
        let zero = 0u8;
        let ev = unsafe {
            enqueue_fill_buffer(
                self.queue.get(),
                mem.get(),
                &zero as *const u8 as *const c_void,
                1,
                0,
                bytes,
                0,
                ptr::null(),
            )
        }
        .map_err(ClError)?;
        drop(Event::new(ev));
        Ok(())
    }
}

impl DeviceBackend for OpenclBackend {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn alloc(&self, bytes: usize) -> Result<Box<dyn Any + Send + Sync>> {
        let bytes = bytes.max(1);
        let op = || format!("allocation of {bytes} bytes on {}", self.info.id);
        let mem = unsafe { Buffer::<u8>::create(&self.context, CL_MEM_READ_WRITE, bytes, ptr::null_mut()) }
            .map_err(|e| cl_err(op(), e, ""))?;
        self.zero_fill(&mem, bytes)
            .map_err(|e| cl_err(op(), e, " while zero-filling"))?;
        let span = (mem.get() as usize, 0);
        Ok(Box::new(ClBuffer {
            mem,
            access: (true, true),
            span,
            context: self.context_key(),
        }))
    }

    fn upload(&self, dst: &RawBuffer, src: &[u8]) -> Result<()> {
        let op = format!("upload of {} bytes to {}", src.len(), self.info.id);
        let b = self.buffer(dst, &op)?;
        if src.is_empty() {
            return Ok(());
        }
        let ev = unsafe {
            enqueue_write_buffer(
                self.queue.get(),
                b.mem.get(),
                CL_BLOCKING,
                0,
                src.len(),
                src.as_ptr() as *const c_void,
                0,
                ptr::null(),
            )
        }
        .map_err(|e| cl_err(&op, ClError(e), ""))?;
        drop(Event::new(ev));
        Ok(())
    }

    fn download(&self, src: &RawBuffer, dst: &mut [u8]) -> Result<()> {
        let op = format!("download of {} bytes from {}", dst.len(), self.info.id);
        let b = self.buffer(src, &op)?;
        if dst.is_empty() {
            return Ok(());
        }
        let ev = unsafe {
            enqueue_read_buffer(
                self.queue.get(),
                b.mem.get(),
                CL_BLOCKING,
                0,
                dst.len(),
                dst.as_mut_ptr() as *mut c_void,
                0,
                ptr::null(),
            )
        }
        .map_err(|e| cl_err(&op, ClError(e), ""))?;
        drop(Event::new(ev));
        Ok(())
    }

    /// OpenCL C has no architecture variants: `needs` asks for nothing here.
    fn compile(
        &self,
        source: &str,
        symbol: &str,
        defines: &[(String, u32)],
        _needs: &CompileNeeds,
    ) -> Result<Arc<dyn Any + Send + Sync>> {
        self.compile_with(BinaryCache::from_env().as_ref(), source, symbol, defines)
    }

    fn launch(&self, kernel: &(dyn Any + Send + Sync), dims: LaunchDims, args: &[KernelArg<'_>]) -> Result<()> {
        self.launch_event(kernel, dims, args).map(drop)
    }

    fn memory_span(&self, buf: &RawBuffer) -> Option<(usize, u64)> {
        buf.inner.downcast_ref::<ClBuffer>().map(|b| b.span)
    }

    fn kernel_access(&self, buf: &RawBuffer) -> (bool, bool) {
        buf.inner.downcast_ref::<ClBuffer>().map_or((true, true), |b| b.access)
    }

    fn as_opencl(&self) -> Option<&OpenclBackend> {
        Some(self)
    }

    fn synchronize(&self) -> Result<()> {
        self.queue
            .finish()
            .map_err(|e| cl_err(format!("clFinish on {}", self.info.id), e, ""))
    }

    fn fill(&self, buf: &RawBuffer, byte: u8) -> Result<()> {
        let op = format!("fill of {} bytes on {}", buf.bytes, self.info.id);
        let b = self.buffer(buf, &op)?;
        if buf.bytes == 0 {
            return Ok(());
        }
        let ev = unsafe {
            enqueue_fill_buffer(
                self.queue.get(),
                b.mem.get(),
                &byte as *const u8 as *const c_void,
                1,
                0,
                buf.bytes,
                0,
                ptr::null(),
            )
        }
        .map_err(|e| cl_err(&op, ClError(e), ""))?;
        drop(Event::new(ev));
        Ok(())
    }

    fn time_region(&self, work: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        // OpenCL has no timestamp command short of 2.0's markers with profiling, which
        // drivers fill in unevenly: the host clock between two queue drains instead.
        // It adds the enqueue and clFinish latency (microseconds), which only matters
        // for kernels that short; the tuner itself uses the kernels' own counters.
        self.synchronize()?;
        let start = std::time::Instant::now();
        work()?;
        self.synchronize()?;
        Ok(start.elapsed().as_secs_f64() * 1e3)
    }

    fn copy(&self, src: &RawBuffer, dst: &RawBuffer, bytes: usize) -> Result<()> {
        let op = format!("copy of {bytes} bytes on {}", self.info.id);
        let (s, d) = (self.buffer(src, &op)?, self.buffer(dst, &op)?);
        if bytes > src.bytes || bytes > dst.bytes {
            return Err(driver_err(
                &op,
                format!("buffers of {} and {} bytes", src.bytes, dst.bytes),
            ));
        }
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: both buffers belong to this context and hold at least `bytes`; the
        // in-order queue orders the copy with every other use of them.
        let ev =
            unsafe { enqueue_copy_buffer(self.queue.get(), s.mem.get(), d.mem.get(), 0, 0, bytes, 0, ptr::null()) }
                .map_err(|e| cl_err(&op, ClError(e), ""))?;
        drop(Event::new(ev));
        Ok(())
    }

    fn copy_rows(&self, src: &RawBuffer, dst: &RawBuffer, r: RowCopy) -> Result<()> {
        let op = format!(
            "2-D copy of {} rows of {} bytes on {}",
            r.rows, r.row_bytes, self.info.id
        );
        let (s, d) = (self.buffer(src, &op)?, self.buffer(dst, &op)?);
        if !r.fits(src.bytes, dst.bytes) {
            return Err(driver_err(
                &op,
                format!("{r:?} between buffers of {} and {} bytes", src.bytes, dst.bytes),
            ));
        }
        if r.rows == 0 || r.row_bytes == 0 {
            return Ok(());
        }
        // The whole start offset goes in the x origin: the rectangle's byte address is
        // `origin[0] + origin[1] * row_pitch`, and the runs never need to start on a row.
        let (so, d_o, region) = ([r.src_off, 0, 0], [r.dst_off, 0, 0], [r.row_bytes, r.rows, 1]);
        // SAFETY: both buffers belong to this context and `fits` checked every run lies
        // inside them; the origin and region arrays outlive the call, and the in-order
        // queue orders the copy with every other use of the buffers.
        let ev = unsafe {
            enqueue_copy_buffer_rect(
                self.queue.get(),
                s.mem.get(),
                d.mem.get(),
                so.as_ptr(),
                d_o.as_ptr(),
                region.as_ptr(),
                r.src_pitch,
                0,
                r.dst_pitch,
                0,
                0,
                ptr::null(),
            )
        }
        .map_err(|e| cl_err(&op, ClError(e), ""))?;
        drop(Event::new(ev));
        Ok(())
    }

    fn time_launch(&self, kernel: &(dyn Any + Send + Sync), dims: LaunchDims, args: &[KernelArg<'_>]) -> Result<f64> {
        if !self.profiling {
            // A caller's queue without profiling: the host clock around the launch,
            // between two drains (as time_region), enqueue and drain latency included.
            return self.time_region(&mut || self.launch(kernel, dims, args));
        }
        let Some(ev) = self.launch_event(kernel, dims, args)? else {
            return Ok(0.0);
        };
        let op = || format!("timing a launch on {}", self.info.id);
        ev.last.wait().map_err(|e| cl_err(op(), e, ""))?;
        // START..END is the kernels alone (a split's two and the gap between them);
        // QUEUED/SUBMIT would add the queue's latency.
        let first = ev.first.as_ref().unwrap_or(&ev.last);
        let start = first.profiling_command_start().map_err(|e| cl_err(op(), e, ""))?;
        let end = ev.last.profiling_command_end().map_err(|e| cl_err(op(), e, ""))?;
        Ok(end.saturating_sub(start) as f64 / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::compile::fnv1a;
    use super::*;
    use crate::device::binary_cache::{self, BinaryKey};

    /// Every OpenCL device, or `None` (skip) when there is none, unless
    /// `CROSSGEMM_REQUIRE_OPENCL=1` makes that a failure.
    fn devices_or_skip(test: &str) -> Option<Vec<Device>> {
        let devs = discover();
        if devs.is_empty() {
            if crate::env::require_opencl() {
                panic!("CROSSGEMM_REQUIRE_OPENCL=1 but no OpenCL device was found");
            }
            eprintln!("{test}: skipped, no OpenCL device");
            return None;
        }
        Some(devs)
    }

    const ADD_SRC: &str = r#"
__kernel void add_scaled(int n, float s, __global float* x, __global const float* y)
{
    const int i = get_global_id(0);
    if (i < n) x[i] = x[i] * SCALE + s + y[i];
}
"#;

    fn floats(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|f| f.to_le_bytes()).collect()
    }
    fn unfloats(b: &[u8]) -> Vec<f32> {
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
    fn dims(grid: u32, block: u32) -> LaunchDims {
        LaunchDims {
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            smem_bytes: 0,
            persistent: None,
        }
    }

    #[test]
    fn opencl_discover() {
        let Some(devs) = devices_or_skip("opencl_discover") else {
            return;
        };
        for d in &devs {
            let i = d.info();
            eprintln!(
                "{i}: {:?}, driver {}, {} CUs, local {} B, wg {}, mem {} B",
                i.device_type, i.driver, i.compute_units, i.smem_per_block, i.max_threads_per_block, i.global_mem_bytes
            );
            assert_eq!(i.kind, Backend::Opencl);
            let parts: Vec<_> = i.id.split(':').collect();
            assert!(
                parts.len() == 3
                    && parts[0] == "opencl"
                    && parts[1].parse::<u32>().is_ok()
                    && parts[2].parse::<u32>().is_ok(),
                "{}",
                i.id
            );
            assert!(!i.name.is_empty() && !i.platform.is_empty());
            assert!(
                i.compute_units > 0 && i.max_threads_per_block > 0 && i.smem_per_block > 0 && i.global_mem_bytes > 0
            );
            if i.platform.contains("Portable Computing Language") {
                assert_eq!(i.device_type, DeviceType::Cpu);
            }
        }
        let ids: Vec<_> = devs.iter().map(|d| d.info().id.clone()).collect();
        let mut uniq = ids.clone();
        uniq.dedup();
        assert_eq!(ids, uniq);
        // Discovery is cached: the same devices (and contexts) come back.
        assert_eq!(discover(), devs);
        if crate::env::require_opencl() {
            assert!(
                devs.iter()
                    .any(|d| d.info().platform.contains("Portable Computing Language")),
                "PoCL not found: {ids:?}"
            );
        }
    }

    #[test]
    fn opencl_alloc_roundtrip() {
        let Some(devs) = devices_or_skip("opencl_alloc_roundtrip") else {
            return;
        };
        for dev in &devs {
            // Fresh buffers read back as zeros.
            let buf = RawBuffer::new(dev, 1000).unwrap();
            let mut out = vec![0xAAu8; 1000];
            buf.download(&mut out).unwrap();
            assert!(out.iter().all(|&b| b == 0), "{}", dev.info().id);

            let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
            buf.upload(&data).unwrap();
            buf.download(&mut out).unwrap();
            assert_eq!(out, data, "{}", dev.info().id);

            let empty = RawBuffer::new(dev, 0).unwrap();
            empty.upload(&[]).unwrap();
            empty.download(&mut []).unwrap();
        }
    }

    /// Builds from source and stores, loads from the binary, and rebuilds when the driver
    /// refuses a cached binary that passes the file's own checks.
    #[test]
    fn opencl_binary_cache_round_trip_and_refused_binary() {
        // Discovery first: it initialises the ICD loader once, so the direct queries
        // below do not race other tests' first calls into it.
        let Some(_devs) = devices_or_skip("opencl_binary_cache") else {
            return;
        };
        let platforms = get_platforms().expect("discovery found OpenCL devices");
        let (platform, id) = platforms
            .iter()
            .find_map(|p| {
                let ids = p.get_devices(CL_DEVICE_TYPE_ALL).ok()?;
                Some((p.name().unwrap_or_default(), *ids.first()?))
            })
            .expect("discovery found OpenCL devices");
        let b = OpenclBackend::new(ClDevice::new(id), "opencl:0:0".into(), &platform).unwrap();
        let dir = std::env::temp_dir().join(format!("crossgemm-bin-ocl-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cache = BinaryCache::at(&dir);
        let defs = [("SCALE".to_string(), 3)];
        let key = BinaryKey::new(
            "opencl",
            ADD_SRC,
            "add_scaled",
            &["-cl-std=CL1.2".to_string(), "-D SCALE=3".to_string()],
            &b.info,
            &b.compiler,
        );
        let s0 = binary_cache::compile_stats();
        b.compile_with(Some(&cache), ADD_SRC, "add_scaled", &defs).unwrap();
        let s1 = binary_cache::compile_stats();
        assert!(s1.compiles > s0.compiles && s1.binary_stores > s0.binary_stores);
        let stored = cache.load(&key).expect("the build was stored under the expected key");
        b.compile_with(Some(&cache), ADD_SRC, "add_scaled", &defs).unwrap();
        let s2 = binary_cache::compile_stats();
        assert!(s2.binary_hits > s1.binary_hits);
        // A well-formed file whose binary is garbage: the driver refuses it.
        cache.store(&key, b"definitely not a program binary", "");
        b.compile_with(Some(&cache), ADD_SRC, "add_scaled", &defs).unwrap();
        let s3 = binary_cache::compile_stats();
        assert!(s3.binary_rejected > s2.binary_rejected && s3.compiles > s2.compiles);
        assert_eq!(cache.load(&key).unwrap().binary.len(), stored.binary.len(), "repaired");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn opencl_kernel_runs() {
        let Some(devs) = devices_or_skip("opencl_kernel_runs") else {
            return;
        };
        for dev in &devs {
            let n = 10usize;
            let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
            let y: Vec<f32> = (0..n).map(|i| 100.0 * i as f32).collect();
            // One element past n, which the kernel must leave alone.
            let bx = RawBuffer::new(dev, (n + 1) * 4).unwrap();
            let by = RawBuffer::new(dev, n * 4).unwrap();
            let mut xs = x.clone();
            xs.push(-1.0);
            bx.upload(&floats(&xs)).unwrap();
            by.upload(&floats(&y)).unwrap();

            let k = dev
                .backend()
                .compile(ADD_SRC, "add_scaled", &[("SCALE".into(), 2)], &CompileNeeds::default())
                .unwrap();
            // 3 groups of 4 work-items: two past the end exercise the bounds check.
            let args = [
                KernelArg::Int(n as i32),
                KernelArg::Float(0.5),
                KernelArg::Buffer(&bx),
                KernelArg::Buffer(&by),
            ];
            dev.backend().launch(&*k, dims(3, 4), &args).unwrap();
            dev.synchronize().unwrap();
            let mut out = vec![0u8; (n + 1) * 4];
            bx.download(&mut out).unwrap();
            let got = unfloats(&out);
            let want: Vec<f32> = (0..n).map(|i| x[i] * 2.0 + 0.5 + y[i]).chain([-1.0]).collect();
            assert_eq!(got, want, "{}", dev.info().id);

            // An empty launch is a no-op, not an error.
            dev.backend().launch(&*k, dims(0, 4), &args).unwrap();

            // A work-group size beyond the device limit is a driver error naming the sizes.
            let too_big = dev.info().max_threads_per_block.saturating_mul(2);
            match dev.backend().launch(&*k, dims(1, too_big), &args) {
                Err(GemmError::Driver {
                    backend: "OpenCL",
                    message,
                    ..
                }) => assert!(message.contains("local"), "{message}"),
                other => panic!("expected a driver error, got {:?}", other.map(|_| ())),
            }
        }
    }

    #[test]
    fn opencl_concurrent_launches() {
        let Some(devs) = devices_or_skip("opencl_concurrent_launches") else {
            return;
        };
        for dev in &devs {
            let k = dev
                .backend()
                .compile(ADD_SRC, "add_scaled", &[("SCALE".into(), 1)], &CompileNeeds::default())
                .unwrap();
            let n = 256usize;
            std::thread::scope(|s| {
                for t in 0..4 {
                    let (dev, k) = (dev.clone(), k.clone());
                    s.spawn(move || {
                        let bx = RawBuffer::new(&dev, n * 4).unwrap();
                        let by = RawBuffer::new(&dev, n * 4).unwrap();
                        for _ in 0..20 {
                            let args = [
                                KernelArg::Int(n as i32),
                                KernelArg::Float(t as f32),
                                KernelArg::Buffer(&bx),
                                KernelArg::Buffer(&by),
                            ];
                            dev.backend().launch(&*k, dims(n as u32 / 64, 64), &args).unwrap();
                        }
                        let mut out = vec![0u8; n * 4];
                        bx.download(&mut out).unwrap();
                        assert!(unfloats(&out).iter().all(|&v| v == 20.0 * t as f32), "thread {t}");
                    });
                }
            });
        }
    }

    #[test]
    fn opencl_compile_errors() {
        let Some(devs) = devices_or_skip("opencl_compile_errors") else {
            return;
        };
        for dev in &devs {
            let bad = "__kernel void broken(__global float* x) { x[0] = undeclared_name + ; }";
            match dev
                .backend()
                .compile(bad, "broken", &[("FOO".into(), 3)], &CompileNeeds::default())
            {
                Err(GemmError::Compile {
                    backend,
                    kernel,
                    options,
                    log,
                }) => {
                    assert_eq!((backend, kernel.as_str()), ("OpenCL", "broken"));
                    assert_eq!(options.last().map(String::as_str), Some("-D FOO=3"));
                    assert!(log.contains("error") && log.contains("undeclared_name"), "log: {log}");
                }
                other => panic!("expected a compile error, got {:?}", other.map(|_| ())),
            }
            // A good source without the requested symbol names what it does have.
            match dev
                .backend()
                .compile(ADD_SRC, "missing", &[("SCALE".into(), 1)], &CompileNeeds::default())
            {
                Err(GemmError::Compile { log, .. }) => assert!(log.contains("add_scaled"), "log: {log}"),
                other => panic!("expected a compile error, got {:?}", other.map(|_| ())),
            }
        }
    }

    /// The generator's real kernel (ragged shape, f32 and f16 + bias + ReLU) against a
    /// plain loop: the ABI, the `-D` tile parameters and the launch geometry agree.
    #[test]
    fn opencl_generated_gemm() {
        use gemm_core::codegen::Variant;
        use gemm_core::ir::{AccMode, DType, EpOp, Func, GemmIr, Layout, Param, ParamKind};
        use gemm_core::{FamilyId, Problem, SimtTile, TileConfig};
        let Some(devs) = devices_or_skip("opencl_generated_gemm") else {
            return;
        };
        let (m, n, k) = (37usize, 29usize, 45usize);
        let a: Vec<f32> = (0..m * k).map(|i| ((i * 13 % 17) as f32 - 8.0) / 8.0).collect(); // row-major M×K
        let b: Vec<f32> = (0..k * n).map(|i| ((i * 7 % 11) as f32 - 5.0) / 4.0).collect(); // column-major K×N
        let bias: Vec<f32> = (0..n).map(|j| j as f32 / 8.0 - 1.0).collect();
        let want = |i: usize, j: usize, relu: bool| {
            let acc: f32 = (0..k).map(|p| a[i * k + p] * b[j * k + p]).sum();
            if relu {
                (acc + bias[j]).max(0.0)
            } else {
                acc
            }
        };
        // Every device and dtype runs before failing, so one report shows which ones disagree.
        let mut failures = Vec::new();
        // VW=4 takes the vector-load path, VW=1 the scalar one.
        for (dtype, vw) in [(DType::F32, 4), (DType::F32, 1), (DType::F16, 4), (DType::F16, 1)] {
            let tile = TileConfig::Simt(SimtTile {
                mwg: 32,
                nwg: 16,
                kwg: 8,
                mdimc: 8,
                ndimc: 8,
                vw,
                group_m: 2,
                ksplit: 1,
            });
            let half = dtype == DType::F16;
            let mat = |layout| ParamKind::Matrix { dtype, layout };
            let mut params = vec![
                Param {
                    name: "a".into(),
                    kind: mat(Layout::RowMajor),
                },
                Param {
                    name: "b".into(),
                    kind: mat(Layout::ColMajor),
                },
            ];
            let mut epilogue = vec![EpOp::Acc];
            if half {
                params.push(Param {
                    name: "bias".into(),
                    kind: ParamKind::Row { dtype },
                });
                epilogue = vec![EpOp::Acc, EpOp::Param(2), EpOp::Add, EpOp::Call(Func::Relu)];
            }
            let ir = GemmIr {
                name: "t".into(),
                params,
                a: 0,
                a_t: false,
                b: 1,
                b_t: false,
                ab_dtype: dtype,
                acc: AccMode::F32,
                out_dtype: dtype,
                out_layout: Layout::RowMajor,
                epilogue,
            };
            let src = FamilyId::Simt.emit(&ir, Backend::Opencl, Variant::Full);
            let defines: Vec<(String, u32)> = tile
                .defines(&ir, Backend::Opencl, Problem::new(m, n, k))
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
            let enc = |v: &[f32]| -> Vec<u8> {
                if half {
                    v.iter().flat_map(|x| half::f16::from_f32(*x).to_le_bytes()).collect()
                } else {
                    floats(v)
                }
            };
            for dev in &devs {
                let up = |v: &[f32]| {
                    let bytes = enc(v);
                    let buf = RawBuffer::new(dev, bytes.len()).unwrap();
                    buf.upload(&bytes).unwrap();
                    buf
                };
                let (ba, bb, bbias) = (up(&a), up(&b), up(&bias));
                let out = RawBuffer::new(dev, m * n * dtype.size() as usize).unwrap();
                let kern = dev
                    .backend()
                    .compile(&src, &ir.symbol(), &defines, &CompileNeeds::default())
                    .unwrap();
                let mut args = vec![
                    KernelArg::Int(m as i32),
                    KernelArg::Int(n as i32),
                    KernelArg::Int(k as i32),
                    KernelArg::Buffer(&out),
                    KernelArg::Buffer(&ba),
                    KernelArg::Buffer(&bb),
                ];
                if half {
                    args.push(KernelArg::Buffer(&bbias));
                }
                // The views' geometry (`kernel_params`): out N apart, row-major A K
                // apart, column-major B K apart, all from their buffers' starts; then the
                // batch strides.
                for ld in [n, k, k] {
                    args.extend([KernelArg::Int(ld as i32), KernelArg::Long(0)]);
                }
                if half {
                    args.push(KernelArg::Long(0));
                }
                // One product: every batch stride 0 (the output's, then each buffer's).
                args.extend((0..if half { 4 } else { 3 }).map(|_| KernelArg::Long(0)));
                args.push(KernelArg::Int(1));
                dev.backend()
                    .launch(
                        &*kern,
                        tile.launch(&ir, Problem::new(m, n, k), gemm_core::Machine { units: 1 }),
                        &args,
                    )
                    .unwrap();
                dev.synchronize().unwrap();
                let mut bytes = vec![0u8; out.bytes];
                out.download(&mut bytes).unwrap();
                let got: Vec<f32> = if half {
                    bytes
                        .chunks_exact(2)
                        .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
                        .collect()
                } else {
                    unfloats(&bytes)
                };
                let mut bad = Vec::new();
                for i in 0..m {
                    for j in 0..n {
                        let (g, w) = (got[i * n + j], want(i, j, half));
                        let tol = if half {
                            1e-2 * w.abs().max(1.0)
                        } else {
                            1e-4 * w.abs().max(1.0)
                        };
                        if (g - w).abs() > tol {
                            bad.push(format!("({i},{j}): got {g}, want {w}"));
                        }
                    }
                }
                if !bad.is_empty() {
                    failures.push(format!(
                        "{} {dtype:?} VW={vw}: {} of {} wrong, first {:?}",
                        dev.info(),
                        bad.len(),
                        m * n,
                        &bad[..bad.len().min(4)]
                    ));
                }
            }
        }
        assert!(failures.is_empty(), "{failures:#?}");
    }

    #[test]
    fn opencl_dump_names_are_stable() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
