//! Whether the planner would keep hand-written tile configs for a target, without the
//! target's device: what a `--config` of `crossgemm tune`/`bench` must pass before a
//! device run spends minutes on it.
//!
//! ```text
//! cargo run -p gemm-core --example check_config -- [--target h200] [--dtype f16]
//!     [--epilogue bias_relu] [--w-layout col|row] [--shape 4096x4096x128] [--dump DIR]
//!     CONFIG_JSON...
//! ```
//!
//! Each config (as the CLI and the tuning records spell it, e.g.
//! `{"family":"wgmma","bm":128,...}`) is checked against the target's rules for the
//! built-in kernel of that dtype and epilogue (x row-major, w column-major or with
//! `--w-layout row` row-major, a bias row as `crossgemm tune` runs it): `ok` with its
//! description, or the rule it breaks and why.
//! With `--dump DIR` each kept config's CUDA source is written to `DIR/cfgN.cu` with the
//! `scripts/nvrtc_check.py` command that compiles it under the config's defines for the
//! shape (ptxas registers and spills, no GPU needed). Exit status 1 when any config is
//! rejected or does not parse.

use gemm_core::family::{PlanCtx, Problem};
use gemm_core::ir::{AccMode, DType, EpOp, Func, GemmIr, Layout, Param};
use gemm_core::target::{Targets, BUILTIN_TARGETS};
use gemm_core::{codegen::Variant, TileConfig};
use std::path::PathBuf;
use std::process::ExitCode;

struct Args {
    target: String,
    dtype: String,
    epilogue: String,
    w_layout: Layout,
    shape: (usize, usize, usize),
    dump: Option<PathBuf>,
    configs: Vec<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        target: "h200".into(),
        dtype: "f16".into(),
        epilogue: "bias_relu".into(),
        w_layout: Layout::ColMajor,
        shape: (4096, 4096, 4096),
        dump: None,
        configs: vec![],
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--target" => a.target = value("--target")?,
            "--dtype" => a.dtype = value("--dtype")?,
            "--epilogue" => a.epilogue = value("--epilogue")?,
            "--dump" => a.dump = Some(value("--dump")?.into()),
            "--w-layout" => {
                a.w_layout = match value("--w-layout")?.as_str() {
                    "col" => Layout::ColMajor,
                    "row" => Layout::RowMajor,
                    other => return Err(format!("--w-layout takes col or row, not `{other}`")),
                }
            }
            "--shape" => {
                let s = value("--shape")?;
                let d: Vec<usize> = s
                    .split('x')
                    .map(|v| v.parse().map_err(|_| format!("bad shape `{s}`")))
                    .collect::<Result<_, _>>()?;
                let [m, n, k] = d[..] else {
                    return Err(format!("shape `{s}` is not MxNxK"));
                };
                a.shape = (m, n, k);
            }
            _ if arg.starts_with("--") => return Err(format!("unknown option `{arg}`")),
            _ => a.configs.push(arg),
        }
    }
    if a.configs.is_empty() {
        return Err("no config given".into());
    }
    Ok(a)
}

/// The CLI's built-in kernel: `epi(x * w [+ bias])`, x row-major, w in `w_layout`.
fn builtin_ir(dtype: &str, epilogue: &str, w_layout: Layout) -> Result<GemmIr, String> {
    let (dt, acc) = match dtype {
        "f16" => (DType::F16, AccMode::F32),
        "bf16" => (DType::Bf16, AccMode::F32),
        "f32" => (DType::F32, AccMode::F32),
        "tf32" => (DType::F32, AccMode::Tf32),
        // The kernel that runs the split copies (K-major both: w column-major).
        "tf32x3" => (DType::F32, AccMode::Tf32x3),
        _ => return Err(format!("unknown dtype `{dtype}` (f16, bf16, f32, tf32, tf32x3)")),
    };
    let mut ir = GemmIr::matmul(&format!("{dtype}_{epilogue}"), dt, acc, Layout::RowMajor, w_layout);
    let act = match epilogue {
        "none" => return Ok(ir),
        "bias" => None,
        "bias_relu" => Some(Func::Relu),
        "bias_gelu" => Some(Func::Gelu),
        _ => {
            return Err(format!(
                "unknown epilogue `{epilogue}` (none, bias, bias_relu, bias_gelu)"
            ))
        }
    };
    ir.params.push(Param::row("bias", dt));
    ir.epilogue = vec![EpOp::Acc, EpOp::Param(2), EpOp::Add];
    ir.epilogue.extend(act.map(EpOp::Call));
    Ok(ir)
}

fn run(a: &Args) -> Result<bool, String> {
    let targets = Targets::parse(BUILTIN_TARGETS).map_err(|e| e.to_string())?;
    let target = targets
        .get(&a.target)
        .ok_or(format!("no target `{}` in targets.toml", a.target))?;
    let ir = builtin_ir(&a.dtype, &a.epilogue, a.w_layout)?;
    let cx = PlanCtx::new(target, &ir);
    let problem = Problem::new(a.shape.0, a.shape.1, a.shape.2);
    if let Some(dir) = &a.dump {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mut all_ok = true;
    for (i, text) in a.configs.iter().enumerate() {
        let cfg = match TileConfig::from_json_strict(text) {
            Ok(c) => c,
            Err(e) => {
                println!("cfg{i}: does not parse: {e}\n  {text}");
                all_ok = false;
                continue;
            }
        };
        if let Err((rule, why)) = cfg.check(&cx) {
            println!("cfg{i}: REJECTED by `{rule}`: {why}\n  {cfg}");
            all_ok = false;
            continue;
        }
        println!("cfg{i}: ok  {cfg}");
        if let Some(dir) = &a.dump {
            let path = dir.join(format!("cfg{i}.cu"));
            let src = cfg.family_id().emit(&ir, target.backend, Variant::Full);
            std::fs::write(&path, src).map_err(|e| format!("{}: {e}", path.display()))?;
            let defines: Vec<String> = cfg
                .owned_defines(&ir, target.backend, problem)
                .into_iter()
                .map(|(k, v)| format!("-D {k}={v}"))
                .collect();
            println!(
                "  scripts/nvrtc_check.py {} --arch sm_{} {}",
                path.display(),
                arch(target),
                defines.join(" ")
            );
        }
    }
    Ok(all_ok)
}

/// The NVRTC architecture of a CUDA target (`90a` for wgmma targets).
fn arch(target: &gemm_core::TargetSpec) -> String {
    let cc = target.compute_capability.unwrap_or(80);
    if cc >= 90 {
        format!("{cc}a")
    } else {
        cc.to_string()
    }
}

fn main() -> ExitCode {
    match parse_args().and_then(|a| run(&a)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("check_config: {e}");
            ExitCode::from(2)
        }
    }
}
