//! The vendor baselines crossgemm is measured against: cuBLAS (`cublasGemmEx`) and
//! cuBLASLt (`cublasLtMatmul` with its fused bias/activation epilogues), plus the
//! elementwise kernel a cuBLAS user needs for an epilogue cuBLAS cannot fuse. They run
//! on the device's own stream and read our [`Matrix`]/[`Row`] buffers in place, so a
//! [`Timer`](super::Timer) times them and our kernels identically, in one process.
//!
//! Layouts: our `out (M×N, row-major) = x (M×K, row-major) · w (K×N, column-major)` is,
//! in cuBLAS's column-major terms, `outᵀ (N×M) = wᵀ · xᵀ` with `w` read transposed
//! ("TN"), all leading dimensions K (inputs) and N (output): the layout cuBLAS is
//! fastest at, and the one the bias epilogue wants (one bias value per row of `outᵀ`).
//! A row-major `w` (K×N, `bench --w-layout row`) is read as it is ("NN", leading
//! dimension N).

use crate::buffer::{Matrix, Row};
use crate::device::{Device, KernelArg, RawBuffer};
use crate::element::{ColMajor, Element, LayoutType};
use crate::error::{GemmError, Result};
use cudarc::cublas::{result as blas, sys as bsys};
use cudarc::cublaslt::{result as lt, sys as ltsys};
use gemm_core::Backend;
use gemm_core::{DType, LaunchDims, Layout};
use std::ffi::c_void;
use std::sync::Arc;

pub use super::Epilogue;

/// Compute type of a baseline GEMM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compute {
    /// fp32 accumulation: `CUBLAS_COMPUTE_32F` (exact SGEMM for f32 operands; f16/bf16
    /// tensor cores with fp32 accumulation otherwise).
    F32,
    /// f32 operands on tf32 tensor cores: `CUBLAS_COMPUTE_32F_FAST_TF32`.
    Tf32,
}

fn blas_err(op: impl Into<String>, e: impl std::fmt::Debug) -> GemmError {
    GemmError::Driver {
        backend: "cuBLAS",
        op: op.into(),
        message: format!("{e:?}"),
        source: None,
    }
}

/// Whether the cuBLAS and cuBLASLt libraries can be loaded (never panics).
pub fn available() -> bool {
    // SAFETY: only tries to dlopen the libraries.
    crate::device::cuda::cuda_present() && unsafe { bsys::is_culib_present() && ltsys::is_culib_present() }
}

/// cuBLAS and cuBLASLt handles bound to one CUDA device's stream.
pub struct Cublas {
    device: Device,
    stream: Arc<cudarc::driver::CudaStream>,
    handle: bsys::cublasHandle_t,
    lt: ltsys::cublasLtHandle_t,
    workspace: RawBuffer,
}

// SAFETY: the handles are only used through `&self` methods that queue work on the one
// stream; cuBLAS handles may be used from any thread as long as calls do not race, and
// every method here is a short sequence of calls on that stream.
unsafe impl Send for Cublas {}

/// cuBLASLt's recommended workspace on Hopper.
const LT_WORKSPACE: usize = 32 << 20;

impl Cublas {
    /// Handles on `device`'s stream. Fails on a non-CUDA device or without the libraries.
    pub fn new(device: &Device) -> Result<Cublas> {
        if device.info().kind != Backend::Cuda {
            return Err(GemmError::Unsupported(format!(
                "cuBLAS runs on CUDA devices only, not on {}",
                device.info()
            )));
        }
        if !available() {
            return Err(GemmError::Unsupported(
                "libcublas / libcublasLt not found (set LD_LIBRARY_PATH to the CUDA toolkit's lib64)".into(),
            ));
        }
        let cuda = device
            .backend()
            .as_cuda()
            .ok_or_else(|| GemmError::Unsupported("not a CUDA device".into()))?;
        let stream = cuda.stream()?;
        let handle = blas::create_handle().map_err(|e| blas_err("cublasCreate", e))?;
        // Owned from here, so that an error below still destroys the handles.
        let mut me = Cublas {
            device: device.clone(),
            stream,
            handle,
            lt: std::ptr::null_mut(),
            workspace: RawBuffer::new(device, LT_WORKSPACE)?,
        };
        me.lt = lt::create_handle().map_err(|e| blas_err("cublasLtCreate", e))?;
        // SAFETY: a live handle and the device's live stream.
        unsafe { blas::set_stream(me.handle, me.stream.cu_stream() as _) }
            .map_err(|e| blas_err("cublasSetStream", e))?;
        // fp32 accumulation all the way, as in the torch baseline
        // (allow_fp16_reduced_precision_reduction = False): split-K partial sums stay fp32.
        let mode = bsys::cublasMath_t::CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
        // SAFETY: a live handle.
        unsafe { bsys::cublasSetMathMode(me.handle, mode) }
            .result()
            .map_err(|e| blas_err("cublasSetMathMode", e))?;
        Ok(me)
    }

    /// "cuBLAS 13.0.0 / cuBLASLt 130000".
    pub fn version(&self) -> String {
        let mut v = 0;
        // SAFETY: a live handle; writes one int.
        let blas_v = unsafe { bsys::cublasGetVersion_v2(self.handle, &mut v) }
            .result()
            .map(|_| format!("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100))
            .unwrap_or_else(|_| "unknown".into());
        // SAFETY: no arguments.
        let lt_v = unsafe { ltsys::cublasLtGetVersion() };
        format!("cuBLAS {blas_v} / cuBLASLt {lt_v}")
    }

    fn ptr(&self, buf: &RawBuffer) -> Result<u64> {
        self.device
            .backend()
            .as_cuda()
            .ok_or_else(|| GemmError::Unsupported("not a CUDA device".into()))?
            .device_ptr(buf)
    }

    /// M, N and K of `out = x[:, ..k] · w[..k, :]`, where `x`'s stored rows and `w`'s
    /// stored columns hold `x.cols()` elements (the leading dimension; `k` for packed
    /// operands), after checking the shapes, the devices and cuBLAS's 32-bit sizes.
    /// A row-major `w` (K×N, N-contiguous) has no padded form: its rows are `x.cols()`.
    fn check_ld<T: Element, L: LayoutType>(
        &self,
        x: &Matrix<T>,
        w: &Matrix<T, L>,
        k: usize,
        out: &Matrix<T>,
    ) -> Result<(usize, usize, usize)> {
        let (m, ld, n) = (x.rows(), x.cols(), w.cols());
        let padded_rows = L::LAYOUT == Layout::RowMajor && ld != k;
        if w.rows() != ld || k > ld || out.rows() != m || out.cols() != n || padded_rows {
            return Err(GemmError::Shape {
                kernel: "cuBLAS baseline".into(),
                detail: format!(
                    "x {}x{} · w {}x{} -> out {}x{} (K = {k})",
                    m,
                    ld,
                    w.rows(),
                    n,
                    out.rows(),
                    out.cols()
                ),
            });
        }
        for d in [x.device(), w.device(), out.device()] {
            if d != &self.device {
                return Err(GemmError::Unsupported(format!(
                    "cuBLAS handle is on {}, an operand on {}",
                    self.device.info().id,
                    d.info().id
                )));
            }
        }
        if [m, n, ld].iter().any(|&d| d > i32::MAX as usize) {
            return Err(GemmError::Unsupported(format!(
                "{m}x{n}x{ld} exceeds cuBLAS's 32-bit sizes"
            )));
        }
        Ok((m, n, k))
    }

    /// `out = x · w` with `cublasGemmEx`, accumulating as `compute` says; `w` stored
    /// column-major (`nn.Linear`'s weight) or row-major (K×N).
    pub fn gemm<T: Element, L: LayoutType>(
        &self,
        x: &Matrix<T>,
        w: &Matrix<T, L>,
        out: &mut Matrix<T>,
        compute: Compute,
    ) -> Result<()> {
        self.gemm_strided(x, w, x.cols(), out, compute)
    }

    /// `out = x[:, ..k] · w[..k, :]` with `cublasGemmEx`: `x` and `w` store rows (columns)
    /// of `x.cols()` elements (the leading dimension) of which the first `k` take part,
    /// as `crossgemm bench --pad` lays out the operands of its views (a row-major `w`:
    /// packed only).
    pub fn gemm_strided<T: Element, L: LayoutType>(
        &self,
        x: &Matrix<T>,
        w: &Matrix<T, L>,
        k: usize,
        out: &mut Matrix<T>,
        compute: Compute,
    ) -> Result<()> {
        let (m, n, k) = self.check_ld(x, w, k, out)?;
        let ld = x.cols();
        // In cuBLAS's column-major terms outᵀ = op(w) · xᵀ: a column-major w is wᵀ stored
        // K×N (transposed), a row-major one w stored N×K with leading dimension N.
        let (op_w, ld_w) = w_op::<L>(ld, n);
        let ty = blas_type(T::DTYPE);
        let (alpha, beta) = (1f32, 0f32);
        let (pw, px, po) = (self.ptr(&w.buf)?, self.ptr(&x.buf)?, self.ptr(&out.buf)?);
        // SAFETY: the pointers are live allocations of the checked sizes on the handle's
        // device, and the call is queued on the stream every other use of them is on.
        unsafe {
            blas::gemm_ex(
                self.handle,
                op_w,
                bsys::cublasOperation_t::CUBLAS_OP_N,
                n as i32,
                m as i32,
                k as i32,
                &alpha as *const f32 as *const c_void,
                pw as *const c_void,
                ty,
                ld_w as i32,
                px as *const c_void,
                ty,
                ld as i32,
                &beta as *const f32 as *const c_void,
                po as *mut c_void,
                ty,
                n as i32,
                blas_compute(T::DTYPE, compute),
                bsys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(|e| blas_err(format!("cublasGemmEx {m}x{n}x{k} {}", T::DTYPE.name()), e))
    }

    /// `batch` products `out_b = x_b · w_b` with `cublasGemmStridedBatchedEx`, the b-th
    /// operands `b·M·K`, `b·K·N` and `b·M·N` elements into `x` (`batch·M × K`, row-major),
    /// `w` (`K × batch·N`, column-major) and `out` (`batch·M × N`): matrices stored back to
    /// back, as `crossgemm bench --batch` passes them to ours.
    pub fn gemm_batched<T: Element>(
        &self,
        x: &Matrix<T>,
        w: &Matrix<T, ColMajor>,
        out: &mut Matrix<T>,
        batch: usize,
        compute: Compute,
    ) -> Result<()> {
        let (m, n, k) = self.check_batched(x, w, out, batch)?;
        let ty = blas_type(T::DTYPE);
        let (alpha, beta) = (1f32, 0f32);
        let (pw, px, po) = (self.ptr(&w.buf)?, self.ptr(&x.buf)?, self.ptr(&out.buf)?);
        // SAFETY: as `gemm`: live allocations holding every product, on the handle's
        // device and stream.
        unsafe {
            blas::gemm_strided_batched_ex(
                self.handle,
                bsys::cublasOperation_t::CUBLAS_OP_T,
                bsys::cublasOperation_t::CUBLAS_OP_N,
                n as i32,
                m as i32,
                k as i32,
                &alpha as *const f32 as *const c_void,
                pw as *const c_void,
                ty,
                k as i32,
                (k * n) as i64,
                px as *const c_void,
                ty,
                k as i32,
                (m * k) as i64,
                &beta as *const f32 as *const c_void,
                po as *mut c_void,
                ty,
                n as i32,
                (m * n) as i64,
                batch as i32,
                blas_compute(T::DTYPE, compute),
                bsys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(|e| {
            blas_err(
                format!("cublasGemmStridedBatchedEx {batch}x({m}x{n}x{k}) {}", T::DTYPE.name()),
                e,
            )
        })
    }

    /// One product's `(m, n, k)` of a batch stored as [`Cublas::gemm_batched`] takes it.
    fn check_batched<T: Element, L: LayoutType>(
        &self,
        x: &Matrix<T>,
        w: &Matrix<T, L>,
        out: &Matrix<T>,
        batch: usize,
    ) -> Result<(usize, usize, usize)> {
        if L::LAYOUT != Layout::ColMajor {
            return Err(GemmError::Unsupported("cuBLAS batched: a column-major w only".into()));
        }
        let (bm, k, bn) = (x.rows(), x.cols(), w.cols());
        if batch == 0 || bm % batch != 0 || bn % batch != 0 || batch > i32::MAX as usize {
            return Err(GemmError::Unsupported(format!(
                "a batch of {batch} does not divide x's {bm} rows and w's {bn} columns"
            )));
        }
        let (m, n) = (bm / batch, bn / batch);
        // One product's shapes through the plain check, on a view of the same sizes.
        if w.rows() != k || out.rows() != bm || out.cols() != n {
            return Err(GemmError::Shape {
                kernel: "cuBLAS baseline".into(),
                detail: format!("{batch} of x {m}x{k} · w {k}x{n} -> out {}x{}", out.rows(), out.cols()),
            });
        }
        if [x.device(), w.device(), out.device()]
            .iter()
            .any(|d| *d != &self.device)
            || m.max(n).max(k) > i32::MAX as usize
        {
            return Err(GemmError::Unsupported(format!(
                "cuBLAS batched: operands on {} and 32-bit sizes needed",
                self.device.info().id
            )));
        }
        Ok((m, n, k))
    }

    /// Describes one cuBLASLt matmul (layouts, epilogue) and asks cuBLASLt's heuristic
    /// for its best algorithm once, as a library user with a fixed shape would. `ld` is
    /// the operands' leading dimension (`k` for packed ones; more for the strided
    /// layouts of [`Cublas::gemm_strided`], a plain matmul only).
    #[allow(clippy::too_many_arguments)]
    pub fn lt_plan<T: Element>(
        &self,
        m: usize,
        n: usize,
        k: usize,
        ld: usize,
        batch: usize,
        epilogue: Epilogue,
        compute: Compute,
        w_layout: Layout,
    ) -> Result<LtPlan> {
        if ld < k || (ld != k && (batch > 1 || w_layout == Layout::RowMajor)) {
            return Err(GemmError::Unsupported(format!(
                "a cuBLASLt plan with K = {k}, leading dimension {ld} and a batch of {batch}"
            )));
        }
        let ty = lt_type(T::DTYPE);
        let err = |op: &str, e| blas_err(format!("{op} ({m}x{n}x{k} {}, {epilogue:?})", T::DTYPE.name()), e);
        let mut plan = LtPlan {
            desc: std::ptr::null_mut(),
            layouts: Vec::new(),
            algo: None,
            mnk: (m, n, k),
            ld,
            batch: batch.max(1),
            dtype: T::DTYPE,
            epilogue,
            w_layout,
        };
        plan.desc = lt::create_matmul_desc(lt_compute(T::DTYPE, compute), ltsys::cudaDataType_t::CUDA_R_32F)
            .map_err(|e| err("cublasLtMatmulDescCreate", e))?;
        let trans_a = i32::from(w_layout == Layout::ColMajor);
        let epi = match epilogue {
            Epilogue::None => ltsys::cublasLtEpilogue_t::CUBLASLT_EPILOGUE_DEFAULT,
            Epilogue::BiasRelu => ltsys::cublasLtEpilogue_t::CUBLASLT_EPILOGUE_RELU_BIAS,
            Epilogue::BiasGelu => ltsys::cublasLtEpilogue_t::CUBLASLT_EPILOGUE_GELU_BIAS,
        };
        // SAFETY: a live descriptor; each value has the size and type the attribute takes.
        unsafe {
            lt::set_matmul_desc_attribute(
                plan.desc,
                ltsys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSA,
                &trans_a as *const i32 as *const c_void,
                std::mem::size_of::<i32>(),
            )
            .map_err(|e| err("CUBLASLT_MATMUL_DESC_TRANSA", e))?;
            lt::set_matmul_desc_attribute(
                plan.desc,
                ltsys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_EPILOGUE,
                &epi as *const ltsys::cublasLtEpilogue_t as *const c_void,
                std::mem::size_of::<ltsys::cublasLtEpilogue_t>(),
            )
            .map_err(|e| err("CUBLASLT_MATMUL_DESC_EPILOGUE", e))?;
        }
        // A = w stored K×N (read transposed; row-major: stored N×K), B = x stored K×M,
        // C = D = outᵀ N×M. A batch: each layout `batch` matrices back to back; the bias
        // is one for all (CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE keeps its default, 0).
        let a = if w_layout == Layout::ColMajor {
            (k, n, ld)
        } else {
            (n, k, n)
        };
        for (rows, cols, ld) in [a, (k, m, ld), (n, m, n)] {
            let l = lt::create_matrix_layout(ty, rows as u64, cols as u64, ld as i64)
                .map_err(|e| err("cublasLtMatrixLayoutCreate", e))?;
            plan.layouts.push(l);
            if plan.batch > 1 {
                let (count, stride) = (plan.batch as i32, (rows * cols) as i64);
                // SAFETY: a live layout; the attributes take an int32 and an int64.
                unsafe {
                    lt::set_matrix_layout_attribute(
                        l,
                        ltsys::cublasLtMatrixLayoutAttribute_t::CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                        &count as *const i32 as *const c_void,
                        std::mem::size_of::<i32>(),
                    )
                    .and_then(|_| {
                        lt::set_matrix_layout_attribute(
                            l,
                            ltsys::cublasLtMatrixLayoutAttribute_t::CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                            &stride as *const i64 as *const c_void,
                            std::mem::size_of::<i64>(),
                        )
                    })
                }
                .map_err(|e| err("CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT / STRIDED_BATCH_OFFSET", e))?;
            }
        }
        let pref = lt::create_matmul_pref().map_err(|e| err("cublasLtMatmulPreferenceCreate", e))?;
        let ws = LT_WORKSPACE;
        // SAFETY: live descriptors and layouts created above; `pref` is destroyed below.
        let found = unsafe {
            lt::set_matmul_pref_attribute(
                pref,
                ltsys::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                &ws as *const usize as *const c_void,
                std::mem::size_of::<usize>(),
            )
            .and_then(|_| {
                lt::get_matmul_algo_heuristic(
                    self.lt,
                    plan.desc,
                    plan.layouts[0],
                    plan.layouts[1],
                    plan.layouts[2],
                    plan.layouts[2],
                    pref,
                )
            })
        };
        // SAFETY: created above, used by nothing after this.
        unsafe { lt::destroy_matmul_pref(pref) }.map_err(|e| err("cublasLtMatmulPreferenceDestroy", e))?;
        plan.algo = Some(found.map_err(|e| err("cublasLtMatmulAlgoGetHeuristic", e))?.algo);
        Ok(plan)
    }

    /// `out = epilogue(x · w + bias)` with `cublasLtMatmul` and `plan`'s algorithm; for a
    /// plan of a batch, every product, stored as [`Cublas::gemm_batched`] takes them.
    pub fn lt_matmul<T: Element, L: LayoutType>(
        &self,
        plan: &LtPlan,
        x: &Matrix<T>,
        w: &Matrix<T, L>,
        bias: Option<&Row<T>>,
        out: &mut Matrix<T>,
    ) -> Result<()> {
        if L::LAYOUT != plan.w_layout {
            return Err(GemmError::Unsupported(format!(
                "cuBLASLt plan for a {} w used with a {} one",
                plan.w_layout.name(),
                L::LAYOUT.name()
            )));
        }
        let mnk = if plan.batch > 1 {
            self.check_batched(x, w, out, plan.batch)?
        } else {
            self.check_ld(x, w, plan.mnk.2, out)?
        };
        if mnk != plan.mnk || (plan.batch == 1 && x.cols() != plan.ld) || T::DTYPE != plan.dtype {
            return Err(GemmError::Unsupported(format!(
                "cuBLASLt plan for {:?} {} used for {mnk:?} {}",
                plan.mnk,
                plan.dtype.name(),
                T::DTYPE.name()
            )));
        }
        let err = |op: &str, e| blas_err(format!("{op} ({mnk:?} {})", T::DTYPE.name()), e);
        match (plan.epilogue, bias) {
            (Epilogue::None, None) => {}
            (Epilogue::None, Some(_)) => {
                return Err(GemmError::Unsupported(
                    "a bias passed to a cuBLASLt plan without epilogue".into(),
                ))
            }
            (_, None) => return Err(GemmError::Unsupported("the cuBLASLt bias epilogue needs a bias".into())),
            (_, Some(b)) => {
                if b.len() != mnk.1 {
                    return Err(GemmError::Shape {
                        kernel: "cuBLASLt baseline".into(),
                        detail: format!("bias of {} for N = {}", b.len(), mnk.1),
                    });
                }
                let p = self.ptr(&b.buf)?;
                // SAFETY: a live descriptor; the attribute takes a device pointer.
                unsafe {
                    lt::set_matmul_desc_attribute(
                        plan.desc,
                        ltsys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                        &p as *const u64 as *const c_void,
                        std::mem::size_of::<u64>(),
                    )
                }
                .map_err(|e| err("CUBLASLT_MATMUL_DESC_BIAS_POINTER", e))?;
            }
        }
        let (alpha, beta) = (1f32, 0f32);
        let (pw, px, po, pws) = (
            self.ptr(&w.buf)?,
            self.ptr(&x.buf)?,
            self.ptr(&out.buf)?,
            self.ptr(&self.workspace)?,
        );
        let algo = plan.algo.as_ref().expect("a plan always has an algorithm");
        // SAFETY: live handle, descriptor, layouts and buffers of the checked sizes, all on
        // the stream the call is queued on.
        unsafe {
            lt::matmul(
                self.lt,
                plan.desc,
                &alpha as *const f32 as *const c_void,
                &beta as *const f32 as *const c_void,
                pw as *const c_void,
                plan.layouts[0],
                px as *const c_void,
                plan.layouts[1],
                po as *const c_void,
                plan.layouts[2],
                po as *mut c_void,
                plan.layouts[2],
                algo,
                pws as *mut c_void,
                LT_WORKSPACE,
                self.stream.cu_stream() as _,
            )
        }
        .map_err(|e| err("cublasLtMatmul", e))
    }

    /// `out = act(out + bias)` in place, one extra pass over `out`: the epilogue of an
    /// unfused cuBLAS GEMM. Vectorised 16-byte loads and stores where `N` allows, so the
    /// pass runs near copy bandwidth and the unfused baseline is not handicapped.
    pub fn bias_act<T: Element>(&self, out: &mut Matrix<T>, bias: &Row<T>, epilogue: Epilogue) -> Result<()> {
        let act = match epilogue {
            Epilogue::None => return Ok(()),
            Epilogue::BiasRelu => 1,
            Epilogue::BiasGelu => 2,
        };
        let (m, n) = (out.rows(), out.cols());
        if bias.len() != n {
            return Err(GemmError::Shape {
                kernel: "bias+activation".into(),
                detail: format!("bias of {} for N = {n}", bias.len()),
            });
        }
        let total = m * n;
        if total == 0 {
            return Ok(());
        }
        if total > i32::MAX as usize {
            return Err(GemmError::Unsupported(format!(
                "{m}x{n} exceeds the epilogue kernel's 32-bit index"
            )));
        }
        let dt = match T::DTYPE {
            DType::F32 => 0,
            DType::F16 => 1,
            DType::Bf16 => 2,
        };
        let defines = [("CG_DT".to_string(), dt), ("CG_ACT".to_string(), act)];
        let kernel = self
            .device
            .kernel(BIAS_ACT, "cg_bias_act", &defines, &Default::default())?;
        let vec = 16 / T::DTYPE.size() as usize;
        let threads = total.div_ceil(vec);
        let dims = LaunchDims {
            grid: [threads.div_ceil(256) as u32, 1, 1],
            block: [256, 1, 1],
            smem_bytes: 0,
            persistent: None,
        };
        self.device.backend().launch(
            &*kernel,
            dims,
            &[
                KernelArg::Int(total as i32),
                KernelArg::Int(n as i32),
                KernelArg::Buffer(&out.buf),
                KernelArg::Buffer(&bias.buf),
            ],
        )
    }
}

impl Drop for Cublas {
    fn drop(&mut self) {
        // Errors cannot be reported from a destructor; the handles are gone either way.
        // SAFETY: handles created in `new`, used by nothing after this.
        unsafe {
            let _ = blas::destroy_handle(self.handle);
            if !self.lt.is_null() {
                let _ = lt::destroy_handle(self.lt);
            }
        }
    }
}

/// cuBLAS's operation on `w` and its leading dimension for `outᵀ = op(w) · xᵀ`
/// (column-major terms): a column-major `w` (stored rows of `ld`) transposed, a row-major
/// one (rows of `n`) as it is.
fn w_op<L: LayoutType>(ld: usize, n: usize) -> (bsys::cublasOperation_t, usize) {
    match L::LAYOUT {
        Layout::ColMajor => (bsys::cublasOperation_t::CUBLAS_OP_T, ld),
        Layout::RowMajor => (bsys::cublasOperation_t::CUBLAS_OP_N, n),
    }
}

/// One described cuBLASLt matmul with its chosen algorithm ([`Cublas::lt_plan`]).
pub struct LtPlan {
    desc: ltsys::cublasLtMatmulDesc_t,
    layouts: Vec<ltsys::cublasLtMatrixLayout_t>,
    algo: Option<ltsys::cublasLtMatmulAlgo_t>,
    mnk: (usize, usize, usize),
    /// The operands' leading dimension (K for packed ones).
    ld: usize,
    /// Products per call (1: a plain matmul).
    batch: usize,
    dtype: DType,
    epilogue: Epilogue,
    /// How `w` is stored.
    w_layout: Layout,
}

impl Drop for LtPlan {
    fn drop(&mut self) {
        // SAFETY: created in `lt_plan`, used by nothing after this.
        unsafe {
            for l in self.layouts.drain(..) {
                let _ = lt::destroy_matrix_layout(l);
            }
            if !self.desc.is_null() {
                let _ = lt::destroy_matmul_desc(self.desc);
            }
        }
    }
}

fn blas_type(d: DType) -> bsys::cudaDataType {
    match d {
        DType::F32 => bsys::cudaDataType_t::CUDA_R_32F,
        DType::F16 => bsys::cudaDataType_t::CUDA_R_16F,
        DType::Bf16 => bsys::cudaDataType_t::CUDA_R_16BF,
    }
}

fn lt_type(d: DType) -> ltsys::cudaDataType {
    match d {
        DType::F32 => ltsys::cudaDataType_t::CUDA_R_32F,
        DType::F16 => ltsys::cudaDataType_t::CUDA_R_16F,
        DType::Bf16 => ltsys::cudaDataType_t::CUDA_R_16BF,
    }
}

fn blas_compute(d: DType, c: Compute) -> bsys::cublasComputeType_t {
    match (d, c) {
        (DType::F32, Compute::Tf32) => bsys::cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32,
        _ => bsys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
    }
}

fn lt_compute(d: DType, c: Compute) -> ltsys::cublasComputeType_t {
    match (d, c) {
        (DType::F32, Compute::Tf32) => ltsys::cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32,
        _ => ltsys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
    }
}

/// The unfused epilogue: `CG_DT` 0 = f32, 1 = f16, 2 = bf16; `CG_ACT` 1 = ReLU, 2 = GELU
/// (tanh form). Each thread owns one 16-byte vector of the row-major output.
const BIAS_ACT: &str = r#"
#if CG_DT == 0
typedef float cg_t;
static __device__ __forceinline__ float cg_ld(cg_t x) { return x; }
static __device__ __forceinline__ cg_t cg_st(float v) { return v; }
#else
typedef unsigned short cg_t;
#if CG_DT == 1
static __device__ __forceinline__ float cg_ld(cg_t x) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x)); return f; }
static __device__ __forceinline__ cg_t cg_st(float v) { cg_t x; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(x) : "f"(v)); return x; }
#else
static __device__ __forceinline__ float cg_ld(cg_t x) { return __uint_as_float(((unsigned)x) << 16); }
static __device__ __forceinline__ cg_t cg_st(float v) { cg_t x; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(x) : "f"(v)); return x; }
#endif
#endif
#define CG_VEC (16 / (int)sizeof(cg_t))
struct alignas(16) cg_vec { cg_t v[CG_VEC]; };

static __device__ __forceinline__ float cg_act(float v) {
#if CG_ACT == 1
    return fmaxf(v, 0.0f);
#else
    return 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
#endif
}

extern "C" __global__ void cg_bias_act(int total, int N, cg_t* out, const cg_t* __restrict__ bias) {
    const int base = (blockIdx.x * blockDim.x + threadIdx.x) * CG_VEC;
    if (base >= total) return;
    if (N % CG_VEC == 0) {
        /* The vector lies in one row, and the row starts 16-byte aligned. */
        cg_vec o = *reinterpret_cast<const cg_vec*>(out + base);
        const int j = base % N;
#pragma unroll
        for (int e = 0; e < CG_VEC; ++e) o.v[e] = cg_st(cg_act(cg_ld(o.v[e]) + cg_ld(bias[j + e])));
        *reinterpret_cast<cg_vec*>(out + base) = o;
    } else {
        for (int e = 0; e < CG_VEC && base + e < total; ++e) {
            const int i = base + e;
            out[i] = cg_st(cg_act(cg_ld(out[i]) + cg_ld(bias[i % N])));
        }
    }
}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_panics_without_a_gpu() {
        // On a machine without CUDA this must be a clean `false`, not a dlopen panic.
        let _ = available();
        let host = Device::host();
        assert!(matches!(Cublas::new(&host), Err(GemmError::Unsupported(_))));
    }

    #[cfg(feature = "cuda")]
    #[test]
    fn bias_act_source_compiles() {
        if !crate::nvrtc_available() {
            crate::device::test_switches::skip(
                "bench::baseline::bias_act_source_compiles",
                "the NVRTC compile of the bias+activation kernel",
                "libnvrtc.so.13 was not found (is its folder on LD_LIBRARY_PATH?)",
                "CROSSGEMM_REQUIRE_NVRTC",
            );
            return;
        }
        for dt in 0..3 {
            for act in 1..3 {
                let defines = [("CG_DT".to_string(), dt), ("CG_ACT".to_string(), act)];
                crate::device::cuda::nvrtc_compile_check(BIAS_ACT, "cg_bias_act", 90.into(), &defines)
                    .unwrap_or_else(|e| panic!("CG_DT={dt} CG_ACT={act}: {e}"));
            }
        }
    }
}
