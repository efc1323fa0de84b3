//! The `crossgemm` command line: argument parsing and dispatch. Each command lives in
//! its own module; errors are printed as one `crossgemm: error: ..` line with exit
//! status 1 (usage errors: clap's message, status 2).

mod bench;
mod cache;
mod check;
mod devices;
mod diagnose;
mod operands;
mod report;
mod tune;
mod under_tool;

use clap::{Parser, Subcommand, ValueEnum};
use crossgemm::{KernelSpec, Layout};
use std::path::PathBuf;
use std::process::ExitCode;

/// Operand and output element type of a built-in kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Dtype {
    F16,
    Bf16,
    /// f32 operands, exact f32 math.
    F32,
    /// f32 operands and output on tf32 tensor cores (`#[gemm_kernel(acc = tf32)]`).
    Tf32,
    /// f32 operands and output, each operand split into two tf32 parts and the product
    /// taken as three tf32 products, close to f32 accuracy (`#[gemm_kernel(acc = tf32x3)]`);
    /// compared with cuBLAS's exact f32.
    Tf32x3,
}

/// How a built-in kernel's `w` (K×N) is stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum WLayout {
    /// Column-major, K-contiguous (`w: Matrix<T, ColMajor>`: `nn.Linear`'s weight).
    #[default]
    Col,
    /// Row-major, N-contiguous (`w: Matrix<T>`: NumPy's and JAX's `x @ w`).
    Row,
}

impl WLayout {
    pub fn layout(self) -> Layout {
        match self {
            WLayout::Col => Layout::ColMajor,
            WLayout::Row => Layout::RowMajor,
        }
    }
}

impl Dtype {
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F16 => "f16",
            Dtype::Bf16 => "bf16",
            Dtype::F32 => "f32",
            Dtype::Tf32 => "tf32",
            Dtype::Tf32x3 => "tf32x3",
        }
    }
}

/// The fused epilogue of a built-in kernel (the runtime's measuring type, shared with the
/// baselines and the reports).
pub use crossgemm::bench::Epilogue;

/// Parses an epilogue argument, listing the names in `--help`.
pub fn epilogue_arg() -> impl clap::builder::TypedValueParser<Value = Epilogue> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    // The spelling with a dash, as earlier versions accepted it.
    let dashed = |e: Epilogue| match e {
        Epilogue::None => "none",
        Epilogue::BiasRelu => "bias-relu",
        Epilogue::BiasGelu => "bias-gelu",
    };
    let values = Epilogue::ALL.map(|e| PossibleValue::new(e.name()).alias(dashed(e)).help(e.formula()));
    PossibleValuesParser::new(values).map(|s| s.parse::<Epilogue>().expect("a possible value parses"))
}

/// One built-in kernel: `x: Matrix<T>`, `w: Matrix<T, ColMajor>` (or, for `bench
/// --w-layout row`, `w: Matrix<T>`: K×N row-major) and `bias: Row<T>` unless the epilogue
/// is `none`, returning `Matrix<T>`.
pub struct KernelEntry {
    pub dtype: Dtype,
    pub epilogue: Epilogue,
    pub spec: &'static KernelSpec,
}

impl KernelEntry {
    pub const fn new(dtype: Dtype, epilogue: Epilogue, spec: &'static KernelSpec) -> KernelEntry {
        KernelEntry { dtype, epilogue, spec }
    }

    /// The built-in kernel for `dtype` and `epilogue` with a column-major `w`.
    pub fn find(kernels: &[KernelEntry], dtype: Dtype, epilogue: Epilogue) -> Result<&KernelEntry, String> {
        Self::find_w(kernels, dtype, epilogue, Layout::ColMajor)
    }

    /// The built-in kernel for `dtype` and `epilogue` whose `w` is stored `w_layout`.
    pub fn find_w(
        kernels: &[KernelEntry],
        dtype: Dtype,
        epilogue: Epilogue,
        w_layout: Layout,
    ) -> Result<&KernelEntry, String> {
        kernels
            .iter()
            .find(|e| e.dtype == dtype && e.epilogue == epilogue && e.w_layout() == w_layout)
            .ok_or_else(|| {
                let stored = match w_layout {
                    Layout::RowMajor => "row-major",
                    Layout::ColMajor => "column-major",
                };
                format!(
                    "no built-in kernel for {} {} with a {stored} w",
                    dtype.name(),
                    epilogue.name()
                )
            })
    }

    /// How the kernel's `w` is stored.
    pub fn w_layout(&self) -> Layout {
        self.spec.ir().b_layout()
    }
}

#[derive(Parser, Debug)]
#[command(
    name = "crossgemm",
    version,
    about = "Devices, autotuning, the tuning cache and benchmarks of crossgemm's generated GEMM kernels"
)]
struct Cli {
    /// Cache folder: tuning results and compiled kernels (`<DIR>/bin`) (default:
    /// CROSSGEMM_CACHE_DIR, else the platform cache folder).
    #[arg(long, global = true, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the devices found, with their limits.
    Devices {
        /// One JSON array instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Tune a built-in kernel for a shape on a device (a cache hit tunes nothing).
    ///
    /// With CROSSGEMM_TUNE=cached nothing is tuned: it reports the config a `cached`
    /// launch would use (the bucket's winner, else the nearest bucket's, else the
    /// planner's default). With CROSSGEMM_TUNE=off nothing is tuned or read from the
    /// cache: it reports the planner's default, which an `off` launch uses.
    Tune(tune::TuneArgs),
    /// Time the shape table beside cuBLAS and cuBLASLt; write JSON, markdown and an SVG chart.
    ///
    /// Each case is tuned (or found in the tuning cache), then ours, cuBLAS (cublasGemmEx,
    /// fp32 compute; + a separate epilogue kernel for epilogue rows) and cuBLASLt (its fused
    /// epilogue) are timed on the same buffers with CUDA events, and ours is checked
    /// against cuBLAS's output. On a device without cuBLAS only ours is timed and checked
    /// against the host reference.
    Bench(Box<bench::BenchArgs>),
    /// Why a tuned kernel takes the time it does, for one shape.
    ///
    /// Checks the winner against the host reference, then times it beside its load-only,
    /// no-epilogue, compute-only and no-store variants, its stage/warp neighbours and other
    /// launch orders (GROUP_M), all in the same rounds (each neighbour checked first),
    /// compares it with the memory and compute roofs, and prints a verdict: memory-bound,
    /// store-bound, compute-bound, pipeline-bound or raster-bound.
    Diagnose(diagnose::DiagnoseArgs),
    /// Inspect, clear, export and import the tuning cache.
    Cache {
        #[command(subcommand)]
        command: CacheCommand,
    },
}

#[derive(Subcommand, Debug)]
enum CacheCommand {
    /// List the cache's entries: kernel, target, device, driver, buckets and failures.
    Ls {
        /// The entries as a tuning-records JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Remove every tuning-cache file from the cache folder.
    Clear {
        /// Also remove the compiled-kernel cache (`<cache folder>/bin`).
        #[arg(long)]
        binaries: bool,
    },
    /// Write the cache as a tuning-records file.
    Export {
        /// Where to write it (`-`: stdout).
        file: PathBuf,
    },
    /// Merge a tuning-records file into the cache (cached winners are kept).
    Import {
        /// The records file.
        file: PathBuf,
    },
    /// Combine tuning-records files from several machines into one: per bucket, each
    /// config's median over the machines that timed it; medians within 2 % of the
    /// fastest tie, and a tie goes to the planner's order. Reads no cache.
    Merge {
        /// The records files.
        #[arg(required = true, num_args = 1..)]
        files: Vec<PathBuf>,
        /// Where to write the merged records (`-`: stdout).
        #[arg(long, short)]
        out: PathBuf,
    },
}

/// A failed command's message.
pub type CliResult = Result<(), String>;

/// One problem for a built-in kernel, as `tune` and `diagnose` take it.
#[derive(clap::Args, Debug)]
pub struct ProblemArgs {
    /// The problem, MxNxK (e.g. 4096x4096x4096).
    #[arg(long, value_parser = tune::parse_shape)]
    pub shape: (usize, usize, usize),
    /// Element type of x, w, bias and the output.
    #[arg(long, value_enum, default_value = "f16")]
    pub dtype: Dtype,
    /// The fused epilogue.
    #[arg(long, value_parser = epilogue_arg(), default_value = "bias_relu")]
    pub epilogue: Epilogue,
    /// How w is stored: `col` (K-contiguous) or `row` (K×N, N-contiguous); every dtype and
    /// epilogue has both.
    #[arg(long, value_enum, default_value = "col")]
    pub w_layout: WLayout,
    /// Device id (`cuda:0`, `opencl:0:0`, `opencl-cpu`, ..); default CROSSGEMM_DEVICE,
    /// else the best device found.
    #[arg(long)]
    pub device: Option<String>,
}

impl ProblemArgs {
    /// The built-in kernel for the dtype, epilogue and w layout.
    pub fn kernel(&self, kernels: &'static [KernelEntry]) -> Result<&'static KernelEntry, String> {
        KernelEntry::find_w(kernels, self.dtype, self.epilogue, self.w_layout.layout())
    }
}

/// Configs to time instead of the plan's candidates, as `tune`, `bench` and `diagnose`
/// take them.
#[derive(clap::Args, Debug, Default)]
pub struct ConfigArgs {
    /// Time exactly this config instead of the plan's candidates (repeat for several; on
    /// `bench`, for every case; on `diagnose`, the fastest is diagnosed). Written in the
    /// JSON of the tuning cache and records (`crossgemm cache ls --json`, `tune --json`'s
    /// `best_config`), e.g.
    /// '{"family":"simt","mwg":32,"nwg":32,"kwg":16,"mdimc":8,"ndimc":8,"vw":2,"group_m":8}'.
    /// A field its family does not have is refused (not ignored). Each must pass its
    /// family's rules for the target and fit the device. Nothing is
    /// read from or written to the tuning cache's winners. Not with `bench --first-call`
    /// or under CROSSGEMM_TUNE=cached|off, which tune nothing.
    #[arg(long = "config", value_name = "JSON", value_parser = parse_config)]
    pub configs: Vec<crossgemm::TileConfig>,
}

fn parse_config(s: &str) -> Result<crossgemm::TileConfig, String> {
    crossgemm::TileConfig::from_json_strict(s).map_err(|e| format!("not a tile config in the tuning cache's JSON: {e}"))
}

/// The tuner's options for a command: the environment's, with the command's cache folder,
/// no stderr progress lines (commands draw their own bar), `--max` when given (0: no
/// limit) and `--config`'s configs.
pub fn tune_options(cache_dir: Option<PathBuf>, max: Option<usize>, configs: &ConfigArgs) -> crossgemm::TuneOptions {
    let mut opts = crossgemm::TuneOptions::from_env();
    opts.cache_dir = cache_dir;
    opts.progress = false;
    if max.is_some() {
        opts.max_candidates = max.filter(|&n| n > 0);
    }
    opts.configs = configs.configs.clone();
    opts
}

/// The device `id` names, else the best one; the host reference is refused, since it
/// runs no kernels and there would be nothing to `what` ("tune", "benchmark", ..).
pub fn open_device(id: Option<&str>, what: &str) -> Result<crossgemm::Device, String> {
    let dev = match id {
        Some(id) => crossgemm::Device::open(id),
        None => crossgemm::Device::best(),
    }
    .map_err(|e| e.to_string())?;
    if dev.info().kind == crossgemm::Backend::Host {
        return Err(format!(
            "{} is the host reference: there is nothing to {what} (no GPU or OpenCL device found; `crossgemm devices`)",
            dev.info()
        ));
    }
    Ok(dev)
}

/// The cache folder of this run: `--cache-dir`, which then holds the compiled kernels
/// too (the runtime is told), else the runtime's (CROSSGEMM_CACHE_DIR, else the platform
/// folder). A folder that is a file is an error: nothing could be saved there.
fn cache_folder(flag: Option<PathBuf>) -> Result<Option<PathBuf>, String> {
    match flag {
        Some(dir) => {
            crossgemm::check_cache_dir(&dir).map_err(|why| format!("--cache-dir: {why}"))?;
            crossgemm::set_cache_dir(Some(dir.clone()));
            Ok(Some(dir))
        }
        None => crossgemm::cache_dir_checked(),
    }
}

pub fn main(kernels: &'static [KernelEntry]) -> ExitCode {
    let cli = Cli::parse();
    let cache_dir = match (&cli.command, cache_folder(cli.cache_dir.clone())) {
        (_, Ok(d)) => d,
        // Listing devices needs no cache.
        (Command::Devices { .. }, Err(_)) => None,
        (_, Err(why)) => {
            eprintln!("crossgemm: error: {why}: nothing could be saved (point it at a folder)");
            return ExitCode::FAILURE;
        }
    };
    let r = match cli.command {
        Command::Devices { json } => devices::run(json),
        Command::Tune(args) => {
            under_tool::warn("tune");
            tune::run(kernels, &args, cache_dir)
        }
        Command::Bench(args) => {
            under_tool::warn("bench");
            bench::run(kernels, &args, cache_dir)
        }
        Command::Diagnose(args) => {
            under_tool::warn("diagnose");
            diagnose::run(kernels, &args, cache_dir)
        }
        Command::Cache {
            command: CacheCommand::Merge { files, out },
        } => cache::merge(&files, &out),
        Command::Cache { command } => {
            let Some(dir) = cache_dir else {
                eprintln!("crossgemm: error: no cache folder: set CROSSGEMM_CACHE_DIR or pass --cache-dir");
                return ExitCode::FAILURE;
            };
            match command {
                CacheCommand::Ls { json } => cache::ls(&dir, json),
                CacheCommand::Clear { binaries } => cache::clear(&dir, binaries),
                CacheCommand::Export { file } => cache::export(&dir, &file),
                CacheCommand::Import { file } => cache::import(&dir, &file),
                CacheCommand::Merge { .. } => unreachable!("handled above: merging reads no cache"),
            }
        }
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("crossgemm: error: {msg}");
            ExitCode::FAILURE
        }
    }
}
