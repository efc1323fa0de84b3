//! Rows and reports the report modules' tests build on.

use super::{Report, Row};

/// A finished row of group "square"; `times` are ours, cuBLAS (also its plain GEMM),
/// cuBLASLt and Triton, µs.
pub(super) fn row(m: usize, n: usize, k: usize, dtype: &str, epilogue: &str, times: [Option<f64>; 4]) -> Row {
    let [ours, cublas, cublaslt, triton] = times;
    let mut r = Row {
        group: "square".into(),
        m,
        n,
        k,
        dtype: dtype.into(),
        epilogue: epilogue.into(),
        ours_us: ours,
        cublas_us: cublas,
        cublas_gemm_us: cublas,
        cublaslt_us: cublaslt,
        triton_us: triton,
        ..Row::default()
    };
    r.finish();
    r
}

/// A report on an H200 holding `rows`.
pub(super) fn report(rows: Vec<Row>) -> Report {
    Report {
        rows,
        ..Report::new("NVIDIA H200", "cuda:0", "560.35", "abc1234", "2025-01-02")
    }
}
