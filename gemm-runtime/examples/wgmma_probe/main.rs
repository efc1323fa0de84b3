//! Probe of the Hopper wgmma generator (`gemm_core::family::wgmma`).
//!
//! ```text
//! wgmma_probe --compile-only [--dump DIR] [--configs ..] [--kinds ..]
//!     NVRTC only (no GPU): compiles every (kind, config, variant) for sm_90a and prints
//!     registers, spills, stack and ptxas warnings; --dump writes NAME.cu and NAME.cubin.
//! wgmma_probe [--configs ..] [--kinds ..] [--shapes ..] [--time] [--time-kinds ..]
//!             [--variants] [--reps 20] [--warmup 3] [--watchdog] [--define NAME=VALUE]
//!     On the GPU: for each shape, kind and config, fills A, B (and a bias) with random
//!     non-zero values, poisons the output with 0xFF bytes, launches, compares the whole
//!     output with cuBLAS (fp32 compute, f32 output, the reference epilogue applied on
//!     the device), counts unwritten (NaN) elements, runs again and compares bits; with
//!     --time, times ours and cuBLAS (CUDA events, 128 MiB L2 flush before every run,
//!     `warmup` runs, median of `reps`); --variants also times the diagnosis variants of
//!     the first config on shapes of at least 1e11 FLOP.
//! ```
//! Lists are comma-separated names; `all` (the default) selects every entry. Shapes are
//! `MxNxK`, or the sets `tiny`, `mid`, `big`, `all`; `--fuzz N` adds N random shapes.

mod gpu;
mod lt;
mod nvrtc;
mod support;
mod tma;

use gemm_core::codegen::Variant;
use gemm_core::family::wgmma::{self, Wgmma, WgmmaTile};
use gemm_core::family::{KernelFamily, Problem};
use gemm_core::{AccMode, Backend, DType, EpOp, Func, GemmIr, Layout, Param};
use gpu::{DevBuf, Res};
use std::collections::HashMap;
use std::ffi::c_void;

/// The epilogues the probe's kinds fuse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Epi {
    None,
    /// `relu(acc + bias)`, bias a `Row` of the operand type.
    BiasRelu,
    /// `gelu(acc + bias)` (tanh form).
    BiasGelu,
    /// `silu(acc * s + col) + res`: a `Col`, a row-major residual `Matrix` and a scalar
    /// (s = 0.5).
    ColResSilu,
}

impl Epi {
    /// `which` of the support kernel sp_epi.
    fn which(self) -> i32 {
        match self {
            Epi::None => 0,
            Epi::BiasRelu => 1,
            Epi::BiasGelu => 2,
            Epi::ColResSilu => 3,
        }
    }
}

/// One GEMM the probe builds by hand: operand dtype, layouts, epilogue, output.
#[derive(Clone, Debug)]
struct Kind {
    name: &'static str,
    dtype: DType,
    a: Layout,
    b: Layout,
    epi: Epi,
    out: DType,
    out_layout: Layout,
}

fn kinds() -> Vec<Kind> {
    use DType::*;
    use Layout::*;
    let k = |name, dtype, a, b, epi, out, out_layout| Kind {
        name,
        dtype,
        a,
        b,
        epi,
        out,
        out_layout,
    };
    use Epi::*;
    vec![
        k("bf16.rc", Bf16, RowMajor, ColMajor, None, Bf16, RowMajor),
        k("f16.rc", F16, RowMajor, ColMajor, None, F16, RowMajor),
        k("bf16.rr", Bf16, RowMajor, RowMajor, None, Bf16, RowMajor),
        k("f16.rr", F16, RowMajor, RowMajor, None, F16, RowMajor),
        k("bf16.cc", Bf16, ColMajor, ColMajor, None, Bf16, RowMajor),
        k("bf16.cr", Bf16, ColMajor, RowMajor, None, Bf16, RowMajor),
        k("bf16.rc.bias_relu", Bf16, RowMajor, ColMajor, BiasRelu, Bf16, RowMajor),
        k("f16.rc.f32col", F16, RowMajor, ColMajor, None, F32, ColMajor),
        k("f16.rc.bias_relu", F16, RowMajor, ColMajor, BiasRelu, F16, RowMajor),
        k("f16.rc.bias_gelu", F16, RowMajor, ColMajor, BiasGelu, F16, RowMajor),
        k("bf16.rc.bias_gelu", Bf16, RowMajor, ColMajor, BiasGelu, Bf16, RowMajor),
        k("f16.rc.bias_gelu.f32", F16, RowMajor, ColMajor, BiasGelu, F32, RowMajor),
        k(
            "f16.rc.col_res_silu",
            F16,
            RowMajor,
            ColMajor,
            ColResSilu,
            F16,
            RowMajor,
        ),
        k(
            "bf16.cr.col_res_silu",
            Bf16,
            ColMajor,
            RowMajor,
            ColResSilu,
            Bf16,
            RowMajor,
        ),
    ]
}

impl Kind {
    fn ir(&self) -> GemmIr {
        let mut ir = GemmIr::matmul(
            &format!("wg_{}", self.name.replace('.', "_")),
            self.dtype,
            AccMode::F32,
            self.a,
            self.b,
        );
        ir.out_dtype = self.out;
        ir.out_layout = self.out_layout;
        match self.epi {
            Epi::None => {}
            Epi::BiasRelu | Epi::BiasGelu => {
                ir.params.push(Param::row("bias", self.dtype));
                let f = if self.epi == Epi::BiasRelu {
                    Func::Relu
                } else {
                    Func::Gelu
                };
                ir.epilogue = vec![EpOp::Acc, EpOp::Param(2), EpOp::Add, EpOp::Call(f)];
            }
            Epi::ColResSilu => {
                ir.params.push(Param::col("col", self.dtype));
                ir.params.push(Param::matrix("res", self.dtype, Layout::RowMajor));
                ir.params.push(Param::scalar("s"));
                ir.epilogue = vec![
                    EpOp::Acc,
                    EpOp::Param(4),
                    EpOp::Mul,
                    EpOp::Param(2),
                    EpOp::Add,
                    EpOp::Call(Func::Silu),
                    EpOp::Param(3),
                    EpOp::Add,
                ];
            }
        }
        ir
    }
}

/// Config names: `BMxBN`, `s` stages, `c` consumers (the generator's defaults for the
/// rest: `WgmmaTile::new`), then options: `x2` cluster of 2 (B multicast), `g16` /
/// `g4` GROUP_M, `w0` / `w1` CG_INFLIGHT 0 / 1, `d` direct (unstaged) epilogue.
fn configs() -> Vec<(&'static str, WgmmaTile)> {
    let c = |bm, bn, stages, consumers, opts: &str| {
        let mut c = WgmmaTile::new(bm, bn, stages, consumers);
        for o in opts.split(',').filter(|o| !o.is_empty()) {
            match o {
                "x2" => c.cluster_m = 2,
                "g16" => c.group_m = 16,
                "g4" => c.group_m = 4,
                "w0" => c.inflight = false,
                "w1" => c.inflight = true,
                "d" => c.epi_smem = false,
                _ => panic!("option {o}"),
            }
        }
        c
    };
    vec![
        ("128x256s4c2", c(128, 256, 4, 2, "")),
        ("128x256s4c2w1", c(128, 256, 4, 2, "w1")),
        ("128x256s4c2d", c(128, 256, 4, 2, "d")),
        ("128x256s4c2x2", c(128, 256, 4, 2, "x2")),
        ("128x256s4c2g16", c(128, 256, 4, 2, "g16")),
        ("128x256s4c2g4", c(128, 256, 4, 2, "g4")),
        ("128x256s4c2x2g16", c(128, 256, 4, 2, "x2,g16")),
        ("128x256s3c2", c(128, 256, 3, 2, "")),
        ("256x128s4c2", c(256, 128, 4, 2, "")),
        ("256x128s4c2x2", c(256, 128, 4, 2, "x2")),
        ("128x192s4c2", c(128, 192, 4, 2, "")),
        ("128x192s5c2", c(128, 192, 5, 2, "")),
        ("128x128s6c2", c(128, 128, 6, 2, "")),
        ("128x128s5c2", c(128, 128, 5, 2, "")),
        ("256x128s3c2", c(256, 128, 3, 2, "")),
        ("128x64s8c2", c(128, 64, 8, 2, "")),
        ("128x128s6c2x2", c(128, 128, 6, 2, "x2")),
        ("128x128s6c1", c(128, 128, 6, 1, "")),
        ("64x256s5c1", c(64, 256, 5, 1, "")),
        ("64x128s8c1", c(64, 128, 8, 1, "")),
        ("64x128s8c1d", c(64, 128, 8, 1, "d")),
        ("64x64s10c1", c(64, 64, 10, 1, "")),
    ]
}

fn shape_set(name: &str) -> Vec<(usize, usize, usize)> {
    let tiny = vec![
        (1, 8, 8),
        (7, 13, 16),
        (65, 130, 72),
        (129, 257, 136),
        (72, 200, 40),
        (136, 264, 8),
    ];
    let mid = vec![
        (1000, 1000, 1008),
        (1024, 1024, 2048),
        (2048, 2048, 2048),
        (3000, 5000, 704),
        (128, 8192, 8192),
    ];
    let big = vec![(4096, 4096, 4096), (8192, 8192, 8192)];
    // Rows TMA cannot map (K, or M / N for MN-major kinds, not a multiple of 8).
    let odd = vec![
        (1, 8, 4),
        (7, 13, 2),
        (66, 130, 70),
        (129, 258, 138),
        (200, 300, 36),
        (130, 66, 1030),
        (1000, 1002, 1002),
        (3000, 5000, 700),
    ];
    match name {
        "tiny" => tiny,
        "mid" => mid,
        "big" => big,
        "odd" => odd,
        "all" => [tiny, mid, big].concat(),
        s => {
            let v: Vec<usize> = s.split('x').map(|t| t.parse().expect("shape MxNxK")).collect();
            assert_eq!(v.len(), 3, "shape MxNxK");
            vec![(v[0], v[1], v[2])]
        }
    }
}

/// `n` pseudo-random shapes (fixed seed): M, N in [1, 700], K a multiple of 8 in [8, 1024];
/// every other shape has M and N multiples of 8 too, so that the MN-major kinds run.
fn fuzz_shapes(n: usize) -> Vec<(usize, usize, usize)> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |lim: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        1 + (x % lim) as usize
    };
    (0..n)
        .map(|i| {
            let (m, nn, k) = (next(700), next(700), 8 * next(128));
            if i % 2 == 0 {
                (m, nn, k)
            } else {
                (m.div_ceil(8) * 8, nn.div_ceil(8) * 8, k)
            }
        })
        .collect()
}

struct Args {
    compile_only: bool,
    dump: Option<String>,
    configs: Vec<String>,
    kinds: Vec<String>,
    shapes: Vec<(usize, usize, usize)>,
    time: bool,
    time_kinds: Vec<String>,
    variants: bool,
    reps: usize,
    warmup: usize,
    watchdog: bool,
    extra: Vec<(String, u32)>,
    /// The call whose defines --compile-only compiles with (its rows pick TMA or cp.async).
    problem: (usize, usize, usize),
}

fn parse_args() -> Args {
    let mut a = Args {
        compile_only: false,
        dump: None,
        configs: vec!["all".into()],
        kinds: vec!["all".into()],
        shapes: Vec::new(),
        time: false,
        time_kinds: vec!["bf16.rc".into(), "f16.rc".into()],
        variants: false,
        reps: 20,
        warmup: 3,
        watchdog: false,
        extra: Vec::new(),
        problem: (256, 256, 256),
    };
    let mut it = std::env::args().skip(1);
    let list = |s: String| s.split(',').map(|x| x.to_string()).collect::<Vec<_>>();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--compile-only" => a.compile_only = true,
            "--dump" => a.dump = it.next(),
            "--configs" => a.configs = list(it.next().expect("--configs LIST")),
            "--kinds" => a.kinds = list(it.next().expect("--kinds LIST")),
            "--shapes" => {
                for s in list(it.next().expect("--shapes LIST")) {
                    a.shapes.extend(shape_set(&s));
                }
            }
            "--time" => a.time = true,
            "--time-kinds" => a.time_kinds = list(it.next().expect("--time-kinds LIST")),
            "--variants" => a.variants = true,
            "--reps" => a.reps = it.next().expect("--reps N").parse().expect("--reps N"),
            "--warmup" => a.warmup = it.next().expect("--warmup N").parse().expect("--warmup N"),
            "--watchdog" => a.watchdog = true,
            "--problem" => a.problem = shape_set(&it.next().expect("--problem MxNxK"))[0],
            "--fuzz" => {
                let n: usize = it.next().expect("--fuzz N").parse().expect("--fuzz N");
                a.shapes.extend(fuzz_shapes(n));
            }
            "--fuzz-odd" => {
                // K even, a multiple of 8 only by chance: the cp.async producer.
                let n: usize = it.next().expect("--fuzz-odd N").parse().expect("--fuzz-odd N");
                a.shapes
                    .extend(fuzz_shapes(n).into_iter().map(|(m, nn, k)| (m, nn, k / 4 + 2)));
            }
            "--define" => {
                let d = it.next().expect("--define NAME=VALUE");
                let (k, v) = d.split_once('=').expect("--define NAME=VALUE");
                a.extra.push((k.to_string(), v.parse().expect("--define NAME=VALUE")));
            }
            "-h" | "--help" => {
                println!("see the doc comment of gemm-runtime/examples/wgmma_probe/main.rs");
                std::process::exit(0);
            }
            other => panic!("unknown argument {other}"),
        }
    }
    if a.shapes.is_empty() {
        a.shapes = shape_set("all");
    }
    a
}

fn selected<'a, T>(all: &'a [(&'static str, T)], want: &[String]) -> Vec<&'a (&'static str, T)> {
    if want.iter().any(|w| w == "all") {
        return all.iter().collect();
    }
    want.iter()
        .map(|w| {
            all.iter()
                .find(|(n, _)| n == w)
                .unwrap_or_else(|| panic!("unknown name {w}"))
        })
        .collect()
}

/// The family's defines for `cfg` and the call `shape` (TMA or the cp.async producer),
/// the watchdog, then the `--define` values.
fn defines(cfg: &WgmmaTile, ir: &GemmIr, shape: (usize, usize, usize), watchdog: bool) -> Vec<(String, u32)> {
    let p = Problem::new(shape.0, shape.1, shape.2);
    let mut d: Vec<(String, u32)> = Wgmma
        .defines(cfg, ir, Backend::Cuda, p)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    if watchdog {
        d.push(("CG_WATCHDOG".into(), 1));
    }
    d.extend(EXTRA.get().into_iter().flatten().cloned());
    d
}

/// `--define` values, appended to every kernel's definitions.
static EXTRA: std::sync::OnceLock<Vec<(String, u32)>> = std::sync::OnceLock::new();

fn compile_only(args: &Args) -> i32 {
    if !nvrtc::present() {
        eprintln!("libnvrtc not found: put its folder on LD_LIBRARY_PATH");
        return 2;
    }
    let kinds = kinds();
    let kinds: Vec<(&'static str, Kind)> = kinds.into_iter().map(|k| (k.name, k)).collect();
    let cfgs = configs();
    if let Some(d) = &args.dump {
        std::fs::create_dir_all(d).expect("create dump dir");
    }
    let mut bad = 0;
    match nvrtc::compile(
        support::SOURCE,
        "wgmma_probe_support",
        &nvrtc::options(nvrtc::SM90, &[]),
    ) {
        Ok(b) => println!("support kernels: compiled in {:.0} ms", b.ms),
        Err(e) => {
            bad += 1;
            println!("support kernels: COMPILE FAILED\n{e}");
        }
    }
    println!(
        "{:<18} {:<15} {:<12} {:>5} {:>6} {:>6} {:>7} {:>8}  warnings",
        "kind", "config", "variant", "regs", "spill", "stack", "smem", "ms"
    );
    for (_, kind) in selected(&kinds, &args.kinds) {
        let ir = kind.ir();
        for (cname, cfg) in selected(&cfgs, &args.configs) {
            let (pm, pn, pk) = args.problem;
            if let Err(why) = cfg
                .validate(&ir)
                .and_then(|_| Wgmma.accepts(cfg, &ir, Problem::new(pm, pn, pk)))
            {
                println!("{:<18} {:<15} skipped: {why}", kind.name, cname);
                continue;
            }
            let variants: &[Variant] = if args.variants { &Variant::ALL } else { &[Variant::Full] };
            for &v in variants {
                let src = wgmma::emit_variant(&ir, v);
                let opts = nvrtc::options(nvrtc::SM90A, &defines(cfg, &ir, args.problem, args.watchdog));
                match nvrtc::compile(&src, &ir.symbol(), &opts) {
                    Ok(b) => {
                        let p = nvrtc::Ptxas::parse(&b.log);
                        let warn: Vec<&str> = p.warnings.iter().map(|s| s.as_str()).collect();
                        println!(
                            "{:<18} {:<15} {:<12} {:>5} {:>6} {:>6} {:>7} {:>8.0}  {}",
                            kind.name,
                            cname,
                            v.name(),
                            p.registers.map(|r| r.to_string()).unwrap_or("?".into()),
                            p.spills(),
                            p.stack.unwrap_or(0),
                            cfg.smem_bytes(kind.dtype),
                            b.ms,
                            warn.join(" | ")
                        );
                        if p.spills() > 0 || p.stack.unwrap_or(0) > 0 || !p.warnings.is_empty() {
                            bad += 1;
                        }
                        if let Some(d) = &args.dump {
                            let stem = format!("{d}/{}.{cname}.{}", kind.name, v.name());
                            let header = format!("// nvrtc {}\n", opts.join(" "));
                            std::fs::write(format!("{stem}.cu"), header + &src).unwrap();
                            std::fs::write(format!("{stem}.cubin"), &b.cubin).unwrap();
                            std::fs::write(format!("{stem}.log"), &b.log).unwrap();
                        }
                    }
                    Err(e) => {
                        bad += 1;
                        println!("{:<18} {:<15} {:<12} COMPILE FAILED\n{e}", kind.name, cname, v.name());
                    }
                }
            }
        }
    }
    println!("{bad} compiles with spills, stack, warnings or errors");
    (bad > 0) as i32
}

/// A compiled kernel ready to launch.
struct Kernel {
    _module: gpu::Module,
    f: cudarc::driver::sys::CUfunction,
    smem: u32,
    threads: u32,
    regs: i32,
    local: i32,
}

fn build_kernel(ir: &GemmIr, cfg: &WgmmaTile, v: Variant, defs: &[(String, u32)]) -> Res<Kernel> {
    let src = wgmma::emit_variant(ir, v);
    let opts = nvrtc::options(nvrtc::SM90A, defs);
    let b = nvrtc::compile(&src, &ir.symbol(), &opts)?;
    let p = nvrtc::Ptxas::parse(&b.log);
    if !p.warnings.is_empty() || p.spills() > 0 {
        println!(
            "  note: {} {:?}: spills {} warnings {:?}",
            ir.symbol(),
            cfg,
            p.spills(),
            p.warnings
        );
    }
    let module = gpu::Module::load(&b.cubin)?;
    let f = module.func(&ir.symbol())?;
    let smem = cfg.smem_bytes(ir.ab_dtype);
    gpu::set_smem(f, smem)?;
    use cudarc::driver::sys::CUfunction_attribute as FA;
    Ok(Kernel {
        regs: gpu::func_attr(f, FA::CU_FUNC_ATTRIBUTE_NUM_REGS),
        local: gpu::func_attr(f, FA::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES),
        _module: module,
        f,
        smem,
        threads: cfg.threads(),
    })
}

struct Support {
    _m: gpu::Module,
    fill16: cudarc::driver::sys::CUfunction,
    epi: cudarc::driver::sys::CUfunction,
    strict: cudarc::driver::sys::CUfunction,
    absmax: cudarc::driver::sys::CUfunction,
    compare: cudarc::driver::sys::CUfunction,
    bitsdiff: cudarc::driver::sys::CUfunction,
}

fn grid_for(n: usize) -> u32 {
    n.div_ceil(256).clamp(1, 132 * 16) as u32
}

macro_rules! args {
    ($($x:expr),* $(,)?) => { [$(&$x as *const _ as *mut c_void),*] };
}

impl Support {
    fn new() -> Res<Support> {
        let b = nvrtc::compile(
            support::SOURCE,
            "wgmma_probe_support",
            &nvrtc::options(nvrtc::SM90, &[]),
        )?;
        let m = gpu::Module::load(&b.cubin)?;
        Ok(Support {
            fill16: m.func("sp_fill16")?,
            epi: m.func("sp_epi")?,
            strict: m.func("sp_strict")?,
            absmax: m.func("sp_absmax")?,
            compare: m.func("sp_compare")?,
            bitsdiff: m.func("sp_bitsdiff")?,
            _m: m,
        })
    }
    fn fill(&self, buf: &DevBuf, n: usize, seed: u32, bf16: bool) -> Res<()> {
        let (p, nn, bf) = (buf.ptr, n as u64, bf16 as i32);
        gpu::launch(self.fill16, grid_for(n), 256, 0, &mut args![p, nn, seed, bf])
    }
}

/// The scalar of the ColResSilu kinds.
const SCALE: f32 = 0.5;

/// Row-major `m × n` f32 reference in `ops.refb` for `kind`: cuBLAS, then the epilogue.
fn reference(sp: &Support, blas: &gpu::Blas, kind: &Kind, shape: (usize, usize, usize), ops: &Operands) -> Res<()> {
    let (m, n, k) = shape;
    let bf = kind.dtype == DType::Bf16;
    blas.gemm(
        m,
        n,
        k,
        ops.a.ptr,
        kind.a == Layout::RowMajor,
        ops.b.ptr,
        kind.b == Layout::RowMajor,
        bf,
        ops.refb.ptr,
        cudarc::cublas::sys::cudaDataType::CUDA_R_32F,
    )?;
    if kind.epi != Epi::None {
        let v = if kind.epi == Epi::ColResSilu {
            ops.col.ptr
        } else {
            ops.bias.ptr
        };
        let (r, res, mm, nn, bfi, w, sc) = (
            ops.refb.ptr,
            ops.res.ptr,
            m as i32,
            n as i32,
            bf as i32,
            kind.epi.which(),
            SCALE,
        );
        gpu::launch(
            sp.epi,
            grid_for(m * n),
            256,
            0,
            &mut args![r, v, res, mm, nn, bfi, w, sc],
        )?;
    }
    Ok(())
}

fn median(mut v: Vec<f32>) -> f32 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Median time in µs of `f` under the harness protocol.
fn time_us(flush: &DevBuf, warmup: usize, reps: usize, mut f: impl FnMut() -> Res<()>) -> Res<f32> {
    for _ in 0..warmup {
        flush.memset(0)?;
        f()?;
    }
    gpu::sync_or_die(30.0, "warm-up")?;
    let ev: Vec<(gpu::Event, gpu::Event)> = (0..reps)
        .map(|_| Ok((gpu::Event::new()?, gpu::Event::new()?)))
        .collect::<Res<_>>()?;
    for (i, (s, e)) in ev.iter().enumerate() {
        flush.memset(i as u8)?;
        s.record()?;
        f()?;
        e.record()?;
    }
    gpu::sync_or_die(60.0, "timed runs")?;
    let ms: Vec<f32> = ev.iter().map(|(s, e)| e.ms_since(s)).collect::<Res<_>>()?;
    Ok(median(ms) * 1e3)
}

/// Median times in µs of each of `fns`, alternated run by run (each run after its own
/// L2 flush), so that all see the same clock and temperature drift.
fn time_multi_us(
    flush: &DevBuf,
    warmup: usize,
    reps: usize,
    fns: &mut [Box<dyn FnMut() -> Res<()> + '_>],
) -> Res<Vec<f32>> {
    for _ in 0..warmup {
        for f in fns.iter_mut() {
            flush.memset(0)?;
            f()?;
        }
    }
    gpu::sync_or_die(30.0, "warm-up")?;
    let ev: Vec<Vec<(gpu::Event, gpu::Event)>> = (0..reps)
        .map(|_| {
            (0..fns.len())
                .map(|_| Ok((gpu::Event::new()?, gpu::Event::new()?)))
                .collect()
        })
        .collect::<Res<_>>()?;
    for (i, e) in ev.iter().enumerate() {
        for (j, f) in fns.iter_mut().enumerate() {
            flush.memset((i * 7 + j) as u8)?;
            e[j].0.record()?;
            f()?;
            e[j].1.record()?;
        }
    }
    gpu::sync_or_die(60.0, "timed runs")?;
    (0..fns.len())
        .map(|j| {
            let ms: Vec<f32> = ev.iter().map(|e| e[j].1.ms_since(&e[j].0)).collect::<Res<_>>()?;
            Ok(median(ms) * 1e3)
        })
        .collect()
}

struct Operands {
    a: DevBuf,
    b: DevBuf,
    bias: DevBuf,
    col: DevBuf,
    res: DevBuf,
    out: DevBuf,
    out2: DevBuf,
    refb: DevBuf,
    stats: DevBuf,
}

fn launch_ours(
    kern: &Kernel,
    kind: &Kind,
    cfg: &WgmmaTile,
    shape: (usize, usize, usize),
    ops: &Operands,
    out: u64,
    sm: u32,
) -> Res<()> {
    let (m, n, k) = shape;
    let dt = match kind.dtype {
        DType::F16 => tma::TmaDtype::F16,
        _ => tma::TmaDtype::Bf16,
    };
    let a_k = kind.a == Layout::RowMajor;
    let b_k = kind.b == Layout::ColMajor;
    let (amap, bmap) = if wgmma::tma_ok(&kind.ir(), Problem::new(m, n, k)) {
        (
            tma::operand_map(ops.a.ptr, dt, a_k, m as u64, k as u64, cfg.bm, cfg.bk).map_err(|e| e.to_string())?,
            tma::operand_map(ops.b.ptr, dt, b_k, n as u64, k as u64, cfg.bn, cfg.bk).map_err(|e| e.to_string())?,
        )
    } else {
        // The cp.async producer reads no map: placeholders, as Wgmma::tensor_maps gives.
        let ph = |base| {
            tma::encode_2d(&tma::Tma2d {
                base,
                dtype: dt,
                dims: [8, 1],
                pitch: 16,
                box_dim: [8, 1],
                swizzle: tma::TmaSwizzle::None,
                batch: None,
            })
            .map_err(|e| e.to_string())
        };
        (ph(ops.a.ptr)?, ph(ops.b.ptr)?)
    };
    let (mm, nn, kk) = (m as i32, n as i32, k as i32);
    let (pa, pb, pbias, pcol, pres, sc) = (ops.a.ptr, ops.b.ptr, ops.bias.ptr, ops.col.ptr, ops.res.ptr, SCALE);
    let grid = cfg.grid(m, n, 1, sm);
    let (f, t, sm_b) = (kern.f, kern.threads, kern.smem);
    // The views' geometry and the batch (`kernel_params`): packed operands at their
    // buffers' starts, the output and the residual row-major, one product.
    let (ldo, lda, ldb) = (n as i32, if a_k { k } else { m } as i32, if b_k { k } else { n } as i32);
    let (z, one) = (0i64, 1i32);
    match kind.epi {
        Epi::None => gpu::launch(
            f,
            grid,
            t,
            sm_b,
            &mut args![amap, bmap, mm, nn, kk, out, pa, pb, ldo, z, lda, z, ldb, z, z, z, z, one],
        ),
        Epi::BiasRelu | Epi::BiasGelu => gpu::launch(
            f,
            grid,
            t,
            sm_b,
            &mut args![amap, bmap, mm, nn, kk, out, pa, pb, pbias, ldo, z, lda, z, ldb, z, z, z, z, z, z, one],
        ),
        Epi::ColResSilu => gpu::launch(
            f,
            grid,
            t,
            sm_b,
            &mut args![
                amap, bmap, mm, nn, kk, out, pa, pb, pcol, pres, sc, ldo, z, lda, z, ldb, z, z, ldo, z, z, z, z, z, z,
                one
            ],
        ),
    }
}

#[derive(Default, Clone, Copy)]
struct Check {
    rel: f32,
    nans: u32,
    diff_bytes: u32,
    /// Elements off the test suite's per-element tolerance.
    strict: u32,
}

fn check(
    sp: &Support,
    kind: &Kind,
    shape: (usize, usize, usize),
    ops: &Operands,
    mut run: impl FnMut(u64) -> Res<()>,
    label: &str,
) -> Res<Check> {
    let (m, n, _) = shape;
    let osz = kind.out.size() as usize;
    let bytes = m * n * osz;
    ops.stats.memset(0)?;
    let (r, st, mn) = (ops.refb.ptr, ops.stats.ptr, (m * n) as u64);
    gpu::launch(sp.absmax, grid_for(m * n), 256, 0, &mut args![r, mn, st])?;
    ops.out.memset(0xFF)?;
    run(ops.out.ptr)?;
    gpu::sync_or_die(20.0, label)?;
    let odt: i32 = match kind.out {
        DType::F32 => 0,
        DType::F16 => 1,
        DType::Bf16 => 2,
    };
    let (o, mm, nn, col) = (
        ops.out.ptr,
        m as i32,
        n as i32,
        (kind.out_layout == Layout::ColMajor) as i32,
    );
    gpu::launch(
        sp.compare,
        grid_for(m * n),
        256,
        0,
        &mut args![o, odt, r, mm, nn, col, st],
    )?;
    let floor = 1e-5f32 * ((shape.2 as f32).sqrt() + 1.0);
    gpu::launch(
        sp.strict,
        grid_for(m * n),
        256,
        0,
        &mut args![o, odt, r, mm, nn, col, floor, st],
    )?;
    ops.out2.memset(0xFF)?;
    run(ops.out2.ptr)?;
    gpu::sync_or_die(20.0, label)?;
    let (o2, nb) = (ops.out2.ptr, bytes as u64);
    gpu::launch(sp.bitsdiff, grid_for(bytes), 256, 0, &mut args![o, o2, nb, st])?;
    let s: Vec<u32> = ops.stats.download(5)?;
    let maxref = f32::from_bits(s[0]);
    let maxerr = f32::from_bits(s[1]);
    Ok(Check {
        rel: if maxref > 0.0 { maxerr / maxref } else { maxerr },
        nans: s[2],
        diff_bytes: s[3],
        strict: s[4],
    })
}

fn tol(kind: &Kind) -> f32 {
    match (kind.dtype, kind.out) {
        (_, DType::F32) => 2e-3,
        (DType::F16, _) => 2e-3,
        _ => 1e-2,
    }
}

fn gpu_main(args: &Args) -> Res<i32> {
    let g = gpu::Gpu::new()?;
    let blas = gpu::Blas::new()?;
    println!(
        "device: {} (sm_{}{}), {} SMs, {} B smem opt-in; cuBLAS {}",
        g.name,
        g.cc.0,
        g.cc.1,
        g.sm_count,
        g.smem_optin,
        blas.version()
    );
    let sp = Support::new()?;
    let all_kinds = kinds();
    let all_kinds: Vec<(&'static str, Kind)> = all_kinds.into_iter().map(|k| (k.name, k)).collect();
    let sel_kinds = selected(&all_kinds, &args.kinds);
    let cfgs = configs();
    let sel_cfgs = selected(&cfgs, &args.configs);
    let flush = DevBuf::new(128 << 20)?;
    let ltl = lt::Lt::new()?;
    let mut kernels: HashMap<(String, String, Variant, String), Kernel> = HashMap::new();
    let mut failures = 0;
    let mut table: Vec<String> = Vec::new();
    let header = format!(
        "{:<20} {:<15} {:>16} {:>9} {:>9} {:>9} {:>8} {:>6} {:>6} {:>9} {:>6} {:>5} {:>5}",
        "kind",
        "config",
        "shape",
        "ours_us",
        "cublas_us",
        "lt_us",
        "TFLOP/s",
        "x_blas",
        "x_lt",
        "max_err",
        "strict",
        "nan",
        "det"
    );
    println!("{header}");
    for &shape in &args.shapes {
        let (m, n, k) = shape;
        let flops = 2.0 * m as f64 * n as f64 * k as f64;
        for dtype in [DType::Bf16, DType::F16] {
            let kinds_here: Vec<&Kind> = sel_kinds.iter().map(|(_, k)| k).filter(|k| k.dtype == dtype).collect();
            if kinds_here.is_empty() {
                continue;
            }
            let max_out = kinds_here.iter().map(|k| k.out.size()).max().unwrap() as usize;
            let ops = Operands {
                a: DevBuf::new(m * k * 2)?,
                b: DevBuf::new(k * n * 2)?,
                bias: DevBuf::new(n * 2)?,
                col: DevBuf::new(m * 2)?,
                res: DevBuf::new(m * n * 2)?,
                out: DevBuf::new(m * n * max_out)?,
                out2: DevBuf::new(m * n * max_out)?,
                refb: DevBuf::new(m * n * 4)?,
                stats: DevBuf::new(64)?,
            };
            let bf = dtype == DType::Bf16;
            sp.fill(&ops.a, m * k, 1, bf)?;
            sp.fill(&ops.b, k * n, 2, bf)?;
            sp.fill(&ops.bias, n, 3, bf)?;
            sp.fill(&ops.col, m, 4, bf)?;
            sp.fill(&ops.res, m * n, 5, bf)?;
            for kind in kinds_here {
                let shape_s = format!("{m}x{n}x{k}");
                let ir = kind.ir();
                let p = Problem::new(m, n, k);
                if let Err(why) = Wgmma.accepts(&WgmmaTile::new(64, 64, 4, 1), &ir, p) {
                    println!("{:<20} {:<15} {:>16} skipped: {why}", kind.name, "-", shape_s);
                    continue;
                }
                reference(&sp, &blas, kind, shape, &ops)?;
                let timed = args.time && args.time_kinds.iter().any(|t| t == kind.name || t == "all") && flops >= 1e9;
                // cuBLAS (same layouts and output type, plain GEMM) is timed in every row,
                // cuBLASLt's fused bias epilogue in the TN bias rows, run for run
                // alternating with ours.
                let (a_row, b_row) = (kind.a == Layout::RowMajor, kind.b == Layout::RowMajor);
                let cty = match kind.out {
                    DType::F32 => cudarc::cublas::sys::cudaDataType::CUDA_R_32F,
                    DType::F16 => cudarc::cublas::sys::cudaDataType::CUDA_R_16F,
                    DType::Bf16 => cudarc::cublas::sys::cudaDataType::CUDA_R_16BF,
                };
                let o2 = ops.out2.ptr;
                let lt_plan = if timed
                    && matches!(kind.epi, Epi::BiasRelu | Epi::BiasGelu)
                    && a_row
                    && !b_row
                    && kind.out == kind.dtype
                    && kind.out_layout == Layout::RowMajor
                {
                    match ltl.plan(m, n, k, bf, kind.epi == Epi::BiasGelu, ops.bias.ptr) {
                        Ok(pl) => Some(pl),
                        Err(e) => {
                            println!("  note: no cuBLASLt baseline for {} {m}x{n}x{k}: {e}", kind.name);
                            None
                        }
                    }
                } else {
                    None
                };
                for (cname, cfg) in &sel_cfgs {
                    if let Err(why) = cfg.validate(&ir).and_then(|_| Wgmma.accepts(cfg, &ir, p)) {
                        println!("{:<20} {:<15} {:>16} skipped: {why}", kind.name, cname, shape_s);
                        continue;
                    }
                    let defs = defines(cfg, &ir, shape, args.watchdog);
                    let dkey = format!("{defs:?}");
                    let key = (kind.name.to_string(), cname.to_string(), Variant::Full, dkey.clone());
                    if !kernels.contains_key(&key) {
                        let kern = build_kernel(&ir, cfg, Variant::Full, &defs)?;
                        println!(
                            "  built {} {}{}: {} regs, {} B local, {} B smem",
                            kind.name,
                            cname,
                            if wgmma::tma_ok(&ir, p) { "" } else { " (cp.async)" },
                            kern.regs,
                            kern.local,
                            kern.smem
                        );
                        kernels.insert(key.clone(), kern);
                    }
                    let kern = &kernels[&key];
                    let label = format!("{} {} {}", kind.name, cname, shape_s);
                    let c = check(
                        &sp,
                        kind,
                        shape,
                        &ops,
                        |o| launch_ours(kern, kind, cfg, shape, &ops, o, g.sm_count),
                        &label,
                    )?;
                    let ok = c.rel <= tol(kind) && c.nans == 0 && c.diff_bytes == 0;
                    if !ok {
                        failures += 1;
                    }
                    let (mut ours_us, mut cublas_us, mut lt_us) = (f32::NAN, f32::NAN, f32::NAN);
                    if timed {
                        let o = ops.out.ptr;
                        let mut fns: Vec<Box<dyn FnMut() -> Res<()> + '_>> = vec![
                            Box::new(|| launch_ours(kern, kind, cfg, shape, &ops, o, g.sm_count)),
                            Box::new(|| blas.gemm(m, n, k, ops.a.ptr, a_row, ops.b.ptr, b_row, bf, o2, cty)),
                        ];
                        if let Some(pl) = &lt_plan {
                            fns.push(Box::new(|| ltl.run(pl, ops.a.ptr, ops.b.ptr, o2)));
                        }
                        let t = time_multi_us(&flush, args.warmup, args.reps, &mut fns)?;
                        ours_us = t[0];
                        cublas_us = t[1];
                        lt_us = t.get(2).copied().unwrap_or(f32::NAN);
                    }
                    let row = format!(
                        "{:<20} {:<15} {:>16} {:>9.1} {:>9.1} {:>9.1} {:>8.1} {:>6.3} {:>6.3} {:>9.2e} {:>6} {:>5} {:>5}{}",
                        kind.name,
                        cname,
                        shape_s,
                        ours_us,
                        cublas_us,
                        lt_us,
                        flops / (ours_us as f64 * 1e-6) / 1e12,
                        cublas_us / ours_us,
                        lt_us / ours_us,
                        c.rel,
                        c.strict,
                        c.nans,
                        if c.diff_bytes == 0 { "same" } else { "DIFF" },
                        if ok { "" } else { "  FAIL" }
                    );
                    println!("{row}");
                    table.push(row);
                    if timed && args.variants && cname == &sel_cfgs[0].0 && flops >= 1e11 {
                        for v in [Variant::LoadOnly, Variant::ComputeOnly, Variant::NoEpilogue] {
                            let vkey = (kind.name.to_string(), cname.to_string(), v, dkey.clone());
                            if !kernels.contains_key(&vkey) {
                                kernels.insert(vkey.clone(), build_kernel(&ir, cfg, v, &defs)?);
                            }
                            let vk = &kernels[&vkey];
                            let o = ops.out.ptr;
                            let us = time_us(&flush, args.warmup, args.reps, || {
                                launch_ours(vk, kind, cfg, shape, &ops, o, g.sm_count)
                            })?;
                            let row = format!(
                                "{:<18} {:<15} {:>16} {:>10.1} {:>10} {:>8.1}  variant {}",
                                kind.name,
                                cname,
                                shape_s,
                                us,
                                "",
                                flops / (us as f64 * 1e-6) / 1e12,
                                v.name()
                            );
                            println!("{row}");
                            table.push(row);
                        }
                    }
                }
            }
        }
    }
    println!("\n== summary ({failures} failures) ==\n{header}");
    for r in &table {
        println!("{r}");
    }
    Ok((failures > 0) as i32)
}

fn main() {
    let args = parse_args();
    EXTRA.set(args.extra.clone()).unwrap();
    let code = if args.compile_only {
        compile_only(&args)
    } else {
        match gpu_main(&args) {
            Ok(c) => c,
            Err(e) => {
                println!("ERROR: {e}");
                eprintln!("ERROR: {e}");
                4
            }
        }
    };
    std::process::exit(code);
}
