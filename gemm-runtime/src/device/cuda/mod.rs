//! The CUDA backend: the driver API through cudarc, kernels compiled by NVRTC straight
//! to a CUBIN for the device's own architecture.
//!
//! A device can also run on a caller's stream, with views of the caller's memory as
//! operands (`interop`: [`Device::from_cuda_stream`]).
//!
//! Both libraries are loaded at run time. cudarc panics when it touches a library that
//! is missing, so every entry point checks [`cuda_present`] / [`nvrtc_present`] first and
//! a machine without CUDA simply lists no CUDA device.

use super::binary_cache::{self, BinaryCache, BinaryKey};
use super::{Device, DeviceBackend, DeviceInfo, KernelArg, RawBuffer, RowCopy};
use gemm_core::Backend;

mod interop;
mod nvrtc;
mod tma;

use crate::error::{GemmError, Result};
use cudarc::driver::{
    result as dres, sys as dsys, CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig,
    PushKernelArg,
};
use gemm_core::target::DeviceType;
use gemm_core::{CompileNeeds, LaunchDims};
use interop::CudaBorrowed;
pub use nvrtc::PtxasInfo;
use nvrtc::{compile_logged, dump, nvrtc_options};
pub(crate) use nvrtc::{nvrtc_compile_check, nvrtc_present, nvrtc_version, Arch};
use std::any::Any;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// Dynamic shared memory a kernel may use without opting in.
const DEFAULT_SMEM_LIMIT: u32 = 48 * 1024;

/// Whether the CUDA driver library (libcuda) can be loaded.
pub(crate) fn cuda_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to dlopen the library by its usual names.
    *PRESENT.get_or_init(|| unsafe { dsys::is_culib_present() })
}

fn driver_err(op: impl Into<String>, e: dres::DriverError) -> GemmError {
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    let message = match e.error_string() {
        Ok(s) => format!("{name}: {}", s.to_string_lossy()),
        Err(_) => name,
    };
    GemmError::Driver {
        backend: "CUDA",
        op: op.into(),
        message,
        source: Some(Box::new(e)),
    }
}

/// Every CUDA device, one per ordinal; empty (and silent) where the driver or NVRTC is
/// missing, no device is present or the driver fails to initialise.
///
/// Only properties are read here: a device's context (hundreds of MB of device memory)
/// is created when it is first used.
///
/// Discovered once per process, like OpenCL's devices: `Device::list` (and so
/// `Device::open`/`best`) runs on every call, and fresh handles each time would be devices
/// that refuse each other's buffers, each with its own context and kernels.
pub(crate) fn discover() -> Vec<Device> {
    static ALL: std::sync::OnceLock<Vec<Device>> = std::sync::OnceLock::new();
    ALL.get_or_init(discover_uncached).clone()
}

fn discover_uncached() -> Vec<Device> {
    if !cuda_present() || !nvrtc_present() || dres::init().is_err() {
        return Vec::new();
    }
    let count = dres::device::get_count().unwrap_or(0).max(0);
    let driver = driver_version().unwrap_or_else(|| "unknown".into());
    (0..count as usize)
        .filter_map(|ordinal| CudaBackend::new(ordinal, &driver).ok())
        .map(|b| Device::from_backend(Box::new(b)))
        .collect()
}

/// `cuDriverGetVersion` as `major.minor` (13000 → "13.0").
fn driver_version() -> Option<String> {
    let mut v: std::ffi::c_int = 0;
    // SAFETY: writes one int; the driver library is loaded (checked by the caller).
    unsafe { dsys::cuDriverGetVersion(&mut v) }.result().ok()?;
    Some(format!("{}.{}", v / 1000, (v % 1000) / 10))
}

/// The context of a device and the one stream all work goes to: crossgemm's own (a
/// discovered device, made when first used) or the caller's ([`Device::from_cuda_stream`]).
struct Ctx {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
}

/// One CUDA device.
pub(crate) struct CudaBackend {
    info: DeviceInfo,
    ordinal: usize,
    arch: u32,
    ctx: OnceLock<std::result::Result<Ctx, String>>,
    /// Scratch memory of launches that take a workspace (split-K).
    workspaces: crate::device::workspace::Workspaces<CudaSlice<u8>>,
}

/// What the driver says about `dev`, named `id` (`cuda:N`, or `cuda:N+streamK` for a
/// device on a caller's stream): the one place both kinds of device read it, so that
/// target matching, tuning-cache keys (the name) and the kernels' limits agree.
fn device_info(dev: dsys::CUdevice, id: String, driver: &str) -> Result<DeviceInfo> {
    use dsys::CUdevice_attribute_enum as A;
    // SAFETY: `dev` came from cuDeviceGet (or a live context's cuCtxGetDevice).
    let attr = |a| unsafe { dres::device::get_attribute(dev, a) }.map_err(|e| driver_err("cuDeviceGetAttribute", e));
    let major = attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)? as u32;
    let minor = attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)? as u32;
    Ok(DeviceInfo {
        kind: Backend::Cuda,
        id,
        name: dres::device::get_name(dev).map_err(|e| driver_err("cuDeviceGetName", e))?,
        platform: "CUDA".into(),
        driver: driver.into(),
        device_type: DeviceType::Gpu,
        compute_capability: Some(major * 10 + minor),
        compute_units: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
        smem_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)? as u32,
        max_threads_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)? as u32,
        // SAFETY: as above.
        global_mem_bytes: unsafe { dres::device::total_mem(dev) }.map_err(|e| driver_err("cuDeviceTotalMem", e))?
            as u64,
    })
}

impl CudaBackend {
    fn new(ordinal: usize, driver: &str) -> Result<CudaBackend> {
        let dev = dres::device::get(ordinal as i32).map_err(|e| driver_err("cuDeviceGet", e))?;
        let info = device_info(dev, format!("cuda:{ordinal}"), driver)?;
        Ok(CudaBackend::with_ctx(info, ordinal, OnceLock::new()))
    }

    /// A backend of `info`, with its context made already (a caller's stream) or not yet.
    fn with_ctx(info: DeviceInfo, ordinal: usize, ctx: OnceLock<std::result::Result<Ctx, String>>) -> CudaBackend {
        CudaBackend {
            arch: info.compute_capability.expect("CUDA devices have one"),
            info,
            ordinal,
            ctx,
            workspaces: Default::default(),
        }
    }

    fn ctx(&self) -> Result<&Ctx> {
        let c = self.ctx.get_or_init(|| {
            let ctx = CudaContext::new(self.ordinal).map_err(|e| format!("{e}"))?;
            // SAFETY: everything runs on the one stream below, so cudarc's per-buffer
            // events (which only order work across streams) would be pure overhead.
            unsafe { ctx.disable_event_tracking() };
            keep_pool_memory(ctx.cu_device());
            let stream = ctx.default_stream();
            Ok(Ctx { ctx, stream })
        });
        c.as_ref().map_err(|m| GemmError::Driver {
            backend: "CUDA",
            op: format!("creating a context on {}", self.info.id),
            message: m.clone(),
            source: None,
        })
    }

    /// The device address and size in bytes of `buf`: crossgemm's own allocation or a
    /// view of a caller's memory ([`CudaBorrowed`]), either of this device's context.
    fn mem(&self, c: &Ctx, buf: &RawBuffer) -> Result<(dsys::CUdeviceptr, usize)> {
        let (ptr, len, ctx) = if let Some(s) = buf.inner.downcast_ref::<CudaSlice<u8>>() {
            // On crossgemm's own contexts event tracking is off and the guard records
            // nothing. On a caller's context that tracks, it records a read here, before
            // the use: harmless, as crossgemm's own memory is only ever used on the
            // device's one stream, whose order is all that its correctness needs.
            let (ptr, _sync) = s.device_ptr(&c.stream);
            (ptr, s.len(), s.context().cu_ctx() as usize)
        } else if let Some(v) = buf.inner.downcast_ref::<CudaBorrowed>() {
            (v.ptr, v.bytes, v.ctx)
        } else {
            return Err(access_err(format!("{buf:?} is not CUDA memory")));
        };
        // Another context's address means nothing here (a second device, or the same GPU
        // through another context), so a launch would fault or touch unrelated memory.
        if ctx != c.ctx.cu_ctx() as usize {
            return Err(access_err(format!(
                "{buf:?} belongs to another CUDA context than {}'s",
                self.info.id
            )));
        }
        Ok((ptr, len))
    }
}

fn access_err(message: String) -> GemmError {
    GemmError::Driver {
        backend: "CUDA",
        op: "buffer access".into(),
        message,
        source: None,
    }
}

/// A kernel compiled for one device.
pub(crate) struct CudaKernel {
    func: CudaFunction,
    symbol: String,
    /// NVRTC's program log, which carries ptxas's resource report.
    log: String,
    ptxas: PtxasInfo,
    /// Largest dynamic shared memory the function has been allowed so far.
    smem_allowed: AtomicU32,
    /// Clusters of the kernel the device keeps resident at once, by the driver's
    /// occupancy calculator (asked at the first clustered persistent launch: a kernel
    /// has one block shape and shared memory size).
    resident_clusters: OnceLock<u32>,
}

impl CudaKernel {
    /// The kernel's symbol.
    #[allow(dead_code)]
    pub(crate) fn symbol(&self) -> &str {
        &self.symbol
    }
    /// NVRTC's full program log (ptxas `-v` output included).
    #[allow(dead_code)]
    pub(crate) fn log(&self) -> &str {
        &self.log
    }
    /// Registers and spills as ptxas reported them.
    pub(crate) fn ptxas(&self) -> &PtxasInfo {
        &self.ptxas
    }
}

/// An allocation as a buffer, if it starts on a 256-byte boundary: cuMemAlloc guarantees
/// that, the stream-ordered pool cudarc prefers does not say so, and vector loads in the
/// kernels depend on it.
fn aligned(c: &Ctx, s: CudaSlice<u8>) -> Result<Box<dyn Any + Send + Sync>> {
    let (ptr, _sync) = s.device_ptr(&c.stream);
    if ptr % 256 != 0 {
        return Err(GemmError::Driver {
            backend: "CUDA",
            op: "alloc".into(),
            message: format!("allocation at {ptr:#x} is not 256-byte aligned"),
            source: None,
        });
    }
    drop(_sync);
    Ok(Box::new(s))
}

/// Loads a CUBIN into the device's context and finds `symbol` in it.
fn load_kernel(c: &Ctx, cubin: Vec<u8>, symbol: &str, log: String) -> Result<CudaKernel> {
    let module = c
        .ctx
        .load_module(cudarc::nvrtc::Ptx::from_binary(cubin))
        .map_err(|e| driver_err(format!("loading the module of `{symbol}`"), e))?;
    let func = module
        .load_function(symbol)
        .map_err(|e| driver_err(format!("finding `{symbol}` in its module"), e))?;
    let ptxas = PtxasInfo::parse(&log);
    Ok(CudaKernel {
        func,
        symbol: symbol.to_string(),
        log,
        ptxas,
        smem_allowed: AtomicU32::new(DEFAULT_SMEM_LIMIT),
        resident_clusters: OnceLock::new(),
    })
}

/// `cfg`'s `grid.x` for a persistent kernel that walks its work in clusters of `size`
/// blocks ([`LaunchDims::persistent`]), lowered to the clusters the device keeps resident
/// at once: clusters must fit whole into a GPC, so fewer than `SMs / size` may, and one
/// launched beyond them would start only when another had finished its whole walk.
fn resident_grid(k: &CudaKernel, size: u32, cfg: LaunchConfig, stream: &CudaStream) -> Result<u32> {
    let grid = cfg.grid_dim.0;
    let resident = match k.resident_clusters.get() {
        Some(&n) => n,
        None => {
            let n = k.func.occupancy_max_active_clusters(cfg, stream).map_err(|e| {
                driver_err(
                    format!("asking how many clusters of `{}` the device runs at once", k.symbol),
                    e,
                )
            })?;
            if crate::env::log() && n * size < grid {
                eprintln!(
                    "crossgemm: `{}` runs {n} clusters of {size} at once (shared memory {} bytes a block): its persistent grid of {grid} blocks is lowered to {}",
                    k.symbol,
                    cfg.shared_mem_bytes,
                    n * size
                );
            }
            *k.resident_clusters.get_or_init(|| n)
        }
    };
    if resident == 0 {
        return Err(GemmError::Unsupported(format!(
            "`{}` runs in clusters of {size} blocks of {} threads with {} bytes of shared memory each, and the driver fits none of them on this device",
            k.symbol, cfg.block_dim.0, cfg.shared_mem_bytes
        )));
    }
    Ok(grid.min(resident * size))
}

/// `CROSSGEMM_LOG` and `CROSSGEMM_DUMP` for a kernel loaded rather than compiled (`how`:
/// from the binary cache, prebuilt): the ptxas report comes from the log kept with the
/// CUBIN.
fn log_loaded(how: &str, source: &str, symbol: &str, arch: Arch, defines: &[(String, u32)], k: &CudaKernel, ms: f64) {
    if let Some(dir) = crate::env::dump_dir() {
        dump(Path::new(&dir), source, symbol, arch, defines, &k.log);
    }
    if crate::env::log() {
        let defs = defines
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        eprintln!(
            "crossgemm: nvrtc sm_{arch} {symbol} [{defs}] {how}, loaded in {ms:.1} ms: {}",
            if k.ptxas.summary.is_empty() {
                "no ptxas report"
            } else {
                &k.ptxas.summary
            }
        );
    }
}

impl DeviceBackend for CudaBackend {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn alloc(&self, bytes: usize) -> Result<Box<dyn Any + Send + Sync>> {
        let c = self.ctx()?;
        let s = c
            .stream
            .alloc_zeros::<u8>(bytes.max(1))
            .map_err(|e| driver_err(format!("allocating {bytes} bytes"), e))?;
        aligned(c, s)
    }

    fn upload(&self, dst: &RawBuffer, src: &[u8]) -> Result<()> {
        let c = self.ctx()?;
        let (ptr, len) = self.mem(c, dst)?;
        if src.len() > len {
            return Err(GemmError::Driver {
                backend: "CUDA",
                op: "upload".into(),
                message: format!("{} bytes into a {len}-byte buffer", src.len()),
                source: None,
            });
        }
        c.ctx.bind_to_thread().map_err(|e| driver_err("upload", e))?;
        // SAFETY: `ptr` is live memory of at least `src.len()` bytes on this context;
        // the synchronize below keeps `src` borrowed until the copy is done.
        unsafe { dres::memcpy_htod_async(ptr, src, c.stream.cu_stream()) }.map_err(|e| driver_err("upload", e))?;
        c.stream.synchronize().map_err(|e| driver_err("upload", e))
    }

    fn download(&self, src: &RawBuffer, dst: &mut [u8]) -> Result<()> {
        let c = self.ctx()?;
        let (ptr, len) = self.mem(c, src)?;
        if dst.len() > len {
            return Err(GemmError::Driver {
                backend: "CUDA",
                op: "download".into(),
                message: format!("{} bytes from a {len}-byte buffer", dst.len()),
                source: None,
            });
        }
        // Separately, so that a failed kernel is reported as such rather than as a copy.
        c.stream
            .synchronize()
            .map_err(|e| driver_err("synchronize before download", e))?;
        // SAFETY: `ptr` holds at least `dst.len()` bytes; the synchronize below completes
        // the copy while `dst` is still borrowed.
        unsafe { dres::memcpy_dtoh_async(dst, ptr, c.stream.cu_stream()) }.map_err(|e| driver_err("download", e))?;
        c.stream.synchronize().map_err(|e| driver_err("download", e))
    }

    fn compile(
        &self,
        source: &str,
        symbol: &str,
        defines: &[(String, u32)],
        needs: &CompileNeeds,
    ) -> Result<Arc<dyn Any + Send + Sync>> {
        let c = self.ctx()?;
        let arch = Arch {
            cc: self.arch,
            suffix: needs.arch_suffix,
        };
        let defines = &[defines, crate::env::exp_defines()].concat()[..];
        let options = nvrtc_options(arch, defines);
        if let Some(p) = crate::prebuilt::find(source, symbol, &options) {
            let start = Instant::now();
            // A driver that refuses it (older than the NVRTC that built it) compiles.
            if let Ok(k) = load_kernel(c, p.cubin().to_vec(), symbol, p.log().to_string()) {
                crate::prebuilt::count_loaded();
                log_loaded(
                    "prebuilt",
                    source,
                    symbol,
                    arch,
                    defines,
                    &k,
                    start.elapsed().as_secs_f64() * 1e3,
                );
                return Ok(Arc::new(k));
            }
        }
        let cache = BinaryCache::from_env();
        let key = cache
            .as_ref()
            .map(|_| BinaryKey::new("cuda", source, symbol, &options, &self.info, &nvrtc_version()));
        if let (Some(cache), Some(key)) = (&cache, &key) {
            if let Some(entry) = cache.load(key) {
                let start = Instant::now();
                match load_kernel(c, entry.binary, symbol, entry.log) {
                    Ok(k) => {
                        binary_cache::count_hit();
                        log_loaded(
                            "binary cache hit",
                            source,
                            symbol,
                            arch,
                            defines,
                            &k,
                            start.elapsed().as_secs_f64() * 1e3,
                        );
                        return Ok(Arc::new(k));
                    }
                    Err(e) => cache.reject(key, &e.to_string()),
                }
            }
        }
        let built = compile_logged(source, symbol, arch, defines)?;
        let k = load_kernel(c, built.cubin.clone(), symbol, built.log)?;
        if let (Some(cache), Some(key)) = (&cache, &key) {
            cache.store(key, &built.cubin, &k.log);
        }
        Ok(Arc::new(k))
    }

    fn launch(&self, kernel: &(dyn Any + Send + Sync), dims: LaunchDims, args: &[KernelArg<'_>]) -> Result<()> {
        let k = kernel.downcast_ref::<CudaKernel>().ok_or_else(|| GemmError::Driver {
            backend: "CUDA",
            op: "launch".into(),
            message: "the kernel was not compiled by the CUDA backend".into(),
            source: None,
        })?;
        if dims.smem_bytes > self.info.smem_per_block {
            return Err(GemmError::Unsupported(format!(
                "`{}` needs {} bytes of shared memory per block; {} allows at most {}",
                k.symbol, dims.smem_bytes, self.info.id, self.info.smem_per_block
            )));
        }
        // An empty grid has nothing to compute, and the driver rejects it.
        if dims.grid.contains(&0) || dims.block.contains(&0) {
            return Ok(());
        }
        let c = self.ctx()?;
        c.ctx
            .bind_to_thread()
            .map_err(|e| driver_err(format!("launching `{}`", k.symbol), e))?;
        if dims.smem_bytes > k.smem_allowed.load(Ordering::Relaxed) {
            k.func
                .set_attribute(
                    dsys::CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    dims.smem_bytes as i32,
                )
                .map_err(|e| {
                    driver_err(
                        format!(
                            "allowing `{}` {} bytes of dynamic shared memory",
                            k.symbol, dims.smem_bytes
                        ),
                        e,
                    )
                })?;
            k.smem_allowed.fetch_max(dims.smem_bytes, Ordering::Relaxed);
        }

        enum Val {
            I(i32),
            L(i64),
            F(f32),
            P(dsys::CUdeviceptr),
            M(tma::TmaMap),
        }
        // On the stack as the arguments are (device::KernelArgs): no allocation a launch.
        let mut vals: smallvec::SmallVec<[Val; 24]> = smallvec::SmallVec::with_capacity(args.len() + 1);
        // Held until the launch is queued (device/workspace.rs).
        let mut workspace = None;
        for a in args {
            match *a {
                KernelArg::Int(v) => vals.push(Val::I(v)),
                KernelArg::Long(v) => vals.push(Val::L(v)),
                KernelArg::Float(v) => vals.push(Val::F(v)),
                KernelArg::Buffer(b) => vals.push(Val::P(self.mem(c, b)?.0)),
                // The scratch data, then the counters (gemm_core::Workspace).
                KernelArg::Workspace(need) => {
                    let held = self.workspaces.hold(need, |bytes, what, _zeroed| {
                        // Zeroed either way: the data's zeroing costs nothing that counts.
                        c.stream
                            .alloc_zeros::<u8>(bytes)
                            .map_err(|e| driver_err(format!("allocating {bytes} bytes of {what}"), e))
                    })?;
                    let (data, _r1) = held.data().device_ptr(&c.stream);
                    let (flags, _r2) = held.flags().device_ptr(&c.stream);
                    drop((_r1, _r2));
                    vals.extend([Val::P(data), Val::P(flags)]);
                    workspace = Some(held);
                }
                KernelArg::TensorMap(b, map) => {
                    let (ptr, _) = self.mem(c, b)?;
                    let encoded = tma::encode(ptr, &map).map_err(|e| GemmError::Driver {
                        backend: "CUDA",
                        op: format!("encoding a tensor map for `{}`", k.symbol),
                        message: e.to_string(),
                        source: Some(Box::new(e)),
                    })?;
                    vals.push(Val::M(encoded));
                }
            }
        }
        let mut builder = c.stream.launch_builder(&k.func);
        for v in &vals {
            match v {
                Val::I(x) => builder.arg(x),
                Val::L(x) => builder.arg(x),
                Val::F(x) => builder.arg(x),
                Val::P(x) => builder.arg(x),
                Val::M(x) => builder.arg(x),
            };
        }
        let mut cfg = LaunchConfig {
            grid_dim: (dims.grid[0], dims.grid[1], dims.grid[2]),
            block_dim: (dims.block[0], dims.block[1], dims.block[2]),
            shared_mem_bytes: dims.smem_bytes,
        };
        if let Some(size) = dims.persistent.filter(|&size| size > 1) {
            cfg.grid_dim.0 = resident_grid(k, size, cfg, &c.stream)?;
        }
        // SAFETY: the generated kernel's ABI is (its family's tensor maps, int M, int N,
        // int K, out, params...) and the launcher passes exactly that list; buffers outlive the call, and every later
        // use of them (download, free) is ordered after the kernel on this stream.
        unsafe { builder.launch(cfg) }.map_err(|e| driver_err(format!("launching `{}` with {dims:?}", k.symbol), e))?;
        drop(workspace);
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        // No context yet means nothing was ever launched.
        match self.ctx.get() {
            Some(Ok(c)) => c.stream.synchronize().map_err(|e| driver_err("synchronize", e)),
            _ => Ok(()),
        }
    }
    fn fill(&self, buf: &RawBuffer, byte: u8) -> Result<()> {
        let c = self.ctx()?;
        let (ptr, len) = self.mem(c, buf)?;
        // Only an empty view of a caller's memory has no bytes (crossgemm allocates one at least).
        if len == 0 {
            return Ok(());
        }
        c.ctx.bind_to_thread().map_err(|e| driver_err("fill", e))?;
        // SAFETY: `ptr` is live memory of `len` bytes on this context; the memset is
        // ordered with every other use of the buffer on the one stream.
        unsafe { dres::memset_d8_async(ptr, byte, len, c.stream.cu_stream()) }.map_err(|e| driver_err("fill", e))
    }

    fn time_launch(&self, kernel: &(dyn Any + Send + Sync), dims: LaunchDims, args: &[KernelArg<'_>]) -> Result<f64> {
        self.time_region(&mut || self.launch(kernel, dims, args))
    }

    /// Device addresses of the context: its allocations and a caller's share them.
    fn memory_span(&self, buf: &RawBuffer) -> Option<(usize, u64)> {
        let c = self.ctx().ok()?;
        let (ptr, _) = self.mem(c, buf).ok()?;
        Some((c.ctx.cu_ctx() as usize, ptr))
    }

    fn as_cuda(&self) -> Option<&CudaBackend> {
        Some(self)
    }

    fn time_region(&self, work: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        let c = self.ctx()?;
        let timing = Some(dsys::CUevent_flags::CU_EVENT_DEFAULT);
        // Events bracket the work alone: whatever was queued before (an L2 flush) is
        // finished by the time `start` is reached and does not count.
        let start = c
            .stream
            .record_event(timing)
            .map_err(|e| driver_err("recording a timing event", e))?;
        work()?;
        let end = c
            .stream
            .record_event(timing)
            .map_err(|e| driver_err("recording a timing event", e))?;
        let ms = start
            .elapsed_ms(&end)
            .map_err(|e| driver_err("reading a timing event", e))?;
        Ok(ms as f64)
    }

    fn copy(&self, src: &RawBuffer, dst: &RawBuffer, bytes: usize) -> Result<()> {
        let c = self.ctx()?;
        let ((sp, s_len), (dp, d_len)) = (self.mem(c, src)?, self.mem(c, dst)?);
        if bytes > s_len || bytes > d_len {
            return Err(GemmError::Driver {
                backend: "CUDA",
                op: "copy".into(),
                message: format!("{bytes} bytes from {s_len} into {d_len} bytes"),
                source: None,
            });
        }
        if bytes == 0 {
            return Ok(());
        }
        c.ctx.bind_to_thread().map_err(|e| driver_err("copy", e))?;
        // SAFETY: both are live memory of at least `bytes` on this context, and the
        // copy is ordered with every other use of them on the one stream.
        unsafe { dres::memcpy_dtod_async(dp, sp, bytes, c.stream.cu_stream()) }.map_err(|e| driver_err("copy", e))
    }

    fn copy_rows(&self, src: &RawBuffer, dst: &RawBuffer, r: RowCopy) -> Result<()> {
        let c = self.ctx()?;
        let ((sp, s_len), (dp, d_len)) = (self.mem(c, src)?, self.mem(c, dst)?);
        let op = || format!("2-D copy of {} rows of {} bytes", r.rows, r.row_bytes);
        if !r.fits(s_len, d_len) {
            return Err(GemmError::Driver {
                backend: "CUDA",
                op: op(),
                message: format!("{r:?} between buffers of {s_len} and {d_len} bytes"),
                source: None,
            });
        }
        if r.rows == 0 || r.row_bytes == 0 {
            return Ok(());
        }
        c.ctx.bind_to_thread().map_err(|e| driver_err(op(), e))?;
        let copy = dsys::CUDA_MEMCPY2D {
            srcXInBytes: 0,
            srcY: 0,
            srcMemoryType: dsys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            srcHost: std::ptr::null(),
            srcDevice: sp + r.src_off as u64,
            srcArray: std::ptr::null_mut(),
            srcPitch: r.src_pitch,
            dstXInBytes: 0,
            dstY: 0,
            dstMemoryType: dsys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            dstHost: std::ptr::null_mut(),
            dstDevice: dp + r.dst_off as u64,
            dstArray: std::ptr::null_mut(),
            dstPitch: r.dst_pitch,
            WidthInBytes: r.row_bytes,
            Height: r.rows,
        };
        // SAFETY: both are live memory of this context and `fits` checked that every run
        // lies inside them; the copy is ordered with every other use on the one stream.
        unsafe { dsys::cuMemcpy2DAsync_v2(&copy, c.stream.cu_stream()) }
            .result()
            .map_err(|e| driver_err(op(), e))
    }

    fn alloc_uninit(&self, bytes: usize) -> Result<Box<dyn Any + Send + Sync>> {
        let c = self.ctx()?;
        // SAFETY: the contents are undefined until written, which is this allocation's
        // contract (scratch that is filled before any kernel reads it).
        let s = unsafe { c.stream.alloc::<u8>(bytes.max(1)) }
            .map_err(|e| driver_err(format!("allocating {bytes} bytes of scratch"), e))?;
        aligned(c, s)
    }
}

/// Raises the release threshold of `dev`'s default memory pool to
/// `CROSSGEMM_POOL_KEEP_MB` (256 MiB by default; a higher one is left as it is). Why:
/// the buffers crossgemm allocates (a generated call's output, every call) come from that
/// pool and are freed in stream order; at the default threshold of 0 the pool hands the
/// pages back to the driver at each synchronisation, so the next call maps them again.
/// The threshold counts the pool's memory in use as well, so a process holding more than
/// it in live buffers still gives freed memory back; staging's scratch, which that made
/// swing (bench/results/h100-2026-12-06aq2), the device keeps itself (`spares`), and the
/// variable lets a program keep more of the rest. A device made from a caller's stream
/// (interop) keeps its pool as the caller set it. Failures are ignored: the threshold
/// changes speed only.
fn keep_pool_memory(dev: dsys::CUdevice) {
    let attr = dsys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD;
    let mut pool: dsys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: driver calls on a valid device handle (the context just made for it), each
    // writing or reading one u64 attribute through a pointer to a live local.
    unsafe {
        if dsys::cuDeviceGetDefaultMemPool(&mut pool, dev).result().is_err() {
            return;
        }
        let mut now: u64 = 0;
        let mut keep = crate::env::pool_keep_bytes();
        if dsys::cuMemPoolGetAttribute(pool, attr, &mut now as *mut u64 as *mut std::ffi::c_void)
            .result()
            .is_ok()
            && now < keep
        {
            let _ = dsys::cuMemPoolSetAttribute(pool, attr, &mut keep as *mut u64 as *mut std::ffi::c_void);
        }
    }
}

impl CudaBackend {
    /// The stream every piece of work on this device goes to, and its context bound to
    /// the calling thread: what a vendor library (cuBLAS) must run on to be ordered and
    /// timed with our kernels.
    #[cfg_attr(not(feature = "baseline"), allow(dead_code))]
    pub(crate) fn stream(&self) -> Result<Arc<CudaStream>> {
        let c = self.ctx()?;
        c.ctx
            .bind_to_thread()
            .map_err(|e| driver_err("binding the context", e))?;
        Ok(c.stream.clone())
    }

    /// The device address of `buf`.
    #[cfg_attr(not(feature = "baseline"), allow(dead_code))]
    pub(crate) fn device_ptr(&self, buf: &RawBuffer) -> Result<dsys::CUdeviceptr> {
        let c = self.ctx()?;
        Ok(self.mem(c, buf)?.0)
    }
}

#[cfg(test)]
mod tests {
    use super::nvrtc::nvrtc_build;
    use super::*;
    use crate::device::test_switches;

    const SAXPY: &str = r#"
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i] + (float)BIAS;
}
"#;

    /// Needs SMEM_WORDS*4 bytes of dynamic shared memory; copies x to y through it.
    const SMEM_COPY: &str = r#"
extern "C" __global__ void smem_copy(int n, const float* x, float* y) {
    extern __shared__ float buf[];
    for (int i = threadIdx.x; i < SMEM_WORDS; i += blockDim.x) buf[i] = (i < n) ? x[i] : 0.0f;
    __syncthreads();
    for (int i = threadIdx.x; i < n && i < SMEM_WORDS; i += blockDim.x) y[i] = buf[SMEM_WORDS - 1 - i] + buf[i] - buf[SMEM_WORDS - 1 - i];
}
"#;

    /// Every block counts itself in and waits (up to about a second) until the whole
    /// grid has: only a grid whose blocks all run at once gets through without `failed`.
    const RESIDENT: &str = r#"
extern "C" __global__ void __cluster_dims__(4, 1, 1) resident(unsigned* count, unsigned* failed, unsigned* grid) {
    extern __shared__ unsigned char pad[];
    if (threadIdx.x == 0) {
        pad[0] = 1;
        atomicAdd(count, 1u);
        const long long t0 = clock64();
        while (atomicAdd(count, 0u) < gridDim.x) {
            if (clock64() - t0 > 2000000000LL) { atomicExch(failed, 1u); break; }
        }
        if (blockIdx.x == 0) *grid = gridDim.x;
    }
}
"#;

    fn defs(d: &[(&str, u32)]) -> Vec<(String, u32)> {
        d.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    fn floats(b: &[u8]) -> Vec<f32> {
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    fn bytes(f: &[f32]) -> Vec<u8> {
        f.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn discover_never_panics() {
        let devs = discover();
        for d in &devs {
            assert!(d.info().id.starts_with("cuda:"));
            assert_eq!(d.info().platform, "CUDA");
        }
        eprintln!(
            "CUDA devices: {:?}",
            devs.iter().map(|d| d.info().to_string()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn ptxas_report_is_parsed() {
        let log = "ptxas info    : 0 bytes gmem\nptxas info    : Compiling entry function 'k' for 'sm_90'\n\
                   ptxas info    : Function properties for k\nptxas         .     8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n\
                   ptxas info    : Used 168 registers, used 1 barriers, 380 bytes cmem[0]\n\
                   ptxas info    : Compile time = 284.645 ms\n";
        let p = PtxasInfo::parse(log);
        assert_eq!(p.registers, Some(168));
        assert_eq!(p.spill_stores, Some(4));
        assert_eq!(p.spill_loads, Some(12));
        assert_eq!(p.stack_frame, Some(8));
        assert!(!p.serialised_wgmma);
        assert_eq!(
            p.summary,
            "Used 168 registers, used 1 barriers, 380 bytes cmem[0]; 8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads"
        );
    }

    /// ptxas reports serialised wgmma as `info` lines: the injected wait and arrive as
    /// NVRTC 13.0 printed them for a kernel handing a wgmma's accumulators to a call
    /// before its wait (gemm-core's `a_serialised_wgmma_is_caught`), and an advisory of
    /// the "Potential Performance Loss" form.
    #[test]
    fn serialised_wgmma_is_read() {
        let injected = "ptxas info    : (C7519) warpgroup.arrive is injected in around line 84 by compiler to allow use of registers in GMMA in function 'k'\n\
                        ptxas info    : (C7517) warpgroup.wait is injected in around line 71 by compiler to allow use of registers defined by GMMA in function 'k'\n";
        assert!(PtxasInfo::parse(injected).serialised_wgmma);
        let loss = "ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized due to the presence of Extern calls in the function 'k'\n";
        assert!(PtxasInfo::parse(loss).serialised_wgmma);
        assert!(!PtxasInfo::parse("ptxas info    : Used 90 registers\n").serialised_wgmma);
    }

    #[test]
    fn nvrtc_compiles_for_sm90_without_a_gpu() {
        if !nvrtc_or_skip("nvrtc_compiles_for_sm90_without_a_gpu") {
            return;
        }
        let log = nvrtc_compile_check(SAXPY, "saxpy", 90.into(), &defs(&[("BIAS", 0)])).expect("saxpy compiles");
        let p = PtxasInfo::parse(&log);
        assert!(p.registers.is_some(), "no ptxas register line in the log:\n{log}");
        assert_eq!(p.spill_stores, Some(0), "{log}");
    }

    /// The row-copy kernels (staging, `row_copy.rs`) build for sm_80 and sm_90 at every
    /// word width, without spills.
    #[test]
    fn row_copy_kernels_compile_without_a_gpu() {
        if !nvrtc_or_skip("row_copy_kernels_compile_without_a_gpu") {
            return;
        }
        for cc in [80, 90] {
            for w in crate::row_copy::WORD_BYTES {
                let symbol = format!("cg_row_copy_{w}");
                let log = nvrtc_compile_check(
                    crate::row_copy::CUDA_SOURCE,
                    &symbol,
                    cc.into(),
                    &crate::row_copy::defines(),
                )
                .unwrap_or_else(|e| panic!("sm_{cc} {symbol}: {e}"));
                assert_eq!(PtxasInfo::parse(&log).spill_stores, Some(0), "sm_{cc} {symbol}: {log}");
            }
        }
    }

    /// The tf32x3 split kernel (`split3.rs`) builds for sm_80 and sm_90 without spills.
    #[test]
    fn split_kernel_compiles_without_a_gpu() {
        if !nvrtc_or_skip("split_kernel_compiles_without_a_gpu") {
            return;
        }
        for cc in [80, 90] {
            let log = nvrtc_compile_check(&crate::split3::cuda_source(), crate::split3::SYMBOL, cc.into(), &[])
                .unwrap_or_else(|e| panic!("sm_{cc}: {e}"));
            // The H100 machine's NVRTC (CUDA 12) built it with an empty log (batch av2b),
            // this machine's (CUDA 13) with ptxas's report: where there is one, no spills.
            let spills = PtxasInfo::parse(&log).spill_stores;
            assert!(
                spills.unwrap_or(0) == 0 && (spills.is_some() || log.trim().is_empty()),
                "sm_{cc}: {log}"
            );
        }
    }

    /// The generator's three CUDA families, with a bias+GELU epilogue, under the options
    /// a device would use. (The crate's own suite covers every source; this pins the
    /// options to real generated code.)
    #[test]
    fn generated_sources_compile_for_sm90() {
        use gemm_core::codegen::Variant;
        use gemm_core::{AccMode, Backend, DType, EpOp, FamilyId, Func, GemmIr, Layout, MmaTile, Param, Problem};
        use gemm_core::{SimtTile, TileConfig};
        if !nvrtc_or_skip("generated_sources_compile_for_sm90") {
            return;
        }
        let ir = |dt: DType, acc: AccMode| GemmIr {
            name: "t".into(),
            params: vec![
                Param::matrix("a", dt, Layout::RowMajor),
                Param::matrix("b", dt, Layout::ColMajor),
                Param::row("bias", DType::F32),
            ],
            a: 0,
            a_t: false,
            b: 1,
            b_t: false,
            ab_dtype: dt,
            acc,
            out_dtype: dt,
            out_layout: Layout::RowMajor,
            epilogue: vec![EpOp::Acc, EpOp::Param(2), EpOp::Add, EpOp::Call(Func::Gelu)],
        };
        let mma = TileConfig::Mma(MmaTile {
            block_m: 128,
            block_n: 128,
            block_k: 32,
            warps_m: 2,
            warps_n: 2,
            stages: 3,
            group_m: 8,
        });
        let simt = TileConfig::Simt(SimtTile {
            mwg: 64,
            nwg: 64,
            kwg: 16,
            mdimc: 16,
            ndimc: 16,
            vw: 4,
            group_m: 8,
            ksplit: 1,
        });
        for (g, tile) in [
            (ir(DType::F16, AccMode::F32), mma),
            (ir(DType::Bf16, AccMode::F32), mma),
            (ir(DType::F32, AccMode::Tf32), mma),
            (ir(DType::F32, AccMode::F32), simt),
        ] {
            let family: FamilyId = tile.family_id();
            let src = family.emit(&g, Backend::Cuda, Variant::Full);
            let d: Vec<(String, u32)> = tile
                .defines(&g, Backend::Cuda, Problem::new(1024, 1024, 1024))
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
            let log = nvrtc_compile_check(&src, &g.symbol(), 90.into(), &d)
                .unwrap_or_else(|e| panic!("{:?} {family}: {e}", g.ab_dtype));
            let p = PtxasInfo::parse(&log);
            assert!(p.registers.is_some(), "{log}");
            eprintln!("{:?}/{family}: {}", g.ab_dtype, p.summary);
        }
    }

    #[test]
    fn nvrtc_rejections_carry_the_log() {
        if !nvrtc_or_skip("nvrtc_rejections_carry_the_log") {
            return;
        }
        // BIAS undefined: a compile error naming it.
        match nvrtc_compile_check(SAXPY, "saxpy", 90.into(), &[]) {
            Err(GemmError::Compile {
                backend,
                kernel,
                options,
                log,
            }) => {
                assert_eq!(backend, "NVRTC");
                assert_eq!(kernel, "saxpy");
                assert!(options.iter().any(|o| o == "--std=c++17"), "{options:?}");
                assert!(log.contains("BIAS"), "{log}");
            }
            other => panic!("expected a compile error, got {:?}", other.map(|_| ())),
        }
        // Compiles, but under another name.
        match nvrtc_compile_check(SAXPY, "not_there", 90.into(), &defs(&[("BIAS", 1)])) {
            Err(GemmError::Compile { log, .. }) => assert!(log.contains("not_there"), "{log}"),
            other => panic!("expected a missing-symbol error, got {:?}", other.map(|_| ())),
        }
    }

    #[test]
    fn dump_writes_source_and_log() {
        if !nvrtc_or_skip("dump_writes_source_and_log") {
            return;
        }
        let dir = std::env::temp_dir().join(format!("crossgemm-dump-test-{}", std::process::id()));
        let d = defs(&[("BIAS", 2)]);
        let built = nvrtc_build(SAXPY, "saxpy", 90.into(), &d).unwrap();
        dump(&dir, SAXPY, "saxpy", 90.into(), &d, &built.log);
        // The same defines for another architecture are another file, not an overwrite.
        let sm90a = nvrtc::Arch { cc: 90, suffix: "a" };
        dump(&dir, SAXPY, "saxpy", sm90a, &d, &built.log);
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().any(|n| n.starts_with("saxpy-") && n.ends_with(".cu")),
            "{names:?}"
        );
        assert!(
            names.iter().any(|n| n.starts_with("saxpy-") && n.ends_with(".log")),
            "{names:?}"
        );
        assert_eq!(names.iter().filter(|n| n.ends_with(".cu")).count(), 2, "{names:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Whether libnvrtc is there for `test`'s compile checks; a skip is reported, or
    /// fails under `CROSSGEMM_REQUIRE_NVRTC=1`.
    fn nvrtc_or_skip(test: &str) -> bool {
        if nvrtc_present() {
            return true;
        }
        test_switches::skip(
            &format!("device::cuda::{test}"),
            "NVRTC compile checks",
            "libnvrtc.so.13 was not found (is its folder on LD_LIBRARY_PATH?)",
            "CROSSGEMM_REQUIRE_NVRTC",
        );
        false
    }

    /// The first CUDA device for `test`; without one the skip is reported, or fails
    /// under `CROSSGEMM_REQUIRE_CUDA=1`.
    fn first_gpu(test: &str) -> Option<Device> {
        let d = discover().into_iter().next();
        if d.is_none() {
            test_switches::skip(
                &format!("device::cuda::{test}"),
                "runs on a CUDA device",
                if cuda_present() {
                    "no CUDA device was found (libcuda loads; `nvidia-smi`?)"
                } else {
                    "libcuda.so.1 was not found"
                },
                "CROSSGEMM_REQUIRE_CUDA",
            );
        }
        d
    }

    #[test]
    fn info_is_filled_in() {
        let Some(dev) = first_gpu("info_is_filled_in") else {
            return;
        };
        let i = dev.info();
        assert_eq!(i.kind, Backend::Cuda);
        assert!(i.compute_capability.unwrap() >= 50);
        assert!(i.compute_units > 0 && i.max_threads_per_block >= 256 && i.global_mem_bytes > 0);
        assert!(i.smem_per_block >= DEFAULT_SMEM_LIMIT, "{i:?}");
        assert!(i.driver.contains('.'), "{}", i.driver);
    }

    #[test]
    fn upload_launch_download() {
        let Some(dev) = first_gpu("upload_launch_download") else {
            return;
        };
        let n = 1000usize;
        let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let y: Vec<f32> = (0..n).map(|i| 2.0 * i as f32).collect();
        let bx = RawBuffer::new(&dev, n * 4).unwrap();
        let by = RawBuffer::new(&dev, n * 4).unwrap();
        let mut zeros = vec![0xffu8; n * 4];
        by.download(&mut zeros).unwrap();
        assert!(zeros.iter().all(|&b| b == 0), "alloc must zero");
        bx.upload(&bytes(&x)).unwrap();
        by.upload(&bytes(&y)).unwrap();
        let k = dev
            .backend()
            .compile(SAXPY, "saxpy", &defs(&[("BIAS", 1)]), &CompileNeeds::default())
            .unwrap();
        let ck = k.downcast_ref::<CudaKernel>().unwrap();
        assert!(ck.ptxas().registers.is_some(), "{}", ck.log());
        let dims = LaunchDims {
            grid: [(n as u32).div_ceil(128), 1, 1],
            block: [128, 1, 1],
            smem_bytes: 0,
            persistent: None,
        };
        dev.backend()
            .launch(
                &*k,
                dims,
                &[
                    KernelArg::Int(n as i32),
                    KernelArg::Float(3.0),
                    KernelArg::Buffer(&bx),
                    KernelArg::Buffer(&by),
                ],
            )
            .unwrap();
        let mut out = vec![0u8; n * 4];
        by.download(&mut out).unwrap();
        let out = floats(&out);
        for i in 0..n {
            assert_eq!(out[i], 3.0 * x[i] + y[i] + 1.0, "at {i}");
        }
    }

    #[test]
    fn large_dynamic_shared_memory() {
        let Some(dev) = first_gpu("large_dynamic_shared_memory") else {
            return;
        };
        let max = dev.info().smem_per_block;
        let words = (96 * 1024 / 4).min(max / 4);
        let n = words as usize;
        let x: Vec<f32> = (0..n).map(|i| (i % 977) as f32).collect();
        let bx = RawBuffer::new(&dev, n * 4).unwrap();
        let by = RawBuffer::new(&dev, n * 4).unwrap();
        bx.upload(&bytes(&x)).unwrap();
        let k = dev
            .backend()
            .compile(
                SMEM_COPY,
                "smem_copy",
                &defs(&[("SMEM_WORDS", words)]),
                &CompileNeeds::default(),
            )
            .unwrap();
        let dims = LaunchDims {
            grid: [1, 1, 1],
            block: [256, 1, 1],
            smem_bytes: words * 4,
            persistent: None,
        };
        let args = [KernelArg::Int(n as i32), KernelArg::Buffer(&bx), KernelArg::Buffer(&by)];
        dev.backend().launch(&*k, dims, &args).unwrap();
        let mut out = vec![0u8; n * 4];
        by.download(&mut out).unwrap();
        assert_eq!(floats(&out), x);
        let too_big = LaunchDims {
            smem_bytes: max + 1,
            ..dims
        };
        assert!(matches!(
            dev.backend().launch(&*k, too_big, &args),
            Err(GemmError::Unsupported(_))
        ));
    }

    /// A persistent grid of clusters of 4 blocks that each fill an SM's shared memory:
    /// fewer such clusters fit at once than SMs / 4 (30 of 33 on the H200), and the
    /// launcher lowers the grid to those, so every block of it runs at once.
    #[test]
    fn clustered_persistent_grids_run_at_once() {
        let Some(dev) = first_gpu("clustered_persistent_grids_run_at_once") else {
            return;
        };
        // Thread block clusters are sm_90's: before it there is nothing to lower.
        if dev.info().compute_capability.unwrap_or(0) < 90 {
            return;
        }
        let k = dev
            .backend()
            .compile(RESIDENT, "resident", &[], &CompileNeeds::default())
            .unwrap();
        let smem = (200 * 1024).min(dev.info().smem_per_block);
        let dims = LaunchDims {
            grid: [4 * (dev.info().compute_units / 4).max(1), 1, 1],
            block: [128, 1, 1],
            smem_bytes: smem,
            persistent: Some(4),
        };
        let words: Vec<RawBuffer> = (0..3).map(|_| RawBuffer::new(&dev, 4).unwrap()).collect();
        let args: Vec<KernelArg> = words.iter().map(KernelArg::Buffer).collect();
        dev.backend().launch(&*k, dims, &args).unwrap();
        let read = |b: &RawBuffer| {
            let mut w = [0u8; 4];
            b.download(&mut w).unwrap();
            u32::from_le_bytes(w)
        };
        let (count, failed, grid) = (read(&words[0]), read(&words[1]), read(&words[2]));
        assert_eq!(failed, 0, "{count} of {grid} blocks were running at once");
        assert_eq!(count, grid);
        assert!(grid <= dims.grid[0] && grid % 4 == 0 && grid > 0, "grid {grid}");
    }
}
