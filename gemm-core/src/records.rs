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

use crate::family::TileConfig;
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

/// `bucket`, a key of a record measured at `shape`, as [`batch_shape_key`] would write it
/// now: records written before a change of the bucket rule (N's eighths) land in the
/// bucket a launch of their shape looks up. Exact keys, and keys that are not buckets,
/// are returned as they are.
pub fn rekey(bucket: &str, shape: [usize; 3]) -> String {
    let Some((class, _)) = bucket.split_once(':') else {
        return bucket.to_string();
    };
    if !class.starts_with("pow2") || bucket_dims(bucket).is_none() {
        return bucket.to_string();
    }
    let batch = bucket_batch(bucket).unwrap_or(1);
    batch_shape_key(shape[0], shape[1], shape[2], batch, false)
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
/// is ragged and the other not; `None` for a key that is not a bucket.
pub fn bucket_distance(a: &str, b: &str) -> Option<f64> {
    let class = |k: &str| k.split_once(':').map(|(c, _)| c.starts_with("pow2r"));
    let d = log_distance(bucket_dims(a)?, bucket_dims(b)?);
    let batches = ((bucket_batch(a)? as f64).ln() - (bucket_batch(b)? as f64).ln()).abs();
    Some(d + batches + if class(a)? != class(b)? { 0.5 } else { 0.0 })
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
