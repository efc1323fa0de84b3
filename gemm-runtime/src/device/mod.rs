//! Devices: discovery, selection and the backend interface.
//!
//! 1. [`Device::best`] picks CUDA, then an OpenCL GPU, then an OpenCL CPU, then the
//!    host reference, unless `CROSSGEMM_DEVICE` names one (`cuda:0`, `opencl:P:D`,
//!    `host`). Both driver libraries are loaded at run time, so the same binary runs
//!    where either, both or neither is installed.
//! 2. [`Device::list`] shows everything that was found.
//! 3. Buffers ([`Matrix`](crate::Matrix), [`Row`](crate::Row), [`Col`](crate::Col)) are
//!    created on a device; kernels run on the device their operands live on.
//!
//! ```
//! let dev = crossgemm_device_doc();
//! # fn crossgemm_device_doc() -> gemm_runtime::Device { gemm_runtime::Device::host() }
//! assert!(!dev.info().name.is_empty());
//! ```

// Without a backend only the host reference runs: nothing is compiled or cached.
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
pub(crate) mod binary_cache;
#[cfg(feature = "cuda")]
pub(crate) mod cuda;
pub(crate) mod host;
#[cfg(feature = "opencl")]
pub(crate) mod opencl;
pub(crate) mod spares;
#[cfg(test)]
pub(crate) mod test_switches;
#[cfg(any(feature = "cuda", feature = "opencl"))]
pub(crate) mod workspace;

use crate::error::{GemmError, Result};
use gemm_core::target::DeviceType;
use gemm_core::{Backend, CompileNeeds, LaunchDims, TensorMap, Workspace};
use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What a device is and what it can do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The API that drives it (`Host`: the host reference computes every kernel).
    pub kind: Backend,
    /// The name `CROSSGEMM_DEVICE` accepts: `cuda:0`, `opencl:0:1`, `host`.
    pub id: String,
    /// Device name as the driver reports it.
    pub name: String,
    /// Platform (OpenCL) or API name.
    pub platform: String,
    /// Driver version string.
    pub driver: String,
    /// GPU, CPU or other.
    pub device_type: DeviceType,
    /// CUDA compute capability as major*10+minor.
    pub compute_capability: Option<u32>,
    /// Multiprocessors / compute units.
    pub compute_units: u32,
    /// Shared (local) memory a block may use, bytes (after opting in, for CUDA).
    pub smem_per_block: u32,
    /// Threads per block at most.
    pub max_threads_per_block: u32,
    /// Device memory, bytes.
    pub global_mem_bytes: u64,
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}, {})", self.name, self.id, self.platform)
    }
}

/// A launch's kernel arguments: inline up to 24, which holds every built-in kernel's
/// (maps, workspace, 8 for M, N, K and the output, at most 4 a parameter) without a heap
/// allocation on the warm call's path.
pub(crate) type KernelArgs<'a> = smallvec::SmallVec<[KernelArg<'a>; 24]>;

/// A value passed to a kernel (only a backend's launch reads one: a build without
/// either backend makes them for the host, which does not).
#[derive(Clone, Copy)]
#[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
pub(crate) enum KernelArg<'a> {
    Int(i32),
    /// A C `long` (64 bits in CUDA on 64-bit hosts and in OpenCL): a view's offset.
    Long(i64),
    Float(f32),
    Buffer(&'a RawBuffer),
    /// A TMA tensor map over the buffer, encoded at launch (CUDA only: a build without
    /// the CUDA backend never reads it).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    TensorMap(&'a RawBuffer, TensorMap),
    /// The device's scratch memory for this launch, passed as two pointers (data, then
    /// counters): see [`Workspace`]. The backend owns it (`workspace.rs`).
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(dead_code))]
    Workspace(Workspace),
}

/// Registers per thread and spilled bytes of a compiled kernel, where the compiler said
/// (CUDA: ptxas through NVRTC's log); `None` for OpenCL kernels.
pub(crate) fn kernel_registers(kernel: &(dyn Any + Send + Sync)) -> Option<(u32, u32)> {
    #[cfg(feature = "cuda")]
    if let Some(k) = kernel.downcast_ref::<cuda::CudaKernel>() {
        let p = k.ptxas();
        return p
            .registers
            .map(|r| (r, p.spill_stores.unwrap_or(0) + p.spill_loads.unwrap_or(0)));
    }
    let _ = kernel;
    None
}

/// What a backend implements. Raw driver calls live only in the implementations.
pub(crate) trait DeviceBackend: Send + Sync {
    fn info(&self) -> &DeviceInfo;
    /// Allocates `bytes` (at least 1) of device memory, aligned to 256 bytes.
    fn alloc(&self, bytes: usize) -> Result<Box<dyn Any + Send + Sync>>;
    fn upload(&self, dst: &RawBuffer, src: &[u8]) -> Result<()>;
    fn download(&self, src: &RawBuffer, dst: &mut [u8]) -> Result<()>;
    /// Compiles `source` with `defines` (and, for CUDA, for the architecture `needs`
    /// asks for) and returns the kernel `symbol` of it.
    fn compile(
        &self,
        source: &str,
        symbol: &str,
        defines: &[(String, u32)],
        needs: &CompileNeeds,
    ) -> Result<Arc<dyn Any + Send + Sync>>;
    /// Launches a kernel returned by `compile` (asynchronously where the API allows).
    fn launch(&self, kernel: &(dyn Any + Send + Sync), dims: LaunchDims, args: &[KernelArg<'_>]) -> Result<()>;
    /// Waits for all launched work.
    fn synchronize(&self) -> Result<()>;
    /// Sets every byte of `buf` to `byte`, in order with the device's other work. The
    /// tuner poisons candidate outputs (0xFF is a NaN in f16, bf16 and f32) and flushes
    /// the L2 cache with it.
    fn fill(&self, buf: &RawBuffer, byte: u8) -> Result<()>;
    /// Launches like [`Backend::launch`], waits, and returns the kernel's own duration in
    /// milliseconds as the device measured it (CUDA events, OpenCL profiling counters), so
    /// that neither host overhead nor earlier queued work (an L2 flush) is counted.
    fn time_launch(&self, kernel: &(dyn Any + Send + Sync), dims: LaunchDims, args: &[KernelArg<'_>]) -> Result<f64>;
    /// Runs `work` (which queues anything on this device: our launches, a vendor
    /// library's) between two device timestamps and returns the time between them, ms.
    /// Work queued before the call (an L2 flush) is not counted.
    fn time_region(&self, work: &mut dyn FnMut() -> Result<()>) -> Result<f64>;
    /// Copies the first `bytes` of `src` to `dst`, in order with the device's other work.
    fn copy(&self, src: &RawBuffer, dst: &RawBuffer, bytes: usize) -> Result<()>;
    /// Copies the rows `r` describes from `src` to `dst`, in order with the device's other
    /// work (a driver 2-D copy: staging a misaligned operand into aligned scratch).
    fn copy_rows(&self, src: &RawBuffer, dst: &RawBuffer, r: RowCopy) -> Result<()>;
    /// Allocates like [`DeviceBackend::alloc`], leaving the contents undefined where the
    /// API can (scratch that is written before it is read).
    fn alloc_uninit(&self, bytes: usize) -> Result<Box<dyn Any + Send + Sync>> {
        self.alloc(bytes)
    }
    /// What kernels may do with `buf`: `(read, write)`. Both, except for a caller's
    /// OpenCL memory made `CL_MEM_READ_ONLY` or `CL_MEM_WRITE_ONLY`, whose other use by a
    /// kernel is undefined (a driver may place read-only memory where writes are lost).
    fn kernel_access(&self, _buf: &RawBuffer) -> (bool, bool) {
        (true, true)
    }
    /// Where `buf`'s memory starts: (the allocation or address space it lies in, its
    /// first byte there), so that two buffers over one allocation (views of a caller's
    /// memory) can be told apart from disjoint ones; `None` where buffers cannot share
    /// memory (the host's).
    fn memory_span(&self, _buf: &RawBuffer) -> Option<(usize, u64)> {
        None
    }
    /// The OpenCL backend behind an OpenCL device (wrapping a caller's memory needs it).
    #[cfg(feature = "opencl")]
    fn as_opencl(&self) -> Option<&opencl::OpenclBackend> {
        None
    }
    /// The CUDA backend behind a CUDA device (vendor libraries need its stream; views
    /// of a caller's memory its context).
    #[cfg(feature = "cuda")]
    fn as_cuda(&self) -> Option<&cuda::CudaBackend> {
        None
    }
}

/// `rows` runs of `row_bytes` bytes: run `r` from byte `src_off + r * src_pitch` of the
/// source to byte `dst_off + r * dst_pitch` of the destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RowCopy {
    pub(crate) src_off: usize,
    pub(crate) src_pitch: usize,
    pub(crate) dst_off: usize,
    pub(crate) dst_pitch: usize,
    pub(crate) row_bytes: usize,
    pub(crate) rows: usize,
}

impl RowCopy {
    /// Whether every run lies inside buffers of these sizes, and pitches hold their runs
    /// (the 2-D copy APIs require it).
    pub(crate) fn fits(&self, src_bytes: usize, dst_bytes: usize) -> bool {
        let end = |off: usize, pitch: usize| {
            (self.rows.checked_sub(1)?)
                .checked_mul(pitch)?
                .checked_add(off)?
                .checked_add(self.row_bytes)
        };
        self.rows == 0
            || (self.src_pitch >= self.row_bytes
                && self.dst_pitch >= self.row_bytes
                && end(self.src_off, self.src_pitch).is_some_and(|e| e <= src_bytes)
                && end(self.dst_off, self.dst_pitch).is_some_and(|e| e <= dst_bytes))
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

struct DeviceInner {
    serial: u64,
    /// Staging scratch finished calls handed back ([`Scratch`]); before
    /// `backend`, so that it is released first.
    spares: spares::Spares<Box<dyn Any + Send + Sync>>,
    backend: Box<dyn DeviceBackend>,
    kernels: Mutex<HashMap<(usize, String), Arc<dyn Any + Send + Sync>>>,
}

/// A handle to one device. Cheap to clone; clones share compiled kernels.
///
/// Every handle of one physical device in a process is the same device: discovery opens
/// each device once (one CUDA context, one OpenCL context and queue) and
/// [`Device::best`], [`Device::open`], [`Device::list`] and [`Device::host`] hand out
/// that one, so buffers made through one `Device::best()` work with kernels called
/// through another (two libraries in one program can both call it).
#[derive(Clone)]
pub struct Device {
    inner: Arc<DeviceInner>,
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Device").field(&self.info().id).finish()
    }
}

impl PartialEq for Device {
    fn eq(&self, other: &Self) -> bool {
        self.inner.serial == other.inner.serial
    }
}

impl Device {
    pub(crate) fn from_backend(backend: Box<dyn DeviceBackend>) -> Device {
        Device {
            inner: Arc::new(DeviceInner {
                serial: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                spares: Default::default(),
                backend,
                kernels: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The host "device": the host reference computes every kernel. Always available;
    /// one per process, like every device.
    pub fn host() -> Device {
        static HOST: std::sync::OnceLock<Device> = std::sync::OnceLock::new();
        HOST.get_or_init(|| Device::from_backend(Box::new(host::HostBackend::new())))
            .clone()
    }

    /// What the device is.
    pub fn info(&self) -> &DeviceInfo {
        self.inner.backend.info()
    }

    /// What identifies the compiler of this device's kernels: the NVRTC version for CUDA,
    /// the OpenCL driver (which compiles) otherwise. Stored with tuning results.
    pub fn compiler_version(&self) -> String {
        let i = self.info();
        match i.kind {
            #[cfg(feature = "cuda")]
            Backend::Cuda => cuda::nvrtc_version(),
            Backend::Opencl => format!("OpenCL driver {} ({})", i.driver, i.platform),
            _ => format!("{} {}", i.platform, i.driver),
        }
    }

    pub(crate) fn backend(&self) -> &dyn DeviceBackend {
        &*self.inner.backend
    }

    /// Waits until all work launched on this device has finished.
    pub fn synchronize(&self) -> Result<()> {
        self.inner.backend.synchronize()
    }

    /// Frees the scratch the device keeps between calls for staging misaligned operands
    /// (at most two buffers, the largest a staged call has needed; see the README's
    /// "Staged operands"), returning the bytes released. The next staged call allocates
    /// again. Freeing is ordered after the work already queued on the device, as
    /// everything it does is; nothing waits. A device allocation that fails while
    /// scratch is kept frees it too, and is tried once more.
    pub fn free_staging_scratch(&self) -> usize {
        self.inner.spares.clear()
    }

    /// Runs `alloc` (anything that allocates device memory); where it runs out of memory
    /// while the device keeps staging scratch, frees that and tries once more, so that
    /// memory kept only to save the next staged call an allocation never makes a call
    /// fail for want of memory. The first error is returned where nothing was kept or it
    /// was another failure. On CUDA the freed scratch goes back to the stream's pool in stream order,
    /// where the retry, on the same stream, finds it.
    fn alloc_or_free_spares<T>(&self, alloc: impl Fn() -> Result<T>) -> Result<T> {
        let first = match injected_allocation_failure() {
            Some(e) => Err(e),
            None => alloc(),
        };
        match first {
            Err(e) if !e.is_out_of_memory() || self.inner.spares.clear() == 0 => Err(e),
            Err(_) => alloc(),
            ok => ok,
        }
    }

    /// Launches a compiled kernel as a call does, through [`Device::alloc_or_free_spares`]:
    /// a launch may grow a split-K workspace. A launch that fails queues nothing, so the
    /// retry runs the kernel once.
    pub(crate) fn launch(
        &self,
        kernel: &(dyn Any + Send + Sync),
        dims: LaunchDims,
        args: &[KernelArg<'_>],
    ) -> Result<()> {
        self.alloc_or_free_spares(|| self.backend().launch(kernel, dims, args))
    }

    /// Identifies this handle (and its clones) within the process.
    pub(crate) fn serial(&self) -> u64 {
        self.inner.serial
    }

    /// Puts a kernel compiled elsewhere (by the tuner) into the per-device cache that
    /// [`Device::kernel`] reads, so the winner of a tuning run is not compiled again.
    pub(crate) fn cache_kernel(
        &self,
        source: &'static str,
        symbol: &str,
        defines: &[(String, u32)],
        needs: &CompileNeeds,
        kernel: Arc<dyn Any + Send + Sync>,
    ) {
        let key = (source.as_ptr() as usize, format!("{symbol}{defines:?}{needs:?}"));
        self.inner
            .kernels
            .lock()
            .expect("kernel cache poisoned")
            .insert(key, kernel);
    }

    /// Compiles (once per source, symbol and defines; cached in this process) and
    /// returns the kernel.
    pub(crate) fn kernel(
        &self,
        source: &'static str,
        symbol: &str,
        defines: &[(String, u32)],
        needs: &CompileNeeds,
    ) -> Result<Arc<dyn Any + Send + Sync>> {
        let key = (source.as_ptr() as usize, format!("{symbol}{defines:?}{needs:?}"));
        if let Some(k) = self.inner.kernels.lock().expect("kernel cache poisoned").get(&key) {
            return Ok(k.clone());
        }
        // Compile outside the lock: NVRTC and OpenCL builds take tens of milliseconds.
        let k = self.inner.backend.compile(source, symbol, defines, needs)?;
        self.inner
            .kernels
            .lock()
            .expect("kernel cache poisoned")
            .insert(key, k.clone());
        Ok(k)
    }

    /// Every device found, in the order [`Device::best`] prefers them; the host last.
    // With no backend the pushes below are the host's alone.
    #[cfg_attr(not(any(feature = "cuda", feature = "opencl")), allow(clippy::vec_init_then_push))]
    pub fn list() -> Vec<Device> {
        crate::env::validate_all();
        let mut v = Vec::new();
        #[cfg(feature = "cuda")]
        v.extend(cuda::discover());
        #[cfg(feature = "opencl")]
        {
            let mut cl = opencl::discover();
            // GPUs before CPUs, stable otherwise.
            cl.sort_by_key(|d| match d.info().device_type {
                DeviceType::Gpu => 0,
                DeviceType::Accelerator => 1,
                DeviceType::Cpu => 2,
            });
            v.extend(cl);
        }
        v.push(Device::host());
        v
    }

    /// The best device: `CROSSGEMM_DEVICE` if set, else the first of [`Device::list`].
    pub fn best() -> Result<Device> {
        match crate::env::device() {
            Some(req) => Device::open(&req).map_err(|e| match e {
                GemmError::NoDevice { request, reason } => GemmError::NoDevice {
                    request: format!("{request}` (CROSSGEMM_DEVICE, which accepts `cuda:N`, `opencl:P:D`, `host`, `cuda`, `opencl`, `opencl-gpu` or `opencl-cpu`"),
                    reason,
                },
                e => e,
            }),
            None => Ok(Device::list()
                .into_iter()
                .next()
                .expect("the host device is always listed")),
        }
    }

    /// Opens a device by its id (`cuda:0`, `opencl:0:1`, `host`), or the first of a
    /// kind (`cuda`, `opencl`, `opencl-gpu`, `opencl-cpu`).
    pub fn open(request: &str) -> Result<Device> {
        if request == "host" {
            return Ok(Device::host());
        }
        let all = Device::list();
        let found = all.iter().find(|d| {
            let i = d.info();
            i.id == request
                || (request == "cuda" && i.kind == Backend::Cuda)
                || (request == "opencl" && i.kind == Backend::Opencl)
                || (request == "opencl-gpu" && i.kind == Backend::Opencl && i.device_type == DeviceType::Gpu)
                || (request == "opencl-cpu" && i.kind == Backend::Opencl && i.device_type == DeviceType::Cpu)
        });
        match found {
            Some(d) => Ok(d.clone()),
            None => Err(GemmError::NoDevice {
                request: request.to_string(),
                reason: format!(
                    "found only: {} (features: cuda={}, opencl={})",
                    all.iter().map(|d| d.info().id.clone()).collect::<Vec<_>>().join(", "),
                    cfg!(feature = "cuda"),
                    cfg!(feature = "opencl"),
                ),
            }),
        }
    }
}

static SCRATCH_ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static FAIL_ALLOCATIONS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Makes the next `n` device allocations made on the calling thread (of a buffer, of
/// staging scratch, or a call's launch, which may grow a split-K workspace) fail as a
/// device out of memory would, before the driver is asked (tests of what is freed then).
/// Per thread, so that tests running beside each other are not touched.
pub fn fail_next_allocations(n: u32) {
    FAIL_ALLOCATIONS.with(|f| f.set(n));
}

/// The failure [`fail_next_allocations`] asked for, if one is left on this thread.
fn injected_allocation_failure() -> Option<GemmError> {
    let left = FAIL_ALLOCATIONS.with(|f| {
        let n = f.get();
        f.set(n.saturating_sub(1));
        n
    });
    (left > 0).then(crate::error::InjectedOutOfMemory::driver_error)
}

/// Scratch buffers staging has allocated in this process so far (`Scratch::take`), rather
/// than reused (tests check that a repeated staged call reuses its scratch).
pub fn scratch_allocations() -> u64 {
    SCRATCH_ALLOCATIONS.load(Ordering::Relaxed)
}

/// Untyped device memory, tagged with its device: crossgemm's own allocation, or a view
/// of a caller's memory (an OpenCL buffer or sub-buffer, CUDA memory), which dropping the
/// buffer never frees.
pub struct RawBuffer {
    pub(crate) device: Device,
    pub(crate) bytes: usize,
    pub(crate) inner: Box<dyn Any + Send + Sync>,
}

/// The bytes allocated for a buffer of `bytes`: at least one, rounded up to 16. Kernels
/// read whole aligned 16-byte chunks that hold an element of a row (the gemv family's
/// windows, the tail of a row that crosses K), so the chunk holding a buffer's last
/// element must lie inside the allocation; `RawBuffer::bytes` stays what was asked for.
fn allocated(bytes: usize) -> usize {
    bytes.max(1).next_multiple_of(16)
}

impl RawBuffer {
    pub(crate) fn new(device: &Device, bytes: usize) -> Result<RawBuffer> {
        let inner = device.alloc_or_free_spares(|| device.backend().alloc(allocated(bytes)))?;
        Ok(RawBuffer {
            device: device.clone(),
            bytes,
            inner,
        })
    }
    pub(crate) fn upload(&self, src: &[u8]) -> Result<()> {
        debug_assert_eq!(src.len(), self.bytes);
        self.device.backend().upload(self, src)
    }
    pub(crate) fn download(&self, dst: &mut [u8]) -> Result<()> {
        debug_assert_eq!(dst.len(), self.bytes);
        self.device.backend().download(self, dst)
    }
    pub(crate) fn fill(&self, byte: u8) -> Result<()> {
        self.device.backend().fill(self, byte)
    }
}

/// Staging scratch ([`crate::stage`]): a buffer of the device's spares or a new one, with
/// the size it was allocated at, which its device keeps again once [`Scratch::recycle`]d.
pub(crate) struct Scratch {
    pub(crate) buf: RawBuffer,
    size: usize,
}

impl Scratch {
    /// At least `bytes` whose contents are undefined until written, for work queued on the
    /// device's stream: a buffer an earlier call handed back where one is large enough,
    /// else a new one rounded up to [`spares::STEP`].
    pub(crate) fn take(device: &Device, bytes: usize) -> Result<Scratch> {
        let want = allocated(bytes);
        let (size, inner) = match device.inner.spares.take(want) {
            Some(spare) => spare,
            None => {
                let size = want.next_multiple_of(spares::STEP);
                let inner = device.alloc_or_free_spares(|| device.backend().alloc_uninit(size))?;
                SCRATCH_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
                (size, inner)
            }
        };
        let buf = RawBuffer {
            device: device.clone(),
            bytes,
            inner,
        };
        Ok(Scratch { buf, size })
    }

    /// Hands the buffer back to its device for a later call: only once every launch that
    /// reads it is queued (see [`spares`]).
    pub(crate) fn recycle(self) {
        let RawBuffer { device, inner, .. } = self.buf;
        device.inner.spares.give(self.size, inner);
    }
}

/// The devices found that run kernels (not the host), for the unit tests of the
/// runtime's own kernels (row copies, splits); empty, with a note, where there is none.
#[cfg(test)]
pub(crate) fn kernel_devices() -> Vec<Device> {
    let devs: Vec<Device> = Device::list()
        .into_iter()
        .filter(|d| d.info().kind != Backend::Host)
        .collect();
    if devs.is_empty() {
        eprintln!("skipped: no device with kernels");
    }
    devs
}

impl fmt::Debug for RawBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RawBuffer({} bytes on {})", self.bytes, self.device.info().id)
    }
}
