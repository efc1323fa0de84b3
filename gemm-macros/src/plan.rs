//! Which targets a kernel is built for, and their plans and sources.

use crate::attr::Attr;
use crate::ctxt::Ctxt;
use gemm_core::plan::{plan_target, Plan};
use gemm_core::records::Records;
use gemm_core::table::{self, Seed, BUILTIN_RECORDS};
use gemm_core::target::{Instr, Targets, BUILTIN_TARGETS};
use gemm_core::{FamilyId, GemmIr, TargetSpec};
use proc_macro2::Span;
use std::path::PathBuf;

/// One planned target.
pub struct Planned {
    pub spec: TargetSpec,
    pub plan: Plan,
    /// One source per family of the plan, in the plan's order.
    pub sources: Vec<(FamilyId, String)>,
    /// The config table: the records' winners and starting points for this kernel.
    pub table: Vec<Seed>,
}

/// A build-time warning (emitted as a deprecation note at `span`) about a target: shown
/// only where the crossgemm build has the target's cargo `feature` on (the expansion
/// wraps it in that feature's `__if_<feature>!`), since feature unification may build
/// the macro with targets the user's crossgemm does not emit.
pub struct Warning {
    pub span: Span,
    pub feature: String,
    pub text: String,
}

/// Whether the cargo feature that enables a target is on in this build of the macro.
fn feature_enabled(feature: &str) -> bool {
    (feature == "opencl" && cfg!(feature = "opencl"))
        || (feature == "sm80" && cfg!(feature = "sm80"))
        || (feature == "sm90" && cfg!(feature = "sm90"))
}

/// The built-in targets plus the user crate's own targets.toml (beside its Cargo.toml),
/// and that file's path so the expansion can track it for rebuilds.
pub fn load_targets(cx: &Ctxt) -> (Targets, Option<PathBuf>) {
    let mut targets = Targets::parse(BUILTIN_TARGETS).expect("crossgemm's own targets.toml parses (tested)");
    let user = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(|d| PathBuf::from(d).join("targets.toml"))
        .filter(|p| p.is_file());
    if let Some(path) = &user {
        match std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|t| Targets::parse(&t).map_err(|e| e.to_string()))
        {
            Ok(t) => targets.merge(t),
            Err(e) => cx.error_at(Span::call_site(), format!("cannot use {}: {e}", path.display())),
        }
    }
    (targets, user)
}

/// The build-time environment variable naming more records files (a path list, as
/// `PATH` is; relative paths are from the crate's Cargo.toml).
pub const RECORDS_ENV: &str = "CROSSGEMM_RECORDS";

/// The shipped records, parsed once per compiler process.
fn builtin_records() -> &'static [(String, Records)] {
    static DOCS: std::sync::OnceLock<Vec<(String, Records)>> = std::sync::OnceLock::new();
    DOCS.get_or_init(|| {
        BUILTIN_RECORDS
            .iter()
            .map(|(name, text)| {
                let doc = gemm_core::records::parse(text).expect("crossgemm's shipped records parse (tested)");
                (name.to_string(), doc)
            })
            .collect()
    })
}

/// The records a kernel's tables read: the shipped ones and those of [`RECORDS_ENV`]
/// (both unless `records = none`), and the files of its `records = ".."` options; and
/// the paths of the user's files, for the expansion to track. A file that cannot be read
/// or is not a records file is an error at its option (or at the attribute, for the
/// variable).
pub fn load_records(cx: &Ctxt, attr: &Attr) -> (Vec<(String, Records)>, Vec<PathBuf>) {
    let mut docs: Vec<(String, Records)> = match attr.no_records {
        Some(_) => Vec::new(),
        None => builtin_records().to_vec(),
    };
    let mut paths = Vec::new();
    let base = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_default();
    // (path, span for errors, how the user named it)
    let mut files: Vec<(PathBuf, Span, String)> = attr
        .records
        .iter()
        .map(|(p, span)| (base.join(p), *span, format!("`records = \"{p}\"`")))
        .collect();
    if let Some(list) = std::env::var_os(RECORDS_ENV).filter(|_| attr.no_records.is_none()) {
        files.extend(
            std::env::split_paths(&list)
                .filter(|p| !p.as_os_str().is_empty())
                .map(|p| {
                    (
                        base.join(&p),
                        Span::call_site(),
                        format!("{RECORDS_ENV} entry {}", p.display()),
                    )
                }),
        );
    }
    for (path, span, what) in files {
        let read = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read it ({e})"))
            .and_then(|t| gemm_core::records::parse(&t).map_err(|e| e.to_string()));
        match read {
            Ok(doc) => {
                docs.push((path.display().to_string(), doc));
                paths.push(path);
            }
            Err(e) => cx.error_at(span, format!("{what}: not a usable tuning-records file: {e}")),
        }
    }
    (docs, paths)
}

pub fn plan_all(
    cx: &Ctxt,
    ir: &GemmIr,
    attr: &Attr,
    targets: &Targets,
    records: &[(String, Records)],
    warnings: &mut Vec<Warning>,
) -> Vec<Planned> {
    let chosen: Vec<(&TargetSpec, Span)> = match &attr.targets {
        Some(names) => names
            .iter()
            .filter_map(|(name, span)| match targets.get(name) {
                None => {
                    cx.error_at(
                        *span,
                        format!(
                            "unknown target `{name}`: targets.toml defines {}",
                            targets.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ")
                        ),
                    );
                    None
                }
                Some(t) if !feature_enabled(&t.feature) => {
                    cx.error_at(
                        *span,
                        format!(
                            "target `{name}` is not enabled: turn on the `{}` feature of crossgemm",
                            t.feature
                        ),
                    );
                    None
                }
                Some(t) => Some((t, *span)),
            })
            .collect(),
        None => targets
            .iter()
            .filter(|t| feature_enabled(&t.feature))
            .map(|t| (t, Span::call_site()))
            .collect(),
    };
    if attr.targets.is_none() && chosen.is_empty() {
        cx.error_at(
            Span::call_site(),
            "no target is enabled: turn on at least one of the features `opencl`, `sm80`, `sm90` of crossgemm",
        );
    }
    let mut out = Vec::new();
    for (spec, span) in chosen {
        let plan = plan_target(ir, spec, &attr.tune);
        if plan.configs.is_empty() {
            let why = plan
                .main_killer()
                .map(|k| {
                    format!(
                        "{} ({} of {} candidates; e.g. {})",
                        k.rule, k.count, plan.considered, k.example
                    )
                })
                .unwrap_or_default();
            cx.error_at(
                attr.tune_span.unwrap_or(span),
                format!(
                    "the tune() space leaves no config for target `{}`: pruned by {why}",
                    spec.name
                ),
            );
            continue;
        }
        let better: Vec<_> = spec
            .instructions
            .iter()
            .map(|i| i.name)
            .filter(|n| *n != Instr::Fma)
            .collect();
        let fma_only = plan.families.iter().all(|f| f.family().instr() == Instr::Fma);
        if fma_only && !better.is_empty() && !attr.fma_ok {
            warnings.push(Warning {
                span,
                feature: spec.feature.clone(),
                text: format!(
                    "performance note: kernel `{}` runs on scalar FMA on target `{}`, whose matrix instructions ({}) do not take {} operands{}; `#[gemm_kernel(fma_ok)]` accepts the FMA path and silences this note",
                    ir.name,
                    spec.name,
                    better.iter().map(|i| i.name()).collect::<Vec<_>>().join(", "),
                    ir.ab_dtype.name(),
                    if ir.ab_dtype == gemm_core::DType::F32 { "; `acc = tf32` puts f32 on tensor cores" } else { "" }
                ),
            });
        }
        if let Some(text) = layout_note(ir, spec, &plan).filter(|_| !attr.layout_ok && !fma_only) {
            warnings.push(Warning {
                span,
                feature: spec.feature.clone(),
                text,
            });
        }
        let sources = plan.sources(ir, spec.backend);
        let table = table::seeds(ir, spec, &plan, records);
        out.push(Planned {
            spec: spec.clone(),
            plan,
            sources,
            table,
        });
    }
    out
}

/// The performance note of a kernel whose operand layouts keep it off an instruction the
/// target offers for its operand type (the families that would use it refuse the kernel,
/// e.g. tf32 wgmma with an N-major B), with each family's reason; `None` where nothing
/// is skipped.
fn layout_note(ir: &GemmIr, spec: &TargetSpec, plan: &gemm_core::Plan) -> Option<String> {
    if plan.skipped_instrs.is_empty() {
        return None;
    }
    let why: Vec<String> = gemm_core::FamilyId::ALL
        .iter()
        .filter(|f| plan.skipped_instrs.contains(&f.family().instr()))
        .filter_map(|f| f.family().serves(spec, ir).err())
        .collect();
    // The general families: shape specialists (preference class 0: `decode`, `gemv`, for
    // calls of few rows or columns) do not run the calls this note is about.
    let mut runs: Vec<&str> = plan
        .families
        .iter()
        .filter(|f| f.family().preference(spec).0 != 0)
        .map(|f| f.family().instr().name())
        .collect();
    runs.dedup();
    Some(format!(
        "performance note: kernel `{}` cannot use {} on target `{}` ({}), so it runs on {} there; a row-major A and a column-major B (after `.t()`) take it; `#[gemm_kernel(layout_ok)]` keeps these layouts and silences this note",
        ir.name,
        plan.skipped_instrs.iter().map(|i| i.name()).collect::<Vec<_>>().join(", "),
        spec.name,
        why.join("; "),
        runs.join(", "),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::{AccMode, DType, Layout};

    fn ir(dtype: DType, acc: AccMode) -> GemmIr {
        GemmIr::matmul("k", dtype, acc, Layout::RowMajor, Layout::RowMajor)
    }

    fn plan(ir: &GemmIr, targets: &str) -> (Vec<Planned>, Vec<Warning>) {
        let cx = Ctxt::new();
        let attr = crate::attr::parse(&cx, targets.parse().unwrap());
        let (t, _) = load_targets(&cx);
        let mut w = Vec::new();
        let (docs, _) = load_records(&cx, &attr);
        let p = plan_all(&cx, ir, &attr, &t, &docs, &mut w);
        cx.check().unwrap();
        (p, w)
    }

    #[test]
    fn full_f32_on_tensor_core_chips_warns_and_tf32_does_not() {
        let (p, w) = plan(&ir(DType::F32, AccMode::F32), "targets(h200, opencl_cpu)");
        assert_eq!(p.len(), 2);
        assert_eq!(w.len(), 1, "only h200 has better instructions than fma");
        assert!(
            w[0].text.contains("performance note")
                && w[0].text.contains("target `h200`")
                && w[0].text.contains("acc = tf32")
                && w[0].text.contains("fma_ok"),
            "{}",
            w[0].text
        );
        assert_eq!(w[0].feature, "sm90");
        // tf32 in layouts wgmma takes: no note.
        let tn = GemmIr::matmul("k", DType::F32, AccMode::Tf32, Layout::RowMajor, Layout::ColMajor);
        let (_, w) = plan(&tn, "targets(h200)");
        assert!(w.is_empty());
        // The kernel may accept the FMA path.
        let (p, w) = plan(&ir(DType::F32, AccMode::F32), "targets(h200), fma_ok");
        assert!(w.is_empty() && p.len() == 1);
    }

    /// tf32 with an N-major B cannot use wgmma: a note naming why, unless `layout_ok`;
    /// none for a K-major B, for f16 in any layout, or on a chip without wgmma.
    #[test]
    fn tf32_layouts_wgmma_cannot_take_get_a_note() {
        let (_, w) = plan(&ir(DType::F32, AccMode::Tf32), "targets(h200, a100)");
        assert_eq!(w.len(), 1, "only h200 has wgmma");
        let t = &w[0].text;
        assert!(
            t.contains("cannot use wgmma on target `h200`")
                && t.contains("K-major operands only")
                && t.contains("runs on mma_sync")
                && t.contains("layout_ok"),
            "{t}"
        );
        let (_, w) = plan(&ir(DType::F32, AccMode::Tf32), "targets(h200), layout_ok");
        assert!(w.is_empty());
        let tn = GemmIr::matmul("k", DType::F32, AccMode::Tf32, Layout::RowMajor, Layout::ColMajor);
        assert!(plan(&tn, "targets(h200)").1.is_empty());
        assert!(plan(&ir(DType::F16, AccMode::F32), "targets(h200)").1.is_empty());
    }

    #[test]
    fn sources_follow_the_target_backend() {
        // Row-major A and B: on CUDA decode turned around (N <= 16, B read across),
        // gemv turned around (N <= 8), on CUDA decode_n (M <= 32, B's rows through shared
        // memory), gemv_n (M <= 4, B's rows), then the general family.
        let (p, _) = plan(&ir(DType::F16, AccMode::F32), "targets(a100, nvidia_opencl)");
        let families = |i: usize| p[i].sources.iter().map(|(f, _)| *f).collect::<Vec<_>>();
        assert_eq!(
            families(0),
            [
                FamilyId::Decode,
                FamilyId::Gemv,
                FamilyId::DecodeN,
                FamilyId::GemvN,
                FamilyId::MmaSync
            ]
        );
        assert!(p[0].sources[0].1.contains("movmatrix.sync.aligned.m8n8.trans.b16"));
        assert!(p[0].sources[2].1.contains("ldmatrix.sync.aligned.m8n8.x4.trans"));
        assert!(p[0].sources[4].1.contains("mma.sync"));
        assert!(p[0].sources.iter().all(|(_, s)| s.contains("__global__")));
        assert_eq!(families(1), [FamilyId::Gemv, FamilyId::GemvN, FamilyId::Simt]);
        assert!(p[1].sources.iter().all(|(_, s)| s.contains("__kernel")));
    }
}
