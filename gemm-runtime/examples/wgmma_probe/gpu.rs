//! The few driver and cuBLAS calls the probe needs, on the primary context and the
//! default stream, every return code checked.

use cudarc::cublas::sys as bsys;
use cudarc::driver::sys;
use std::ffi::{c_void, CStr, CString};

pub type Res<T> = Result<T, String>;

fn err_name(r: sys::CUresult) -> String {
    let mut p: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: writes a pointer to a static string.
    if unsafe { sys::cuGetErrorName(r, &mut p) } == sys::CUresult::CUDA_SUCCESS && !p.is_null() {
        // SAFETY: the driver returns a NUL-terminated static string.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    } else {
        format!("{r:?}")
    }
}

pub fn ck(r: sys::CUresult, what: &str) -> Res<()> {
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(format!("{what}: {}", err_name(r)))
    }
}

pub struct Gpu {
    pub name: String,
    pub sm_count: u32,
    pub cc: (i32, i32),
    pub smem_optin: u32,
}

impl Gpu {
    pub fn new() -> Res<Gpu> {
        // SAFETY: only dlopens.
        if !unsafe { sys::is_culib_present() } {
            return Err("libcuda not found".into());
        }
        // SAFETY: plain driver calls with valid out-pointers.
        unsafe {
            ck(sys::cuInit(0), "cuInit")?;
            let mut dev = 0;
            ck(sys::cuDeviceGet(&mut dev, 0), "cuDeviceGet")?;
            let mut ctx = std::ptr::null_mut();
            ck(sys::cuDevicePrimaryCtxRetain(&mut ctx, dev), "cuDevicePrimaryCtxRetain")?;
            ck(sys::cuCtxSetCurrent(ctx), "cuCtxSetCurrent")?;
            let mut buf = [0 as std::ffi::c_char; 256];
            ck(sys::cuDeviceGetName(buf.as_mut_ptr(), 256, dev), "cuDeviceGetName")?;
            let name = CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned();
            let attr = |a: sys::CUdevice_attribute| -> Res<i32> {
                let mut v = 0;
                ck(sys::cuDeviceGetAttribute(&mut v, a, dev), "cuDeviceGetAttribute")?;
                Ok(v)
            };
            use sys::CUdevice_attribute as A;
            Ok(Gpu {
                name,
                sm_count: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
                cc: (
                    attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
                    attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
                ),
                smem_optin: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)? as u32,
            })
        }
    }
}

/// A device allocation, freed on drop.
pub struct DevBuf {
    pub ptr: u64,
    pub bytes: usize,
}

impl DevBuf {
    pub fn new(bytes: usize) -> Res<DevBuf> {
        let mut ptr = 0;
        // SAFETY: valid out-pointer.
        ck(
            unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes.max(16)) },
            &format!("cuMemAlloc({bytes})"),
        )?;
        Ok(DevBuf { ptr, bytes })
    }
    pub fn memset(&self, byte: u8) -> Res<()> {
        // SAFETY: within the allocation; default stream.
        ck(
            unsafe { sys::cuMemsetD8Async(self.ptr, byte, self.bytes, std::ptr::null_mut()) },
            "cuMemsetD8Async",
        )
    }
    pub fn download<T: Copy + Default>(&self, n: usize) -> Res<Vec<T>> {
        let mut v = vec![T::default(); n];
        assert!(n * std::mem::size_of::<T>() <= self.bytes);
        sync()?;
        // SAFETY: host buffer of n elements, device range within the allocation.
        ck(
            unsafe { sys::cuMemcpyDtoH_v2(v.as_mut_ptr() as *mut c_void, self.ptr, n * std::mem::size_of::<T>()) },
            "cuMemcpyDtoH",
        )?;
        Ok(v)
    }
}

impl Drop for DevBuf {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemAlloc, freed once.
        let _ = unsafe { sys::cuMemFree_v2(self.ptr) };
    }
}

pub struct Module(sys::CUmodule);

impl Module {
    pub fn load(cubin: &[u8]) -> Res<Module> {
        let mut m = std::ptr::null_mut();
        // SAFETY: a CUBIN image from NVRTC.
        ck(
            unsafe { sys::cuModuleLoadData(&mut m, cubin.as_ptr() as *const c_void) },
            "cuModuleLoadData",
        )?;
        Ok(Module(m))
    }
    pub fn func(&self, name: &str) -> Res<sys::CUfunction> {
        let c = CString::new(name).unwrap();
        let mut f = std::ptr::null_mut();
        // SAFETY: valid module and name.
        ck(
            unsafe { sys::cuModuleGetFunction(&mut f, self.0, c.as_ptr()) },
            &format!("cuModuleGetFunction({name})"),
        )?;
        Ok(f)
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        // SAFETY: loaded above, unloaded once.
        let _ = unsafe { sys::cuModuleUnload(self.0) };
    }
}

pub fn func_attr(f: sys::CUfunction, a: sys::CUfunction_attribute) -> i32 {
    let mut v = -1;
    // SAFETY: valid function.
    let _ = unsafe { sys::cuFuncGetAttribute(&mut v, a, f) };
    v
}

pub fn set_smem(f: sys::CUfunction, bytes: u32) -> Res<()> {
    // SAFETY: valid function.
    ck(
        unsafe {
            sys::cuFuncSetAttribute(
                f,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                bytes as i32,
            )
        },
        "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)",
    )
}

/// Launches `f` on the default stream; `args` point at each argument's value.
pub fn launch(f: sys::CUfunction, grid: u32, block: u32, smem: u32, args: &mut [*mut c_void]) -> Res<()> {
    // SAFETY: the caller passes pointers to values of the kernel's parameter types.
    ck(
        unsafe {
            sys::cuLaunchKernel(
                f,
                grid,
                1,
                1,
                block,
                1,
                1,
                smem,
                std::ptr::null_mut(),
                args.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        },
        "cuLaunchKernel",
    )
}

pub fn sync() -> Res<()> {
    // SAFETY: plain call.
    ck(unsafe { sys::cuCtxSynchronize() }, "cuCtxSynchronize")
}

/// Waits for the default stream, giving up (and ending the process with code 3, since
/// a hung kernel cannot be recovered) after `secs` seconds.
pub fn sync_or_die(secs: f64, what: &str) -> Res<()> {
    let start = std::time::Instant::now();
    loop {
        // SAFETY: plain call on the default stream.
        let r = unsafe { sys::cuStreamQuery(std::ptr::null_mut()) };
        match r {
            sys::CUresult::CUDA_SUCCESS => return Ok(()),
            sys::CUresult::CUDA_ERROR_NOT_READY => {}
            e => return ck(e, what),
        }
        if start.elapsed().as_secs_f64() > secs {
            println!("HANG: {what} did not finish within {secs} s; exiting");
            eprintln!("HANG: {what} did not finish within {secs} s; exiting");
            std::process::exit(3);
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

pub struct Event(sys::CUevent);

impl Event {
    pub fn new() -> Res<Event> {
        let mut e = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        ck(unsafe { sys::cuEventCreate(&mut e, 0) }, "cuEventCreate")?;
        Ok(Event(e))
    }
    pub fn record(&self) -> Res<()> {
        // SAFETY: valid event, default stream.
        ck(
            unsafe { sys::cuEventRecord(self.0, std::ptr::null_mut()) },
            "cuEventRecord",
        )
    }
    pub fn ms_since(&self, start: &Event) -> Res<f32> {
        let mut ms = 0f32;
        // SAFETY: both events recorded and complete (the caller synchronised).
        ck(
            unsafe { sys::cuEventElapsedTime_v2(&mut ms, start.0, self.0) },
            "cuEventElapsedTime",
        )?;
        Ok(ms)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created above.
        let _ = unsafe { sys::cuEventDestroy_v2(self.0) };
    }
}

/// A cuBLAS handle on the default stream, fp32 accumulation without reduced-precision
/// split-K reductions (as crossgemm's harness sets it).
pub struct Blas(bsys::cublasHandle_t);

impl Blas {
    pub fn new() -> Res<Blas> {
        // SAFETY: only dlopens.
        if !unsafe { bsys::is_culib_present() } {
            return Err("libcublas not found".into());
        }
        let h = cudarc::cublas::result::create_handle().map_err(|e| format!("cublasCreate: {e:?}"))?;
        // SAFETY: live handle.
        unsafe { bsys::cublasSetMathMode(h, bsys::cublasMath_t::CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) }
            .result()
            .map_err(|e| format!("cublasSetMathMode: {e:?}"))?;
        Ok(Blas(h))
    }

    pub fn version(&self) -> i32 {
        let mut v = 0;
        // SAFETY: live handle.
        let _ = unsafe { bsys::cublasGetVersion_v2(self.0, &mut v) };
        v
    }

    /// Row-major `C (m×n) = A (m×k) · B (k×n)` where A is row-major (`a_row`) or
    /// column-major, B row-major (`b_row`) or column-major; `ab_bf16` picks bf16 or f16
    /// operands, `c_ty` the output type; fp32 compute.
    #[allow(clippy::too_many_arguments)]
    pub fn gemm(
        &self,
        m: usize,
        n: usize,
        k: usize,
        a: u64,
        a_row: bool,
        b: u64,
        b_row: bool,
        ab_bf16: bool,
        c: u64,
        c_ty: bsys::cudaDataType,
    ) -> Res<()> {
        use bsys::cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T};
        let ty = if ab_bf16 {
            bsys::cudaDataType::CUDA_R_16BF
        } else {
            bsys::cudaDataType::CUDA_R_16F
        };
        // Column-major view: C^T (n×m, ld n) = op(B') (n×k) · op(A') (k×m).
        let (opb, ldb) = if b_row { (CUBLAS_OP_N, n) } else { (CUBLAS_OP_T, k) };
        let (opa, lda) = if a_row { (CUBLAS_OP_N, k) } else { (CUBLAS_OP_T, m) };
        let (alpha, beta) = (1f32, 0f32);
        // SAFETY: the pointers are live allocations of the sizes the layouts imply.
        unsafe {
            cudarc::cublas::result::gemm_ex(
                self.0,
                opb,
                opa,
                n as i32,
                m as i32,
                k as i32,
                &alpha as *const f32 as *const c_void,
                b as *const c_void,
                ty,
                ldb as i32,
                a as *const c_void,
                ty,
                lda as i32,
                &beta as *const f32 as *const c_void,
                c as *mut c_void,
                c_ty,
                n as i32,
                bsys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                bsys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(|e| format!("cublasGemmEx {m}x{n}x{k}: {e:?}"))
    }
}

impl Drop for Blas {
    fn drop(&mut self) {
        // SAFETY: created above.
        let _ = unsafe { cudarc::cublas::result::destroy_handle(self.0) };
    }
}
