//! cuBLASLt with its fused bias epilogues (`CUBLASLT_EPILOGUE_RELU_BIAS`, `GELU_BIAS`),
//! the baseline the fused kinds are timed against: TN layout, as crossgemm bench calls it
//! (gemm-runtime/src/bench/baseline.rs), the heuristic's first algorithm, 32 MiB
//! workspace, on the default stream.

use crate::gpu::{DevBuf, Res};
use cudarc::cublaslt::{result as lt, sys as ltsys};
use std::ffi::c_void;

const WORKSPACE: usize = 32 << 20;

pub struct Lt {
    h: ltsys::cublasLtHandle_t,
    ws: DevBuf,
}

/// One described matmul: `out (m×n, row-major) = act(x (m×k, row-major) · w (k×n,
/// column-major) + bias[n])`.
pub struct Plan {
    desc: ltsys::cublasLtMatmulDesc_t,
    layouts: Vec<ltsys::cublasLtMatrixLayout_t>,
    algo: ltsys::cublasLtMatmulAlgo_t,
}

impl Lt {
    pub fn new() -> Res<Lt> {
        let h = lt::create_handle().map_err(|e| format!("cublasLtCreate: {e:?}"))?;
        Ok(Lt {
            h,
            ws: DevBuf::new(WORKSPACE)?,
        })
    }

    /// `gelu`: GELU_BIAS, else RELU_BIAS; `bias` is the device pointer of the n-vector.
    pub fn plan(&self, m: usize, n: usize, k: usize, bf16: bool, gelu: bool, bias: u64) -> Res<Plan> {
        let err = |op: &str, e: lt::CublasError| format!("{op} ({m}x{n}x{k}): {e:?}");
        let ty = if bf16 {
            ltsys::cudaDataType_t::CUDA_R_16BF
        } else {
            ltsys::cudaDataType_t::CUDA_R_16F
        };
        let desc = lt::create_matmul_desc(
            ltsys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            ltsys::cudaDataType_t::CUDA_R_32F,
        )
        .map_err(|e| err("cublasLtMatmulDescCreate", e))?;
        let trans_a: i32 = 1;
        let epi = if gelu {
            ltsys::cublasLtEpilogue_t::CUBLASLT_EPILOGUE_GELU_BIAS
        } else {
            ltsys::cublasLtEpilogue_t::CUBLASLT_EPILOGUE_RELU_BIAS
        };
        // SAFETY: a live descriptor; each value has the size and type its attribute takes.
        unsafe {
            lt::set_matmul_desc_attribute(
                desc,
                ltsys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSA,
                &trans_a as *const i32 as *const c_void,
                std::mem::size_of::<i32>(),
            )
            .map_err(|e| err("TRANSA", e))?;
            lt::set_matmul_desc_attribute(
                desc,
                ltsys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_EPILOGUE,
                &epi as *const ltsys::cublasLtEpilogue_t as *const c_void,
                std::mem::size_of::<ltsys::cublasLtEpilogue_t>(),
            )
            .map_err(|e| err("EPILOGUE", e))?;
            lt::set_matmul_desc_attribute(
                desc,
                ltsys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                &bias as *const u64 as *const c_void,
                std::mem::size_of::<u64>(),
            )
            .map_err(|e| err("BIAS_POINTER", e))?;
        }
        // A = w stored n×k row-major (k×n column-major, read transposed), B = x as k×m
        // column-major, C = D = outᵀ n×m.
        let mut layouts = Vec::new();
        for (rows, cols, ld) in [(k, n, k), (k, m, k), (n, m, n)] {
            layouts.push(
                lt::create_matrix_layout(ty, rows as u64, cols as u64, ld as i64)
                    .map_err(|e| err("cublasLtMatrixLayoutCreate", e))?,
            );
        }
        let pref = lt::create_matmul_pref().map_err(|e| err("cublasLtMatmulPreferenceCreate", e))?;
        let ws = WORKSPACE;
        // SAFETY: live descriptors and layouts; `pref` is destroyed below.
        let found = unsafe {
            lt::set_matmul_pref_attribute(
                pref,
                ltsys::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                &ws as *const usize as *const c_void,
                std::mem::size_of::<usize>(),
            )
            .and_then(|_| {
                lt::get_matmul_algo_heuristic(self.h, desc, layouts[0], layouts[1], layouts[2], layouts[2], pref)
            })
        };
        // SAFETY: created above.
        let _ = unsafe { lt::destroy_matmul_pref(pref) };
        let algo = found.map_err(|e| err("cublasLtMatmulAlgoGetHeuristic", e))?.algo;
        Ok(Plan { desc, layouts, algo })
    }

    /// Runs `plan` on row-major x (`a`), column-major w (`b`) into row-major `out`.
    pub fn run(&self, plan: &Plan, a: u64, b: u64, out: u64) -> Res<()> {
        let (alpha, beta) = (1f32, 0f32);
        // SAFETY: live handle, descriptor, layouts and buffers of the planned sizes.
        unsafe {
            lt::matmul(
                self.h,
                plan.desc,
                &alpha as *const f32 as *const c_void,
                &beta as *const f32 as *const c_void,
                b as *const c_void,
                plan.layouts[0],
                a as *const c_void,
                plan.layouts[1],
                out as *const c_void,
                plan.layouts[2],
                out as *mut c_void,
                plan.layouts[2],
                &plan.algo,
                self.ws.ptr as *mut c_void,
                WORKSPACE,
                std::ptr::null_mut(),
            )
        }
        .map_err(|e| format!("cublasLtMatmul: {e:?}"))
    }
}

impl Drop for Plan {
    fn drop(&mut self) {
        // SAFETY: created in `plan`, used by nothing after this.
        unsafe {
            for l in &self.layouts {
                let _ = lt::destroy_matrix_layout(*l);
            }
            let _ = lt::destroy_matmul_desc(self.desc);
        }
    }
}

impl Drop for Lt {
    fn drop(&mut self) {
        // SAFETY: created in `new`.
        let _ = unsafe { lt::destroy_handle(self.h) };
    }
}
