//! `crossgemm bench`'s command line: which cases to run, how to time them, and where the
//! report goes.

use crate::cli::tune::parse_shape;
use crate::cli::{ConfigArgs, WLayout};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// The shape table.
    #[arg(long, default_value = "bench/shapes.toml", value_name = "FILE")]
    pub(super) shapes: PathBuf,
    /// Run these shapes (MxNxK, repeatable) instead of the table's.
    #[arg(long = "shape", value_parser = parse_shape, value_name = "MxNxK")]
    pub(super) shape: Vec<(usize, usize, usize)>,
    /// Only these groups of the table (comma-separated: square, skinny, short_k, odd, llm).
    #[arg(long, value_delimiter = ',')]
    pub(super) groups: Option<Vec<String>>,
    /// Only these dtypes (comma-separated: f16, bf16, f32, tf32, tf32x3); default: the table's.
    #[arg(long, value_delimiter = ',')]
    pub(super) dtypes: Option<Vec<String>>,
    /// Only these epilogues (comma-separated: none, bias_relu, bias_gelu); default: the table's.
    #[arg(long, value_delimiter = ',')]
    pub(super) epilogues: Option<Vec<String>>,
    /// Device id (`cuda:0`, `opencl:0:0`, ..); default CROSSGEMM_DEVICE, else the best found.
    #[arg(long)]
    pub(super) device: Option<String>,
    /// Folder for the JSON, markdown and SVG.
    #[arg(long, default_value = "bench/results", value_name = "DIR")]
    pub(super) out: PathBuf,
    /// File stem of the outputs (default `<device>-<date>`).
    #[arg(long)]
    pub(super) name: Option<String>,
    /// Timed runs per measurement (median; at least 10).
    #[arg(long, default_value_t = 20)]
    pub(super) runs: usize,
    /// Untimed runs before the timed ones.
    #[arg(long, default_value_t = 3)]
    pub(super) warmup: usize,
    /// Most tuning candidates per case (default: the tuner's; not with `--config`, whose
    /// configs are all timed).
    #[arg(long, conflicts_with = "configs")]
    pub(super) max: Option<usize>,
    /// Skip cuBLAS and cuBLASLt (outputs are then checked against the host reference).
    #[arg(long)]
    pub(super) no_vendor: bool,
    /// Triton results to fold in as `triton_us` (JSON or JSON lines from
    /// bench/torch_baseline.py; repeatable).
    #[arg(long, value_name = "FILE")]
    pub(super) merge: Vec<PathBuf>,
    /// An earlier report to compare ours with: the markdown gets a section with ours then
    /// and now per row (e.g. before and after a planner change).
    #[arg(long, value_name = "FILE")]
    pub(super) against: Option<PathBuf>,
    /// Measure nothing: combine the reports given with --input (a run split over several
    /// processes), fold in --merge files and write the outputs.
    #[arg(long, requires = "input")]
    pub(super) report_only: bool,
    /// A report JSON to combine (with --report-only; repeatable).
    #[arg(long, value_name = "FILE")]
    pub(super) input: Vec<PathBuf>,
    /// Source revision recorded in the report (default CROSSGEMM_COMMIT, else the first
    /// line of a COMMIT file beside the executable, else `git rev-parse --short HEAD`,
    /// else "unknown").
    #[arg(long)]
    pub(super) commit: Option<String>,
    /// Tune nothing: launch each case as a user's first call does under
    /// `CROSSGEMM_TUNE=cached` (the cache's or the config table's winner, else the
    /// nearest entry, else the planner's default), record that call's wall time and the
    /// config's source, then time that config. With --against a full-tune report, the
    /// change section compares the two.
    #[arg(long, conflicts_with_all = ["report_only", "configs"])]
    pub(super) first_call: bool,
    /// With --first-call: first `prepare` every kernel the cases use on the device (its
    /// config table's configs compiled in parallel, timed and reported), as a program
    /// would at start-up; the first calls then show what is left.
    #[arg(long, requires = "first_call")]
    pub(super) prepare: bool,
    /// Pass ours x and w as views whose stored rows are this many elements longer than
    /// K (a leading dimension of K + PAD, as for sub-matrices of a larger tensor); tuned
    /// and timed on those views, beside ours on the packed operands (tuned for them) in
    /// the same rounds: the report's "Views against packed operands" section. cuBLAS and
    /// cuBLASLt read the same strided layouts (`cublasGemmEx`'s lda and ldb, cuBLASLt's
    /// layouts), so that ×cuBLAS compares like with like.
    #[arg(long, default_value_t = 0, value_name = "PAD")]
    pub(super) pad: usize,
    /// Run every case as a batch of B products in one call: ours with batched views of B
    /// copies of x and w stored back to back (the bias broadcast), cuBLAS with
    /// `cublasGemmStridedBatchedEx` on the same buffers, cuBLASLt with strided-batch layouts.
    #[arg(long, default_value_t = 1, value_name = "B", conflicts_with_all = ["first_call", "pad"])]
    pub(super) batch: usize,
    /// How w is stored: `col` (K-contiguous, `nn.Linear`'s weight) or `row` (K×N,
    /// N-contiguous: `x @ w` as NumPy and JAX store it; every dtype and epilogue). Ours run
    /// the built-in kernels whose `w: Matrix<T>`, cuBLAS and cuBLASLt read w as stored
    /// ("NN").
    #[arg(long, value_enum, default_value = "col", conflicts_with_all = ["pad", "batch"])]
    pub(super) w_layout: WLayout,
    #[command(flatten)]
    pub(super) configs: ConfigArgs,
}
