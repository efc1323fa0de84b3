//! The benchmark report: the shape table it runs (`bench/shapes.toml`), the rows it
//! measures, and what it writes (JSON, a markdown table, an SVG chart of speed-ups).
//! Pure data and formatting: measuring is `cli::bench`'s job.
//!
//! - this file: the data model ([`Report`], [`Row`], [`LaunchOverhead`]), a row's
//!   identity ([`RowKey`]), its labels, the per-dtype error limits ([`error_limit`],
//!   [`Row::judge`]: a side over its limit is marked wrong and its speed-ups dropped)
//!   and the fields derived from its times ([`Row::finish`]);
//! - `shapes`: `bench/shapes.toml` and the command-line filter, turned into the list of
//!   [`Case`]s to measure;
//! - `json`: writing and reading the report JSON, and combining the reports of a run
//!   split over several processes;
//! - `markdown`: the report as markdown (header, one table per dtype, a summary);
//! - `chart`: the SVG bar chart of speed-ups;
//! - `merge`: folding the Triton times written by `bench/torch_baseline.py` into a report.

mod bandwidth;
mod chart;
mod files;
mod json;
mod markdown;
mod merge;
mod shapes;
#[cfg(test)]
mod testing;

// The API the commands use, flat: `report::ShapeTable`, `report::write_svg`, ...
pub use chart::write_svg;
pub use files::{output_path, write_files};
pub use json::utc_date;
pub use merge::fold_triton;
pub use shapes::{Case, Filter, ShapeTable, DTYPES};

use serde::{Deserialize, Serialize};
use std::fmt;

/// Format tag of the report JSON, so that a reader can refuse a file it does not know.
pub const REPORT_FORMAT: &str = "crossgemm-bench";
/// Version of [`REPORT_FORMAT`].
pub const REPORT_VERSION: u32 = 1;

/// One benchmark run: what ran where, and one [`Row`] per (shape, dtype, epilogue).
///
/// `Report::default()` (and [`Report::new`]) fill `format` and `version`; everything
/// else starts empty.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// The revision that was built: `bench --commit`, CROSSGEMM_COMMIT, the COMMIT file
    /// beside the executable, the working directory's `git rev-parse --short HEAD`, or
    /// "unknown".
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
    /// Rows of the output (and of `x`).
    pub m: usize,
    /// Columns of the output (and of `w`).
    pub n: usize,
    /// The reduction dimension.
    pub k: usize,
    /// Products of this shape in one call (`bench --batch`; cuBLAS runs
    /// `cublasGemmStridedBatchedEx`); 1, the default, for a plain GEMM (0, a
    /// `Row::default()`'s, reads as 1).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub batch: usize,
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
    /// Largest |ours - ref| / max(|ref|, mean |ref|): over the whole output against
    /// cuBLAS's (for epilogue rows, cuBLAS's GEMM followed by the separate epilogue
    /// kernel) when cuBLAS ran, else at sampled points against the host reference.
    pub max_rel_err: Option<f64>,
    /// What `max_rel_err` (and `cublaslt_max_rel_err`) compared against: "cublas" (its
    /// whole output), or "reference" (the host reference at sampled points: no cuBLAS
    /// ran, or cuBLAS itself was over the limit).
    pub err_vs: String,
    /// cuBLAS's own output (the GEMM, plus the separate epilogue kernel for epilogue
    /// rows) against the host reference at sampled points, same measure as
    /// `max_rel_err`: whether cuBLAS could serve as the reference.
    #[serde(default)]
    pub cublas_max_rel_err: Option<f64>,
    /// cuBLASLt's output against what `err_vs` names, same measure as `max_rel_err`.
    #[serde(default)]
    pub cublaslt_max_rel_err: Option<f64>,
    /// Triton's error as `bench/torch_baseline.py` measured it (max |Triton - f64
    /// reference| / max |reference|), merged with `triton_us`.
    #[serde(default)]
    pub triton_max_rel_err: Option<f64>,
    /// `bench --pad`: ours on the packed operands (tuned for them), timed in the
    /// same rounds as ours on the views (`ours_us`), so that their ratio does not carry
    /// the clock's drift between two processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packed_us: Option<f64>,
    /// The config `packed_us` ran.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub packed_config: String,
    /// The packed run's output, same measure as `max_rel_err`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packed_max_rel_err: Option<f64>,
    /// The dtype's error limit ([`error_limit`]) the errors were held to.
    #[serde(default)]
    pub err_limit: Option<f64>,
    /// Whether some side's output was over `err_limit` or not finite (see `wrong_sides`).
    #[serde(default)]
    pub wrong: bool,
    /// The sides over the limit: "ours", "packed", "cublas", "cublaslt", "triton". A wrong side's
    /// speed-ups are `None` (so they count in no mean and no win), its times are kept.
    /// An infinite error is written to JSON as null: this list is what records it.
    #[serde(default)]
    pub wrong_sides: Vec<String>,
    /// The config that ran (the tuner's winner), as text.
    pub config: String,
    /// Time the autotuner took for this shape in this run, ms (0 on a cache hit).
    pub tune_ms: f64,
    /// Whether the winner came from the tuning cache.
    pub tune_cache_hit: bool,
    /// `bench --first-call`: the wall time of the case's first plain launch under
    /// `CROSSGEMM_TUNE=cached` (config lookup, the winner's check at its build variant,
    /// the JIT compile of that one config, the run), ms.
    #[serde(default)]
    pub first_call_ms: Option<f64>,
    /// Where the config came from: "tuned", "cache", "table", "table_nearest",
    /// "nearest" or "default" (empty in reports older than the field).
    #[serde(default)]
    pub config_source: String,
    /// `bench --first-call`: how that launch got its kernel: "prebuilt" (a CUBIN the
    /// macro built, feature `aot`), "binary cache", "compiled" (NVRTC or the OpenCL
    /// driver ran) or "in process" (compiled earlier in this run).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub first_call_kernel: String,
    /// Why a column is missing or a failure, in words; empty when all went well.
    pub note: String,
}

impl Default for Report {
    fn default() -> Report {
        Report {
            format: REPORT_FORMAT.to_string(),
            version: REPORT_VERSION,
            device: String::new(),
            device_id: String::new(),
            driver: String::new(),
            commit: String::new(),
            date: String::new(),
            copy_gbps: None,
            cublas_version: None,
            notes: Vec::new(),
            launch_overhead: None,
            rows: Vec::new(),
        }
    }
}

impl Report {
    /// An empty report of this build's format for `device` (`device_id`), `driver`,
    /// `commit` and `date` (see [`utc_date`]).
    pub fn new(
        device: impl Into<String>,
        device_id: impl Into<String>,
        driver: impl Into<String>,
        commit: impl Into<String>,
        date: impl Into<String>,
    ) -> Report {
        Report {
            device: device.into(),
            device_id: device_id.into(),
            driver: driver.into(),
            commit: commit.into(),
            date: date.into(),
            ..Report::default()
        }
    }

    /// Recomputes every row's derived fields ([`Row::finish`]).
    #[cfg(test)]
    pub fn finish_rows(&mut self) {
        self.rows.iter_mut().for_each(Row::finish);
    }

    /// The row measuring `key`, if any.
    #[cfg(test)]
    pub fn row(&self, key: &RowKey) -> Option<&Row> {
        self.rows.iter().find(|r| r.is_key(key))
    }

    /// The row measuring `key`, if any, to fill in.
    pub fn row_mut(&mut self, key: &RowKey) -> Option<&mut Row> {
        self.rows.iter_mut().find(|r| r.is_key(key))
    }

    /// Judges every row's errors against its dtype's limit ([`Row::judge`]).
    pub fn judge_rows(&mut self) {
        self.rows.iter_mut().for_each(Row::judge);
    }

    /// One line per row with a wrong side, e.g. `4096x4096x4096 f16 bias_relu: ours
    /// (error inf, limit 5.0e-3)`, in row order.
    pub fn wrong_rows(&self) -> Vec<String> {
        self.rows
            .iter()
            .filter(|r| r.wrong || !r.wrong_sides.is_empty())
            .map(|r| format!("{}: {}", r.key(), r.wrong_text()))
            .collect()
    }

    /// Adds `row`, replacing a row with the same [`RowKey`] in place (so that a re-run
    /// of a case keeps its position in the tables).
    pub fn upsert(&mut self, row: Row) {
        let key = row.key();
        match self.rows.iter_mut().find(|r| r.is_key(&key)) {
            Some(old) => *old = row,
            None => self.rows.push(row),
        }
    }
}

/// The largest `max_rel_err` (|got - ref| / max(|ref|, mean |ref|)) a side's output may
/// have for `dtype` ("f16", "bf16", "f32", "tf32", "tf32x3"); `None` for an unknown dtype.
///
/// From what the kernels achieve on the H200 over the whole shape table (264 rows, K up
/// to 11008, bench/results/nvidia-h200-2026-11-29.json), with a margin of 3-4x:
/// - f16: 1.3e-3 seen. One f16 ulp is 2^-10 = 9.8e-4 relative; ours and cuBLAS each
///   round once (half an ulp each) and cuBLAS's unfused epilogue rounds a second time,
///   so ~1.5 ulps is the expected worst case. Limit 5e-3 (~5 ulps).
/// - bf16: 1.0e-2 seen. One bf16 ulp is 2^-7 = 7.8e-3 and the same double rounding
///   applies (1.3 ulps seen). Limit 4e-2 (~5 ulps).
/// - f32: 3.1e-5 seen (128x8192x8192): summation order over K ~ 1e4 terms (grows like
///   sqrt(K) * 2^-24 * a small factor) and the f32 epilogue maths. Limit 1e-4.
/// - tf32: 2.3e-3 seen (M = 1 rows, where cuBLAS runs exact f32 while ours rounds the
///   operands to tf32: 2^-11 relative per operand, ~4.7 * 2^-11 over a whole output).
///   Limit 1e-2 (~20 * 2^-11).
/// - tf32x3: f32's limit, which is the point of it: its three tf32 products of the split
///   operands come within a few f32 rounding steps of each exact product.
///
/// A real fault (a tile left unwritten, a swapped operand, a dropped k-tile, a wrong
/// epilogue) is off by O(1) or at least several per cent, far above every limit.
pub fn error_limit(dtype: &str) -> Option<f64> {
    match dtype {
        "f16" => Some(5e-3),
        "bf16" => Some(4e-2),
        "f32" => Some(1e-4),
        "tf32" => Some(1e-2),
        "tf32x3" => Some(1e-4),
        _ => None,
    }
}

fn one() -> usize {
    1
}

fn is_one(v: &usize) -> bool {
    *v == 1
}

/// The sides a row can hold wrong, in the order they are listed.
pub const SIDES: [&str; 5] = ["ours", "packed", "cublas", "cublaslt", "triton"];

/// What a [`Row`] measures: the shape, dtype and epilogue. Two rows with the same key
/// are the same measurement (the later one wins when reports are combined or merged).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RowKey {
    /// Rows of the output.
    pub m: usize,
    /// Columns of the output.
    pub n: usize,
    /// The reduction dimension.
    pub k: usize,
    /// Products per call.
    pub batch: usize,
    /// "f16", "bf16", "f32" or "tf32".
    pub dtype: String,
    /// "none", "bias_relu" or "bias_gelu".
    pub epilogue: String,
}

/// `MxNxK`, or `Bx(MxNxK)` for a batch of B.
fn shape_text(batch: usize, m: usize, n: usize, k: usize) -> String {
    if batch > 1 {
        format!("{batch}x({m}x{n}x{k})")
    } else {
        format!("{m}x{n}x{k}")
    }
}

impl fmt::Display for RowKey {
    /// `MxNxK dtype epilogue`, e.g. `4096x4096x4096 f16 bias_relu` (`32x(512x512x128) ..`
    /// for a batch).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shape = shape_text(self.batch, self.m, self.n, self.k);
        write!(f, "{shape} {} {}", self.dtype, self.epilogue)
    }
}

/// `num / den` where both are positive finite times, else `None` (a missing or broken
/// time must not turn into an infinite or negative speed-up).
fn ratio(num: Option<f64>, den: Option<f64>) -> Option<f64> {
    let (num, den) = (positive(num)?, positive(den)?);
    Some(num / den)
}

fn positive(x: Option<f64>) -> Option<f64> {
    x.filter(|v| v.is_finite() && *v > 0.0)
}

/// The distinct `values`, those in `canonical` first in its order, then the others in
/// the order they first appear: tables and chart panels read f16, bf16, f32, tf32 and
/// none, bias_relu, bias_gelu whatever order the rows were measured in.
fn ordered<'a>(values: impl Iterator<Item = &'a str>, canonical: &[&str]) -> Vec<String> {
    let seen: Vec<&str> = values.fold(Vec::new(), |mut acc, v| {
        if !acc.contains(&v) {
            acc.push(v);
        }
        acc
    });
    let known = canonical.iter().copied().filter(|c| seen.contains(c));
    let other = seen.iter().copied().filter(|v| !canonical.contains(v));
    known.chain(other).map(str::to_string).collect()
}

impl Row {
    /// Appends `text` to the row's note (`; ` between notes).
    pub fn note_also(&mut self, text: &str) {
        if self.note.is_empty() {
            self.note = text.to_string();
        } else {
            self.note = format!("{}; {text}", self.note);
        }
    }

    /// The row's [`RowKey`].
    pub fn key(&self) -> RowKey {
        RowKey {
            m: self.m,
            n: self.n,
            k: self.k,
            batch: self.batch.max(1),
            dtype: self.dtype.clone(),
            epilogue: self.epilogue.clone(),
        }
    }

    /// Whether the row measures `key` (without building a [`RowKey`]).
    pub fn is_key(&self, key: &RowKey) -> bool {
        self.m == key.m
            && self.n == key.n
            && self.k == key.k
            && self.batch.max(1) == key.batch.max(1)
            && self.dtype == key.dtype
            && self.epilogue == key.epilogue
    }

    /// The shape as `MxNxK`, `Bx(MxNxK)` for a batch (ASCII, for tables and file names).
    pub fn shape_text(&self) -> String {
        shape_text(self.batch, self.m, self.n, self.k)
    }

    /// The shape for a chart: `4096³` for a cube, else `16×4096×4096`; `32×(512×512×128)`
    /// for a batch.
    pub fn shape_label(&self) -> String {
        let one = if self.m == self.n && self.n == self.k {
            format!("{}³", self.m)
        } else {
            format!("{}×{}×{}", self.m, self.n, self.k)
        };
        if self.batch > 1 {
            format!("{}×({one})", self.batch)
        } else {
            one
        }
    }

    /// Shape, dtype and epilogue, e.g. `4096³ f16 bias_relu`.
    #[cfg(test)]
    pub fn label(&self) -> String {
        format!("{} {} {}", self.shape_label(), self.dtype, self.epilogue)
    }

    /// 2·M·N·K (times the batch), the flops of the GEMM (the epilogue is not counted).
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64 * self.batch.max(1) as f64
    }

    /// Holds each side's error to the dtype's [`error_limit`]: a side whose error is over
    /// it, or not finite (NaN, an infinite error), is added to `wrong_sides`; sides
    /// already there stay (an infinite error reads back from JSON as null), so judging a
    /// report again never clears a mark. Sets `err_limit` and `wrong`, then
    /// [`Row::finish`]. A row of an unknown dtype has no limit: nothing is marked.
    pub fn judge(&mut self) {
        self.err_limit = error_limit(&self.dtype);
        if let Some(limit) = self.err_limit {
            let errors = [
                ("ours", self.max_rel_err),
                ("packed", self.packed_max_rel_err),
                ("cublas", self.cublas_max_rel_err),
                ("cublaslt", self.cublaslt_max_rel_err),
                ("triton", self.triton_max_rel_err),
            ];
            for (side, e) in errors {
                // NaN is over every limit.
                let over = e.is_some_and(|e| e.is_nan() || e > limit);
                if over && !self.is_wrong(side) {
                    self.wrong_sides.push(side.to_string());
                }
            }
            // One order whatever order the marks came in.
            self.wrong_sides
                .sort_by_key(|s| SIDES.iter().position(|k| k == s).unwrap_or(SIDES.len()));
        }
        self.wrong = !self.wrong_sides.is_empty();
        self.finish();
    }

    /// The error `side` was judged on, if measured.
    pub fn side_error(&self, side: &str) -> Option<f64> {
        match side {
            "ours" => self.max_rel_err,
            "packed" => self.packed_max_rel_err,
            "cublas" => self.cublas_max_rel_err,
            "cublaslt" => self.cublaslt_max_rel_err,
            "triton" => self.triton_max_rel_err,
            _ => None,
        }
    }

    /// The wrong sides with their errors and the limit, e.g. `ours (error 5.2e-2, limit
    /// 5.0e-3), cublaslt (error inf, limit 5.0e-3)`; an error that reads back from JSON
    /// as null (it was not finite) shows as `inf`.
    pub fn wrong_text(&self) -> String {
        let e = |v: Option<f64>| match v {
            Some(v) if v.is_finite() => format!("{v:.1e}"),
            Some(v) if v.is_nan() => "NaN".to_string(),
            _ => "inf".to_string(),
        };
        let limit = self.err_limit.map_or("none".to_string(), |l| format!("{l:.1e}"));
        self.wrong_sides
            .iter()
            .map(|s| format!("{s} (error {}, limit {limit})", e(self.side_error(s))))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether `side` ("ours", "packed", "cublas", "cublaslt", "triton") is marked wrong.
    pub fn is_wrong(&self, side: &str) -> bool {
        self.wrong_sides.iter().any(|s| s == side)
    }

    /// Recomputes the derived fields from the times: the three speed-ups (`other / ours`)
    /// and the TFLOP/s of ours and cuBLAS. Each is `None` when a time it needs is
    /// missing, zero, negative or not finite, and a speed-up is `None` when either of
    /// its two sides is in `wrong_sides` (a wrong output's time compares nothing).
    pub fn finish(&mut self) {
        let ok = |side: &str| !self.is_wrong("ours") && !self.is_wrong(side);
        let (cublas, cublaslt, triton) = (ok("cublas"), ok("cublaslt"), ok("triton"));
        self.speedup_vs_cublas = ratio(self.cublas_us, self.ours_us).filter(|_| cublas);
        self.speedup_vs_cublaslt = ratio(self.cublaslt_us, self.ours_us).filter(|_| cublaslt);
        self.speedup_vs_triton = ratio(self.triton_us, self.ours_us).filter(|_| triton);
        // flops / (us · 1e-6) / 1e12 = flops / us / 1e6
        let flops = self.flops();
        let tflops = |us: Option<f64>| positive(us).map(|us| flops / us / 1e6).filter(|t| *t > 0.0);
        self.ours_tflops = tflops(self.ours_us);
        self.cublas_tflops = tflops(self.cublas_us);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shapes::DTYPES;

    fn row(m: usize, n: usize, k: usize) -> Row {
        Row {
            group: "square".into(),
            m,
            n,
            k,
            dtype: "f16".into(),
            epilogue: "none".into(),
            ..Row::default()
        }
    }

    #[test]
    fn default_report_has_format_and_version() {
        let r = Report::default();
        assert_eq!(r.format, REPORT_FORMAT);
        assert_eq!(r.version, REPORT_VERSION);
        let r = Report::new("NVIDIA H200", "cuda:0", "560.35", "abc1234", "2025-01-02");
        assert_eq!((r.format.as_str(), r.version), (REPORT_FORMAT, REPORT_VERSION));
        assert_eq!(r.device_id, "cuda:0");
    }

    #[test]
    fn finish_computes_speedups_and_tflops() {
        let mut r = row(4096, 4096, 4096);
        r.ours_us = Some(200.0);
        r.cublas_us = Some(300.0);
        r.cublaslt_us = Some(100.0);
        r.finish();
        assert_eq!(r.speedup_vs_cublas, Some(1.5));
        assert_eq!(r.speedup_vs_cublaslt, Some(0.5));
        assert_eq!(r.speedup_vs_triton, None);
        let flops = 2.0 * 4096f64.powi(3);
        assert!((r.ours_tflops.unwrap() - flops / 200e-6 / 1e12).abs() < 1e-9);
        assert!((r.cublas_tflops.unwrap() - flops / 300e-6 / 1e12).abs() < 1e-9);
        r.triton_us = Some(400.0);
        r.finish();
        assert_eq!(r.speedup_vs_triton, Some(2.0));
    }

    #[test]
    fn finish_gives_none_for_missing_or_bad_times() {
        let mut r = row(16, 4096, 4096);
        r.ours_us = Some(0.0);
        r.cublas_us = Some(10.0);
        r.speedup_vs_cublas = Some(9.0); // stale, must be cleared
        r.finish();
        assert_eq!(r.speedup_vs_cublas, None);
        assert_eq!(r.ours_tflops, None);
        assert!(r.cublas_tflops.is_some());
        r.ours_us = Some(5.0);
        r.cublas_us = Some(-1.0);
        r.cublaslt_us = Some(f64::NAN);
        r.finish();
        assert_eq!(
            (r.speedup_vs_cublas, r.speedup_vs_cublaslt, r.cublas_tflops),
            (None, None, None)
        );
        r.ours_us = None;
        r.cublas_us = Some(10.0);
        r.finish();
        assert_eq!((r.speedup_vs_cublas, r.ours_tflops), (None, None));
    }

    #[test]
    fn judge_marks_sides_over_the_limit_and_drops_their_ratios() {
        let mut r = row(4096, 4096, 4096);
        r.ours_us = Some(100.0);
        r.cublas_us = Some(200.0);
        r.cublaslt_us = Some(300.0);
        r.triton_us = Some(50.0);
        r.max_rel_err = Some(1.3e-3);
        r.cublas_max_rel_err = Some(1.0e-3);
        r.cublaslt_max_rel_err = Some(4.9e-3);
        r.judge();
        assert_eq!(r.err_limit, Some(5e-3));
        assert!(!r.wrong && r.wrong_sides.is_empty(), "{:?}", r.wrong_sides);
        assert_eq!(
            (r.speedup_vs_cublas, r.speedup_vs_cublaslt, r.speedup_vs_triton),
            (Some(2.0), Some(3.0), Some(0.5))
        );
        // cuBLASLt over the limit: only its ratio goes.
        r.cublaslt_max_rel_err = Some(5.1e-3);
        r.judge();
        assert_eq!(r.wrong_sides, ["cublaslt"]);
        assert!(r.wrong);
        assert_eq!(
            (r.speedup_vs_cublas, r.speedup_vs_cublaslt, r.speedup_vs_triton),
            (Some(2.0), None, Some(0.5))
        );
        // Ours wrong: no ratio at all; times and TFLOP/s stay.
        r.max_rel_err = Some(f64::NAN);
        r.judge();
        assert_eq!(r.wrong_sides, ["ours", "cublaslt"]);
        assert_eq!(
            (r.speedup_vs_cublas, r.speedup_vs_cublaslt, r.speedup_vs_triton),
            (None, None, None)
        );
        assert!(r.ours_tflops.is_some() && r.ours_us == Some(100.0));
        // An infinite error reads back as null: the mark must survive judging again.
        let mut back: Row = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back.max_rel_err, None);
        back.judge();
        assert_eq!(back.wrong_sides, ["ours", "cublaslt"]);
        assert!(back.wrong && back.speedup_vs_cublas.is_none());
        assert_eq!(
            back.wrong_text(),
            "ours (error inf, limit 5.0e-3), cublaslt (error 5.1e-3, limit 5.0e-3)"
        );
    }

    #[test]
    fn error_limits_per_dtype() {
        // Each limit sits above what the H200 showed (f16 1.3e-3, bf16 1.0e-2, f32
        // 3.1e-5, tf32 2.3e-3) and below a fault's O(1e-2..1) error.
        for (d, seen, fault) in [
            ("f16", 1.3e-3, 2e-2),
            ("bf16", 1.0e-2, 1e-1),
            ("f32", 3.1e-5, 1e-3),
            ("tf32", 2.3e-3, 5e-2),
        ] {
            let l = error_limit(d).unwrap();
            assert!(seen * 3.0 <= l && l < fault, "{d}: limit {l}");
        }
        assert_eq!(error_limit("f64"), None);
        let mut r = Row {
            dtype: "f64".into(),
            max_rel_err: Some(1.0),
            ..Row::default()
        };
        r.judge();
        assert!(!r.wrong && r.err_limit.is_none());
    }

    #[test]
    fn old_reports_without_the_error_fields_still_read() {
        let json = r#"{"group": "square", "m": 8, "n": 8, "k": 8, "dtype": "bf16", "epilogue": "none",
            "ours_us": 1.0, "cublas_us": 2.0, "cublas_gemm_us": 2.0, "cublaslt_us": null, "triton_us": null,
            "speedup_vs_cublas": 2.0, "speedup_vs_cublaslt": null, "speedup_vs_triton": null,
            "ours_tflops": 1.0, "cublas_tflops": 0.5, "max_rel_err": 0.05, "err_vs": "cublas",
            "config": "c", "tune_ms": 0.0, "tune_cache_hit": true, "note": ""}"#;
        let mut r: Row = serde_json::from_str(json).unwrap();
        assert!(r.wrong_sides.is_empty() && !r.wrong);
        r.judge();
        assert_eq!(r.wrong_sides, ["ours"]);
        assert_eq!(r.speedup_vs_cublas, None);
    }

    #[test]
    fn labels_and_keys() {
        let r = row(4096, 4096, 4096);
        assert_eq!(r.label(), "4096³ f16 none");
        assert_eq!(r.shape_text(), "4096x4096x4096");
        let s = row(16, 4096, 4096);
        assert_eq!(s.label(), "16×4096×4096 f16 none");
        assert_eq!(s.key().to_string(), "16x4096x4096 f16 none");
        assert!(s.is_key(&s.key()) && !r.is_key(&s.key()));
    }

    #[test]
    fn ordered_puts_canonical_values_first() {
        let got = ordered(["x", "f32", "f16", "x", "f32"].into_iter(), DTYPES);
        assert_eq!(got, ["f16", "f32", "x"]);
    }

    #[test]
    fn upsert_replaces_in_place() {
        let mut rep = Report::default();
        rep.upsert(row(1, 2, 3));
        rep.upsert(row(4, 5, 6));
        let mut again = row(1, 2, 3);
        again.ours_us = Some(7.0);
        rep.upsert(again);
        assert_eq!(rep.rows.len(), 2);
        assert_eq!(rep.rows[0].ours_us, Some(7.0));
        assert_eq!(rep.row(&row(4, 5, 6).key()).map(|r| r.k), Some(6));
    }
}
