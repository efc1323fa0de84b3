//! Snapshot tests: pin the generated CUDA / OpenCL sources and the planner's output for a
//! handful of representative IRs, so that any codegen or planner change shows up as a
//! reviewed diff of `tests/snapshots/`.
//!
//! Each case writes, under `gemm-core/tests/snapshots/`, per pinned target (`h200`,
//! `opencl_cpu`) the plan (`<case>.<target>.plan.json`) and one source per kernel family of
//! the plan (`<case>.<target>.<family>.cu` / `.cl`).
//!
//! To (re)generate them after an intended change, run
//!
//! ```text
//! CROSSGEMM_BLESS=1 cargo test -p gemm-core --test snapshots
//! ```
//!
//! and review the resulting `git diff gemm-core/tests/snapshots/`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use gemm_core::plan::TuneSpace;
use gemm_core::target::{Targets, BUILTIN_TARGETS};
use gemm_core::{plan_target, AccMode, DType, EpOp, Func, GemmIr, Layout, Param, TargetSpec};

const BLESS_VAR: &str = "CROSSGEMM_BLESS";
/// The CUDA target whose source and plan are pinned.
const CUDA_TARGET: &str = "h200";
/// The OpenCL target whose source and plan are pinned.
const OPENCL_TARGET: &str = "opencl_cpu";
/// Lines of context around a difference.
const CONTEXT: usize = 3;
/// At most this many removed / added lines are shown per side.
const MAX_SHOWN: usize = 12;

// ---------------------------------------------------------------------------------------
// The pinned IRs
// ---------------------------------------------------------------------------------------

/// `relu(a @ b + bias)`, f16, B column-major, bias a row (per-column) vector.
fn f16_bias_relu_bcol() -> GemmIr {
    GemmIr::matmul(
        "f16_bias_relu",
        DType::F16,
        AccMode::F32,
        Layout::RowMajor,
        Layout::ColMajor,
    )
    .with_epilogue(
        [Param::row("bias", DType::F16)],
        vec![EpOp::Acc, EpOp::Param(2), EpOp::Add, EpOp::Call(Func::Relu)],
    )
}

/// `gelu_erf(a.t() @ b * scale)`, bf16, A stored K×M and used transposed, scale a
/// per-row (Col) vector, output column-major.
fn bf16_at_scale_gelu_erf_outcol() -> GemmIr {
    let ir = GemmIr::matmul(
        "bf16_at_scale_gelu_erf",
        DType::Bf16,
        AccMode::F32,
        Layout::RowMajor,
        Layout::RowMajor,
    )
    .with_epilogue(
        [Param::col("scale", DType::Bf16)],
        vec![EpOp::Acc, EpOp::Param(2), EpOp::Mul, EpOp::Call(Func::GeluErf)],
    )
    .with_out(DType::Bf16, Layout::ColMajor);
    GemmIr { a_t: true, ..ir }
}

/// `a @ b + residual`, f32 operands accumulated as tf32, residual a full matrix.
fn f32_tf32_residual() -> GemmIr {
    GemmIr::matmul(
        "f32_tf32_residual",
        DType::F32,
        AccMode::Tf32,
        Layout::RowMajor,
        Layout::RowMajor,
    )
    .with_epilogue(
        [Param::matrix("residual", DType::F32, Layout::RowMajor)],
        vec![EpOp::Acc, EpOp::Param(2), EpOp::Add],
    )
}

/// Plain `a @ b` in full f32: the SIMT FMA path everywhere.
fn f32_plain() -> GemmIr {
    GemmIr::matmul(
        "f32_plain",
        DType::F32,
        AccMode::F32,
        Layout::RowMajor,
        Layout::RowMajor,
    )
}

/// `clamp(leaky_relu(a @ b * alpha, 0.1), -6.0, 6.0)`: f16, A and B column-major, a
/// scalar parameter, literals and a negation.
fn f16_colcol_leaky_clamp() -> GemmIr {
    GemmIr::matmul(
        "f16_colcol_leaky_clamp",
        DType::F16,
        AccMode::F32,
        Layout::ColMajor,
        Layout::ColMajor,
    )
    .with_epilogue(
        [Param::scalar("alpha")],
        vec![
            EpOp::Acc,
            EpOp::Param(2),
            EpOp::Mul,
            EpOp::Lit(0.1),
            EpOp::Call(Func::LeakyRelu),
            EpOp::Lit(6.0),
            EpOp::Neg,
            EpOp::Lit(6.0),
            EpOp::Call(Func::Clamp),
        ],
    )
}

/// `silu(a @ b.t() - shift) / 2.0`, f16 in, f32 out: B stored N×K and used transposed,
/// a row vector, subtraction, division and a mixed output dtype.
fn f16_bt_silu_f32out() -> GemmIr {
    let ir = GemmIr::matmul(
        "f16_bt_silu_f32out",
        DType::F16,
        AccMode::F32,
        Layout::RowMajor,
        Layout::RowMajor,
    )
    .with_epilogue(
        [Param::row("shift", DType::F32)],
        vec![
            EpOp::Acc,
            EpOp::Param(2),
            EpOp::Sub,
            EpOp::Call(Func::Silu),
            EpOp::Lit(2.0),
            EpOp::Div,
        ],
    )
    .with_out(DType::F32, Layout::RowMajor);
    GemmIr { b_t: true, ..ir }
}

// ---------------------------------------------------------------------------------------
// Snapshot machinery
// ---------------------------------------------------------------------------------------

fn snapshot_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("snapshots")
}

fn blessing() -> bool {
    std::env::var(BLESS_VAR).map(|v| v == "1").unwrap_or(false)
}

fn targets() -> Targets {
    Targets::parse(BUILTIN_TARGETS).expect("built-in targets.toml parses")
}

fn spec<'a>(t: &'a Targets, name: &str) -> &'a TargetSpec {
    t.get(name)
        .unwrap_or_else(|| panic!("built-in target `{name}` is missing"))
}

/// Everything pinned for one IR: (file name, contents). Per pinned target, the plan
/// (`<case>.<target>.plan.json`) and one source per family of the plan
/// (`<case>.<target>.<family>.cu` or `.cl`).
fn render(case: &str, ir: &GemmIr) -> Vec<(String, String)> {
    let t = targets();
    let mut out = Vec::new();
    for (target, ext) in [(CUDA_TARGET, "cu"), (OPENCL_TARGET, "cl")] {
        let s = spec(&t, target);
        let plan = plan_target(ir, s, &TuneSpace::default());
        let mut j = serde_json::to_string_pretty(&plan).expect("plan serialises");
        j.push('\n');
        for (family, source) in plan.sources(ir, s.backend) {
            out.push((format!("{case}.{target}.{family}.{ext}"), source));
        }
        out.push((format!("{case}.{target}.plan.json"), j));
    }
    out
}

/// Compares (or, with `CROSSGEMM_BLESS=1`, writes) one snapshot; returns a failure
/// message, if any.
fn check_one(file: &str, actual: &str) -> Option<String> {
    let path = snapshot_dir().join(file);
    if blessing() {
        std::fs::create_dir_all(snapshot_dir()).expect("create snapshot dir");
        let same = std::fs::read_to_string(&path).map(|old| old == actual).unwrap_or(false);
        if !same {
            std::fs::write(&path, actual).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        }
        return None;
    }
    match std::fs::read_to_string(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(format!(
            "snapshot {} does not exist; create it with\n    {BLESS_VAR}=1 cargo test -p gemm-core --test snapshots\nand review the new file",
            path.display()
        )),
        Err(e) => Some(format!("cannot read snapshot {}: {e}", path.display())),
        Ok(expected) if expected == actual => None,
        Ok(expected) => Some(format!(
            "snapshot {} differs from the generated output (- snapshot, + generated):\n{}\nIf the change is intended, re-bless with\n    {BLESS_VAR}=1 cargo test -p gemm-core --test snapshots\nand review `git diff gemm-core/tests/snapshots/`",
            path.display(),
            line_diff(&expected, actual)
        )),
    }
}

/// A small unified-style diff of the first differing region: the common prefix and
/// suffix (by line) are trimmed, and the middle is shown as `-`/`+` lines with a few
/// lines of context, capped at [`MAX_SHOWN`] lines per side.
fn line_diff(expected: &str, actual: &str) -> String {
    let e: Vec<&str> = expected.split('\n').collect();
    let a: Vec<&str> = actual.split('\n').collect();
    let prefix = e.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let max_suffix = e.len().min(a.len()) - prefix;
    let suffix = e
        .iter()
        .rev()
        .zip(a.iter().rev())
        .take(max_suffix)
        .take_while(|(x, y)| x == y)
        .count();
    let (e_mid, a_mid) = (&e[prefix..e.len() - suffix], &a[prefix..a.len() - suffix]);
    let ctx_start = prefix.saturating_sub(CONTEXT);
    let ctx_end_e = (e.len() - suffix + CONTEXT).min(e.len());

    let mut out = String::new();
    let _ = writeln!(
        out,
        "@@ -{},{} +{},{} @@",
        ctx_start + 1,
        ctx_end_e - ctx_start,
        ctx_start + 1,
        (a.len() - suffix + CONTEXT).min(a.len()) - ctx_start
    );
    for l in &e[ctx_start..prefix] {
        let _ = writeln!(out, " {l}");
    }
    let show = |out: &mut String, sign: char, lines: &[&str]| {
        for l in lines.iter().take(MAX_SHOWN) {
            let _ = writeln!(out, "{sign}{l}");
        }
        if lines.len() > MAX_SHOWN {
            let _ = writeln!(out, "{sign}... ({} more lines)", lines.len() - MAX_SHOWN);
        }
    };
    show(&mut out, '-', e_mid);
    show(&mut out, '+', a_mid);
    for l in &e[e.len() - suffix..ctx_end_e] {
        let _ = writeln!(out, " {l}");
    }
    if e_mid.is_empty() && a_mid.is_empty() {
        // Equal by lines yet different as strings cannot happen with '\n' splitting,
        // but say something useful rather than print an empty hunk.
        out.push_str(" (no line-level difference found)\n");
    }
    out
}

fn check_case(case: &str, ir: GemmIr) {
    let failures: Vec<String> = render(case, &ir)
        .iter()
        .filter_map(|(file, text)| check_one(file, text))
        .collect();
    if !failures.is_empty() {
        panic!(
            "{} snapshot(s) of `{case}` failed:\n\n{}",
            failures.len(),
            failures.join("\n\n")
        );
    }
}

/// Builds one case's IR.
type Builder = fn() -> GemmIr;

/// Every case: (name, builder). The names are the snapshot file stems.
const CASES: [(&str, Builder); 6] = [
    ("f16_bias_relu_bcol", f16_bias_relu_bcol),
    ("bf16_at_scale_gelu_erf_outcol", bf16_at_scale_gelu_erf_outcol),
    ("f32_tf32_residual", f32_tf32_residual),
    ("f32_plain", f32_plain),
    ("f16_colcol_leaky_clamp", f16_colcol_leaky_clamp),
    ("f16_bt_silu_f32out", f16_bt_silu_f32out),
];

macro_rules! snapshot_tests {
    ($($test:ident => $case:literal),* $(,)?) => {$(
        #[test]
        fn $test() {
            let (_, build) = CASES.iter().find(|(n, _)| *n == $case).expect("case is listed in CASES");
            check_case($case, build());
        }
    )*};
}

snapshot_tests! {
    snapshot_f16_bias_relu_bcol => "f16_bias_relu_bcol",
    snapshot_bf16_at_scale_gelu_erf_outcol => "bf16_at_scale_gelu_erf_outcol",
    snapshot_f32_tf32_residual => "f32_tf32_residual",
    snapshot_f32_plain => "f32_plain",
    snapshot_f16_colcol_leaky_clamp => "f16_colcol_leaky_clamp",
    snapshot_f16_bt_silu_f32out => "f16_bt_silu_f32out",
}

/// Every file in `tests/snapshots/` belongs to a case: a renamed or removed case must
/// take its snapshots with it.
#[test]
fn no_stale_snapshots() {
    let expected: Vec<String> = CASES
        .iter()
        .flat_map(|(c, build)| render(c, &build()).into_iter().map(|(name, _)| name))
        .collect();
    let Ok(dir) = std::fs::read_dir(snapshot_dir()) else {
        return; // nothing blessed yet: the per-case tests say how to create them
    };
    let mut stale: Vec<String> = dir
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !expected.contains(n))
        .collect();
    stale.sort();
    assert!(
        stale.is_empty(),
        "files in {} that no case produces (delete them): {stale:?}",
        snapshot_dir().display()
    );
}

/// The line differ itself: one changed character shows as one -/+ pair in context.
#[test]
fn line_diff_shows_the_changed_line() {
    let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
    let new = "a\nb\nc\nd\nX\nf\ng\nh\n";
    let d = line_diff(old, new);
    assert!(d.contains("-e\n+X\n"), "{d}");
    assert!(d.contains(" d\n") && d.contains(" f\n"), "{d}");
    assert!(!d.contains(" a\n"), "context is limited: {d}");
    let grown = line_diff("a\n", "a\nb\n");
    assert!(grown.contains("+b\n") && !grown.contains("\n-"), "{grown}");
}
