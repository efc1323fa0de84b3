//! Tuning records: the tuning cache as a portable, versioned JSON document, to ship
//! measured winners with a project (the repository's `records/`) or move them between
//! machines. The format lives here, beside the planner, because both ends read it: the
//! runtime exports and imports it (`crossgemm cache export` / `import`), and
//! `#[gemm_kernel]` reads records at build time into config tables ([`crate::table`]).
//!
//! A document holds one [`Record`] per cache file: kernel, target, device name and id,
//! driver, compiler (NVRTC version or OpenCL driver), the source hash that pins the
//! generated code, the kernel's IR (from which its mainloop signature and epilogue class
//! follow), the target's limits, the winner of every shape bucket with its measured time
//! (µs) and throughput (TFLOP/s at the timed shape), and the configs that failed, with
//! where and why.

use crate::family::{Problem, TileConfig};
// The rows' alignment classes live with the shape flags (the families read them too).
pub use crate::family::shape_flags::{row_align, row_class, ROW_SECTOR};
use crate::ir::GemmIr;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Written in every document; anything else is refused.
pub const FORMAT: &str = "crossgemm-tuning-records";
/// The document layout's version; other versions are refused.
pub const VERSION: u32 = 1;

/// A tuning-records document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Records {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`].
    pub version: u32,
    /// The crossgemm version that wrote it.
    pub crossgemm: String,
    /// One per (kernel, target, device, driver, source).
    pub records: Vec<Record>,
}

/// The tuning results of one kernel on one device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Kernel (fn) name.
    pub kernel: String,
    /// Target (a table of targets.toml) whose code ran.
    pub target: String,
    /// Device name as the driver reports it.
    pub device_name: String,
    /// Device id (`cuda:0`, `opencl:0:0`) on the machine that measured.
    pub device_id: String,
    /// Driver version.
    pub driver: String,
    /// Compiler: `NVRTC x.y`, or the OpenCL driver (which compiles); empty if unknown.
    #[serde(default)]
    pub compiler: String,
    /// Hash of the generated source, IR, runtime version and timing protocol.
    pub source_hash: String,
    /// The target's limits (gemm-core's `TargetSpec`), if known.
    #[serde(default)]
    pub target_spec: Option<serde_json::Value>,
    /// The kernel's IR, when the tune that measured it recorded it: what lets a record
    /// serve other kernels of the same mainloop at build time ([`crate::table`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ir: Option<GemmIr>,
    /// Shape bucket (`pow2:MxNxK` / `exact:MxNxK`) → best config.
    pub buckets: BTreeMap<String, BucketRecord>,
    /// Configs that failed, with why.
    #[serde(default)]
    pub failed: Vec<FailedRecord>,
}

/// The best config of one shape bucket, as measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BucketRecord {
    /// The winner.
    pub config: TileConfig,
    /// The shape that was timed.
    pub shape: [usize; 3],
    /// Its median device time, µs.
    pub us: f64,
    /// 2·M·N·K / time, TFLOP/s.
    pub tflops: f64,
    /// How many candidates were timed.
    pub candidates: usize,
    /// Every timed candidate's median, µs, the winner's included (absent in records of
    /// older writers): what `crossgemm cache merge` combines across machines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timings: Vec<ConfigTime>,
}

/// One candidate's measured median.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigTime {
    /// The config.
    pub config: TileConfig,
    /// Its median device time, µs, at the bucket's timed shape.
    pub us: f64,
}

/// A config that failed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FailedRecord {
    /// The config.
    pub config: TileConfig,
    /// Where it failed.
    pub stage: FailStage,
    /// Why (compiler log lines, driver error, mismatching elements).
    pub reason: String,
}

/// Why a document could not be read or written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordError(pub String);

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RecordError {}

/// Where a candidate failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailStage {
    /// The driver's compiler rejected it.
    Compile,
    /// It compiled but a launch (or reading its output back) failed.
    Launch,
    /// It ran but its output disagreed with the host reference.
    WrongResult,
    /// It ran, correctly, but its first timed run took more than `TOO_SLOW_FACTOR`
    /// times the best time so far. Kept in the report, not in the cache: at another
    /// shape the same config may be the fastest.
    TooSlow,
    /// Its launch ran out of device memory (a split-K workspace the device could not
    /// grow, even after freeing the staging scratch). Kept in the report, not in the
    /// cache: it is the device's state at the time, not the config's.
    OutOfMemory,
}

/// TFLOP/s of a GEMM of `shape` taking `ms`.
pub fn tflops(shape: [usize; 3], ms: f64) -> f64 {
    if ms > 0.0 {
        2.0 * shape.iter().map(|&d| d as f64).product::<f64>() / (ms * 1e-3) / 1e12
    } else {
        0.0
    }
}

/// (M, N, K) of a bucket key (`pow2:MxNxK`, `pow2r:MxNxK` or `exact:MxNxK`).
pub fn bucket_dims(key: &str) -> Option<[usize; 3]> {
    let dims = key.split_once(':')?.1;
    let v: Vec<usize> = dims.split('x').map(|d| d.parse().ok()).collect::<Option<_>>()?;
    <[usize; 3]>::try_from(v).ok()
}

/// Sum over M, N, K of |ln a - ln b| (dimensions below 1 read as 1).
pub fn log_distance(a: [usize; 3], b: [usize; 3]) -> f64 {
    a.iter()
        .zip(&b)
        .map(|(&x, &y)| ((x.max(1) as f64).ln() - (y.max(1) as f64).ln()).abs())
        .sum()
}

/// Tiles divide dimensions in steps of this many; a shape with a larger dimension that is
/// not a multiple of it is *ragged* (see [`shape_key`]).
pub const RAGGED_STEP: usize = 64;

/// Whether some dimension of `m × n × k` is larger than [`RAGGED_STEP`] and not a
/// multiple of it: the last tiles along it are partial.
pub fn ragged(m: usize, n: usize, k: usize) -> bool {
    [m, n, k].iter().any(|&d| d > RAGGED_STEP && d % RAGGED_STEP != 0)
}

/// The bucket a shape's winner is stored under: M and K rounded up to a power of two, N
/// to a power of two up to [`N_FINE_FROM`] and past it to an eighth of its octave
/// ([`round_n`]) (`pow2:`, or `pow2r:` for a [`ragged`] shape), or the exact shape when
/// `exact`.
///
/// Ragged shapes have buckets of their own because their best tiles differ: on the H200
/// 1000³ ran 19 % slower with 1024³'s winner than with its own (partial edge tiles, and
/// K not a multiple of the k-tile). Dimensions of at most 64 never split a bucket: every
/// tile pads them alike.
///
/// N is finer because it decides how the output tiles fill the machine's waves and,
/// in a linear layer, it is the weight's width: fixed per layer, so finer buckets cost
/// a model few extra tunes, where M (the tokens of a call) varies from call to call. On
/// the H200 2048x11008x4096 and 2048x12288x4096 shared a bucket and want different tiles
/// (128x128 at 0.96x cuBLAS and 128x256 at 0.99x; each other's winner 0.93-0.94x,
/// bench/results/h200-2026-12-02zh).
pub fn shape_key(m: usize, n: usize, k: usize, exact: bool) -> String {
    if exact {
        format!("exact:{m}x{n}x{k}")
    } else {
        let p = |v: usize| v.max(1).next_power_of_two();
        let class = if ragged(m, n, k) { "pow2r" } else { "pow2" };
        format!("{class}:{}x{}x{}", p(m), round_n(n), p(k))
    }
}

/// N from which [`shape_key`] rounds to eighths of an octave rather than to a power of two.
pub const N_FINE_FROM: usize = 2048;

/// `n` rounded up as [`shape_key`] rounds N: to a power of two up to [`N_FINE_FROM`],
/// past it to a multiple of an eighth of the power of two below it (11008 → 11264,
/// 12288 → 12288, 4096 → 4096). Every such bucket lies inside the power-of-two bucket of
/// earlier versions.
pub fn round_n(n: usize) -> usize {
    let n = n.max(1);
    if n <= N_FINE_FROM {
        return n.next_power_of_two();
    }
    let step = (1usize << n.ilog2()) / 8;
    n.div_ceil(step) * step
}

/// `bucket`, a key of a record of `ir` measured at `shape`, as [`problem_key`] would write
/// it now: records written before a change of the bucket rule (N's eighths, the rows'
/// alignment) land in the bucket a launch of their shape looks up. A key without a
/// [`row_align`] mark was measured on the packed shape as a launch runs it (a launch on
/// other rows has a mark, [`align_mark`]), so an unmarked key of a shape whose packed rows
/// are mid-sector (K = 1000 of f16) gets that mark. Exact keys keep their dimensions;
/// keys that are not buckets are returned as they are.
pub fn rekey(bucket: &str, shape: [usize; 3], ir: Option<&GemmIr>) -> String {
    let (Some((class, _)), Some(key_dims)) = (bucket.split_once(':'), bucket_dims(bucket)) else {
        return bucket.to_string();
    };
    let batch = bucket_batch(bucket).unwrap_or(1);
    let exact = class.starts_with("exact");
    if !exact && !class.starts_with("pow2") {
        return bucket.to_string();
    }
    // An unmarked key was measured as the default launch runs the packed shape (rows that
    // are not 16-byte multiples staged into aligned scratch first).
    let align = key_align(bucket).or_else(|| {
        let ir = ir?;
        let p = Problem::new(shape[0], shape[1], shape[2]).batched(batch);
        align_mark(ir, crate::staging::as_launched(ir, p))
    });
    let dims = if exact { key_dims } else { shape };
    marked(batch_shape_key(dims[0], dims[1], dims[2], batch, exact), align)
}

/// The mark [`problem_key`] gives a call of `ir` at `p`: the [`row_class`] of its
/// [`row_align`] where either it or the packed shape's is below a sector (so an unmarked
/// key means rows aligned as well as packed ones, and every key of a shape whose packed
/// rows are not sector-aligned is marked); `None` where both are whole sectors.
pub fn align_mark(ir: &GemmIr, p: Problem) -> Option<u32> {
    let actual = row_class(row_align(ir, p));
    let packed = row_class(row_align(ir, Problem::new(p.m, p.n, p.k)));
    (actual < ROW_SECTOR || packed < ROW_SECTOR).then_some(actual)
}

/// The bucket a call of `ir` at `p` is tuned and looked up under: [`batch_shape_key`]'s,
/// with the class marked by [`align_mark`]: `/a32`, `/a16`, or `/u` for rows below 16-byte
/// boundaries (e.g. `pow2r/a16:1024x1024x1024` for packed 1000³ f16, whose 2000-byte rows
/// start every other one mid-sector): the best tiles differ between a shape's
/// sector-aligned and mid-sector rows (4096×4096×128 on the H200: 128×128 ping-pong on
/// aligned rows, 256×128 on K + 8 views, each 14% faster there than the other,
/// bench/results/h200-2026-12-03a).
pub fn problem_key(ir: &GemmIr, p: Problem, exact: bool) -> String {
    marked(batch_shape_key(p.m, p.n, p.k, p.batch, exact), align_mark(ir, p))
}

/// `key` with its class marked by row class `class` (before any batch mark).
fn marked(key: String, class: Option<u32>) -> String {
    let Some(c) = class else { return key };
    let mark = if c == 0 { "/u".to_string() } else { format!("/a{c}") };
    let (head, dims) = key.split_once(':').expect("a shape key has a class");
    let (base, batch) = match head.split_once("@b") {
        Some((h, b)) => (h, format!("@b{b}")),
        None => (head, String::new()),
    };
    format!("{base}{mark}{batch}:{dims}")
}

/// The row class a key is marked with ([`problem_key`]: 32, 16, or 0 for `/u`), `None`
/// for an unmarked key.
pub fn key_align(key: &str) -> Option<u32> {
    let class = key.split_once(':')?.0;
    let class = class.split_once("@b").map_or(class, |(c, _)| c);
    if class.ends_with("/u") {
        return Some(0);
    }
    class.split_once("/a")?.1.parse().ok()
}

/// The bucket of a batch of `batch` products of `m × n × k`: [`shape_key`]'s for one
/// product, and for a batch its class marked with the batch rounded up to a power of two
/// (the exact batch for an exact key), e.g. `pow2@b32:512x512x128`: a batch fills the
/// machine as a larger grid does, so its best tiles are those of its own class.
pub fn batch_shape_key(m: usize, n: usize, k: usize, batch: usize, exact: bool) -> String {
    let key = shape_key(m, n, k, exact);
    if batch <= 1 {
        return key;
    }
    let b = if exact { batch } else { batch.next_power_of_two() };
    let (class, dims) = key.split_once(':').expect("a shape key has a class");
    format!("{class}@b{b}:{dims}")
}

/// The batch of a bucket key (1 for a key without one).
pub fn bucket_batch(key: &str) -> Option<usize> {
    let class = key.split_once(':')?.0;
    match class.split_once("@b") {
        Some((_, b)) => b.parse().ok(),
        None => Some(1),
    }
}

/// How far apart two bucket keys are for a nearest-bucket choice: the [`log_distance`] of
/// their dimensions and batches, plus 0.5 (a factor of 1.6 along one dimension) when one
/// is ragged and the other not, and 0.25 when their rows' alignment marks differ
/// ([`problem_key`]); `None` for a key that is not a bucket.
pub fn bucket_distance(a: &str, b: &str) -> Option<f64> {
    let class = |k: &str| k.split_once(':').map(|(c, _)| c.starts_with("pow2r"));
    let d = log_distance(bucket_dims(a)?, bucket_dims(b)?);
    let batches = ((bucket_batch(a)? as f64).ln() - (bucket_batch(b)? as f64).ln()).abs();
    let align = |k: &str| key_align(k).unwrap_or(ROW_SECTOR);
    Some(d + batches + if class(a)? != class(b)? { 0.5 } else { 0.0 } + if align(a) != align(b) { 0.25 } else { 0.0 })
}

/// Parses a document, checking format and version before the layout.
pub fn parse(text: &str) -> Result<Records, RecordError> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| RecordError(format!("not valid JSON ({e})")))?;
    if v.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
        return Err(RecordError(format!(
            "not a crossgemm tuning-records file (expected \"format\": \"{FORMAT}\")"
        )));
    }
    match v.get("version").and_then(|f| f.as_u64()) {
        Some(x) if x == VERSION as u64 => {}
        other => {
            return Err(RecordError(format!(
                "tuning-records version {other:?}; this crossgemm reads version {VERSION}"
            )))
        }
    }
    let doc: Records = serde_json::from_value(v).map_err(|e| RecordError(format!("malformed records ({e})")))?;
    for r in &doc.records {
        for b in r.buckets.keys() {
            if bucket_dims(b).is_none() || bucket_batch(b).is_none() {
                return Err(RecordError(format!("record of `{}`: bad shape bucket {b:?}", r.kernel)));
            }
        }
    }
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family::Stored;
    use crate::ir::{AccMode, DType, Layout};

    fn f16() -> GemmIr {
        GemmIr::matmul("t", DType::F16, AccMode::F32, Layout::RowMajor, Layout::ColMajor)
    }

    /// Rows start on the largest power of two up to a sector that pitch, view start and
    /// batch stride all divide; the operands' worst decides.
    #[test]
    fn row_alignment_follows_pitch_offset_and_batch_stride() {
        let ir = f16();
        assert_eq!(row_align(&ir, Problem::new(4096, 4096, 4096)), 32);
        // K = 1000: 2000-byte rows, every other one mid-sector.
        assert_eq!(row_align(&ir, Problem::new(1000, 1000, 1000)), 16);
        assert_eq!(row_align(&ir, Problem::new(64, 64, 33)), 2);
        let view = |ld, offset| Stored::new(ld, offset);
        // A K + 8 view of 4096-wide rows: 8208 bytes a row.
        let k8 = Problem::new(4096, 4096, 4096).stored(view(4104, 0), Stored::default());
        assert_eq!(row_align(&ir, k8), 16);
        // Aligned pitch, a view starting 4 elements in.
        let off = Problem::new(64, 64, 64).stored(Stored::default(), view(64, 4));
        assert_eq!(row_align(&ir, off), 8);
        let tf32 = GemmIr::matmul("t", DType::F32, AccMode::Tf32, Layout::RowMajor, Layout::ColMajor);
        assert_eq!(row_align(&tf32, Problem::new(1000, 1000, 1000)), 32);
        assert_eq!(row_align(&tf32, Problem::new(64, 64, 33)), 4);
    }

    /// Keys are marked where the rows or the packed shape's rows are not sector-aligned,
    /// before the batch, and the mark reads back.
    #[test]
    fn keys_mark_rows_that_start_mid_sector() {
        let ir = f16();
        let p = Problem::new(4096, 4096, 4096);
        assert_eq!(problem_key(&ir, p, false), "pow2:4096x4096x4096");
        let k8 = p.stored(Stored::new(4104, 0), Stored::new(4104, 0));
        assert_eq!(problem_key(&ir, k8, false), "pow2/a16:4096x4096x4096");
        assert_eq!(
            problem_key(&ir, Problem::new(1000, 1000, 1000), false),
            "pow2r/a16:1024x1024x1024"
        );
        // 1000^3 on 2016-byte rows: aligned, marked as such (its packed rows are not).
        let v = Problem::new(1000, 1000, 1000).stored(Stored::new(1008, 0), Stored::new(1008, 0));
        assert_eq!(problem_key(&ir, v, true), "exact/a32:1000x1000x1000");
        let b = Problem::new(512, 512, 136).batched(6);
        assert_eq!(problem_key(&ir, b, false), "pow2r/a16@b8:512x512x256");
        assert_eq!(key_align("pow2r/a16@b8:512x512x256"), Some(16));
        assert_eq!(bucket_batch("pow2r/a16@b8:512x512x256"), Some(8));
        assert_eq!(bucket_dims("pow2r/a16@b8:512x512x256"), Some([512, 512, 256]));
        assert_eq!(key_align("pow2:4096x4096x4096"), None);
        // Rows below 16-byte boundaries are one class, whatever their finer alignment.
        assert_eq!(problem_key(&ir, Problem::new(64, 32, 62), false), "pow2/u:64x32x64");
        assert_eq!(problem_key(&ir, Problem::new(63, 31, 63), false), "pow2/u:64x32x64");
        assert_eq!(key_align("pow2r/u@b4:64x32x64"), Some(0));
        // Another mark is farther than the same key, nearer than another dimension.
        let d = |a, b| bucket_distance(a, b).unwrap();
        let (a, m) = ("pow2:4096x4096x4096", "pow2/a16:4096x4096x4096");
        assert!(d(a, m) > 0.0 && d(a, m) < d(a, "pow2:8192x4096x4096"));
    }

    /// Unmarked keys of records follow their measured shape as a launch runs it: marked
    /// where the packed rows are mid-sector (or staged into scratch), kept otherwise;
    /// marked keys keep their mark.
    #[test]
    fn rekey_marks_records_measured_before_marks() {
        let ir = f16();
        assert_eq!(
            rekey("pow2r:1024x1024x1024", [1000, 1000, 1000], Some(&ir)),
            "pow2r/a16:1024x1024x1024"
        );
        assert_eq!(
            rekey("pow2r:1024x1024x1024", [1000, 1000, 1000], None),
            "pow2r:1024x1024x1024"
        );
        assert_eq!(
            rekey("pow2:4096x4096x4096", [4096; 3], Some(&ir)),
            "pow2:4096x4096x4096"
        );
        assert_eq!(
            rekey("pow2/a16:4096x4096x4096", [4096; 3], Some(&ir)),
            "pow2/a16:4096x4096x4096"
        );
        assert_eq!(
            rekey("exact:1000x1000x1000", [1000; 3], Some(&ir)),
            "exact/a16:1000x1000x1000"
        );
        // K = 700 (1400-byte rows) runs on rows staged to 1408 bytes: aligned, marked so.
        assert_eq!(
            rekey("pow2r:4096x8192x1024", [3000, 5000, 700], Some(&ir)),
            "pow2r/a32:4096x5120x1024"
        );
        assert_eq!(
            problem_key(
                &ir,
                crate::staging::as_launched(&ir, Problem::new(3000, 5000, 700)),
                false
            ),
            "pow2r/a32:4096x5120x1024"
        );
    }
}
