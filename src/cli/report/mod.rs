//! The benchmark report: the shape table it runs (`bench/shapes.toml`), the rows it
//! measures, and what it writes (JSON, a markdown table, an SVG chart of speed-ups).
//! Pure data and formatting: measuring is `cli::bench`'s job.

#![allow(dead_code)] // filled in by the report helpers; remove once every item is used

use serde::{Deserialize, Serialize};

/// Format tag of the report JSON, so that a reader can refuse a file it does not know.
pub const REPORT_FORMAT: &str = "crossgemm-bench";
/// Version of [`REPORT_FORMAT`].
pub const REPORT_VERSION: u32 = 1;

/// One benchmark run: what ran where, and one [`Row`] per (shape, dtype, epilogue).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Always [`REPORT_FORMAT`].
    pub format: String,
    /// Always [`REPORT_VERSION`] when written by this build.
    pub version: u32,
    /// Device name as the driver reports it (e.g. "NVIDIA H200").
    pub device: String,
    /// Device id as crossgemm names it (`cuda:0`, `opencl:0:0`).
    pub device_id: String,
    /// Driver version.
    pub driver: String,
    /// `git rev-parse --short HEAD` of the tree that was built, or "unknown".
    pub commit: String,
    /// UTC date of the run, YYYY-MM-DD.
    pub date: String,
    /// Device-to-device copy bandwidth measured in the same run, GB/s (null: not measured).
    pub copy_gbps: Option<f64>,
    /// cuBLAS version string where cuBLAS ran.
    pub cublas_version: Option<String>,
    /// How each column was measured (compute types, timing protocol), in words.
    pub notes: Vec<String>,
    /// Warm cached call of a generated kernel vs a bare driver launch of an empty kernel.
    pub launch_overhead: Option<LaunchOverhead>,
    /// One row per (shape, dtype, epilogue).
    pub rows: Vec<Row>,
}

/// Host-side cost of a cached call, µs per call, back to back.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LaunchOverhead {
    /// The shape whose warm call was timed.
    pub shape: String,
    /// A warm call of the generated wrapper (plan cached), µs.
    pub ours_us: f64,
    /// A bare driver launch of an empty kernel, µs.
    pub bare_us: f64,
}

/// One measured (shape, dtype, epilogue). Times are medians in µs; `None` (JSON null)
/// means "not run" (no cuBLAS on this device, no Triton result merged, ...).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Shape-table group ("square", "skinny", "llm", ...).
    pub group: String,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// "f16", "bf16", "f32" (exact f32 math) or "tf32" (f32 operands, tf32 tensor cores).
    pub dtype: String,
    /// "none", "bias_relu" or "bias_gelu".
    pub epilogue: String,
    /// crossgemm's tuned kernel (fused epilogue).
    pub ours_us: Option<f64>,
    /// cuBLAS doing the row's work: `cublasGemmEx` (fp32 compute) for `none` rows; for
    /// epilogue rows the same GEMM followed by a separate elementwise bias+activation
    /// kernel (cuBLAS cannot fuse; the unfused pair is what a cuBLAS user pays).
    pub cublas_us: Option<f64>,
    /// `cublasGemmEx` alone, without the epilogue (equals `cublas_us` for `none` rows).
    pub cublas_gemm_us: Option<f64>,
    /// cuBLASLt `cublasLtMatmul` with its own fused BIAS+RELU / BIAS+GELU epilogue
    /// (the default epilogue for `none` rows).
    pub cublaslt_us: Option<f64>,
    /// Triton's tuned GEMM with the same fused epilogue, merged from the Triton script.
    pub triton_us: Option<f64>,
    /// `cublas_us / ours_us` (> 1: ours is faster).
    pub speedup_vs_cublas: Option<f64>,
    /// `cublaslt_us / ours_us`.
    pub speedup_vs_cublaslt: Option<f64>,
    /// `triton_us / ours_us`.
    pub speedup_vs_triton: Option<f64>,
    /// 2·M·N·K / ours_us, TFLOP/s.
    pub ours_tflops: Option<f64>,
    /// 2·M·N·K / cublas_us, TFLOP/s.
    pub cublas_tflops: Option<f64>,
    /// Largest |ours - ref| / max(|ref|, floor) over the output, where ref is cuBLAS's
    /// (cuBLASLt's for epilogue rows) output when it ran, else the host reference.
    pub max_rel_err: Option<f64>,
    /// What `max_rel_err` compared against: "cublas", "cublaslt" or "reference".
    pub err_vs: String,
    /// The config that ran (the tuner's winner), as text.
    pub config: String,
    /// Time the autotuner took for this shape in this run, ms (0 on a cache hit).
    pub tune_ms: f64,
    /// Whether the winner came from the tuning cache.
    pub tune_cache_hit: bool,
    /// Why a column is missing or a failure, in words; empty when all went well.
    pub note: String,
}
