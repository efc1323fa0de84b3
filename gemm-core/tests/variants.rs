//! Diagnosis variants of the generated kernels ([`Variant`]): `Full` is exactly the
//! source the macro embeds ([`Plan::sources`](gemm_core::Plan::sources)), and every other variant takes out exactly the part of the
//! kernel it names, in every kernel family (CUDA f16/bf16 mma, CUDA tf32 mma, CUDA SIMT,
//! OpenCL), while keeping the symbol, the ABI and the tile constants.

use gemm_core::codegen::Variant;
use gemm_core::plan::TuneSpace;
use gemm_core::target::{Targets, BUILTIN_TARGETS};
use gemm_core::{plan_target, AccMode, DType, EpOp, Func, GemmIr, Layout, Param, TargetSpec};

/// The source of the plan's complete family of `ir` on `target` (the last one, which runs
/// every call: mma.sync, SIMT or OpenCL), as the macro embeds it. The wgmma family's
/// variants are pinned by tests/wgmma_emit.rs.
fn emit(ir: &GemmIr, target: &TargetSpec) -> String {
    let plan = plan_target(ir, target, &TuneSpace::default());
    plan.sources(ir, target.backend).pop().expect("a plan has a family").1
}

/// Diagnosis variant `v` of [`emit`]'s source.
fn emit_variant(ir: &GemmIr, target: &TargetSpec, v: Variant) -> String {
    let plan = plan_target(ir, target, &TuneSpace::default());
    plan.families
        .last()
        .expect("a plan has a family")
        .emit(ir, target.backend, v)
}

const CUDA_TARGET: &str = "h200";
const OPENCL_TARGET: &str = "opencl_cpu";

fn targets() -> Targets {
    Targets::parse(BUILTIN_TARGETS).expect("built-in targets.toml parses")
}

fn spec<'a>(t: &'a Targets, name: &str) -> &'a TargetSpec {
    t.get(name)
        .unwrap_or_else(|| panic!("built-in target `{name}` is missing"))
}

/// `relu(a * b + bias)` with a row (per-column) bias of type `dt`.
fn bias_relu(dt: DType, acc: AccMode, la: Layout, lb: Layout) -> GemmIr {
    GemmIr::matmul("bias_relu", dt, acc, la, lb).with_epilogue(
        [Param::row("bias", dt)],
        vec![EpOp::Acc, EpOp::Param(2), EpOp::Add, EpOp::Call(Func::Relu)],
    )
}

/// `gelu(alpha * (a * b) * scale + res)` with a column vector `scale`, to exercise scalars,
/// matrices and vectors in the epilogue; output column-major.
fn scaled_gelu_res(dt: DType, acc: AccMode, la: Layout, lb: Layout) -> GemmIr {
    GemmIr::matmul("scaled_gelu_res", dt, acc, la, lb)
        .with_epilogue(
            [
                Param::scalar("alpha"),
                Param::matrix("res", dt, Layout::RowMajor),
                Param::col("scale", DType::F32),
            ],
            vec![
                EpOp::Param(2),
                EpOp::Acc,
                EpOp::Mul,
                EpOp::Param(4),
                EpOp::Mul,
                EpOp::Param(3),
                EpOp::Add,
                EpOp::Call(Func::Gelu),
            ],
        )
        .with_out(dt, Layout::ColMajor)
}

const LAYOUTS: [(Layout, Layout); 4] = [
    (Layout::RowMajor, Layout::RowMajor),
    (Layout::RowMajor, Layout::ColMajor),
    (Layout::ColMajor, Layout::RowMajor),
    (Layout::ColMajor, Layout::ColMajor),
];

const TYPES: [(DType, AccMode); 4] = [
    (DType::F16, AccMode::F32),
    (DType::Bf16, AccMode::F32),
    (DType::F32, AccMode::Tf32),
    (DType::F32, AccMode::F32),
];

/// Every IR the family tests run: each dtype/accumulation × each layout pair × three
/// epilogues (none, bias+relu, scalar/matrix/vector+gelu).
fn all_irs() -> Vec<GemmIr> {
    let mut v = Vec::new();
    for (dt, acc) in TYPES {
        for (la, lb) in LAYOUTS {
            v.push(GemmIr::matmul("plain", dt, acc, la, lb));
            v.push(bias_relu(dt, acc, la, lb));
            v.push(scaled_gelu_res(dt, acc, la, lb));
        }
    }
    // A transposed operand and a mixed output type.
    let mut t = bias_relu(DType::F16, AccMode::F32, Layout::RowMajor, Layout::RowMajor);
    t.b_t = true;
    t.out_dtype = DType::F32;
    v.push(t);
    v
}

/// The kernel family a CUDA source implements, from its header line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    Mma16,
    MmaTf32,
    Simt,
    Opencl,
}

fn family_of(src: &str, target: &TargetSpec) -> Family {
    if target.name == OPENCL_TARGET {
        return Family::Opencl;
    }
    let head = src.lines().next().expect("non-empty source");
    if head.contains("(mma.sync m16n8k16,") {
        Family::Mma16
    } else if head.contains("(mma.sync m16n8k8 tf32,") {
        Family::MmaTf32
    } else {
        assert!(head.contains("(simt fma,"), "unknown family: {head}");
        Family::Simt
    }
}

/// The kernel function itself (from its declaration to the next kernel, if any).
fn body(src: &str) -> &str {
    let at = src
        .find("extern \"C\" __global__")
        .or_else(|| src.find("__kernel "))
        .expect("source has a kernel");
    // An OpenCL split's second kernel (`{symbol}_sum`) follows the first: not its body.
    let end = src[at + 1..].find("__kernel ").map_or(src.len(), |e| at + 1 + e);
    &src[at..end]
}

/// The line declaring the kernel: symbol and parameter list (the ABI).
fn signature(src: &str) -> String {
    let b = body(src);
    let lines: Vec<&str> = b.lines().take(2).collect();
    lines.join("\n")
}

/// Preprocessor lines and static assertions: what the tile constants (-D) must satisfy.
fn preprocessor(src: &str) -> Vec<&str> {
    src.lines()
        .filter(|l| l.starts_with('#') && !l.starts_with("#pragma") || l.starts_with("static_assert"))
        .collect()
}

fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

/// (Full source, variant source, family) for `ir` on `target`.
fn pair(ir: &GemmIr, target: &TargetSpec, v: Variant) -> (String, String, Family) {
    let full = emit(ir, target);
    let var = emit_variant(ir, target, v);
    let fam = family_of(&full, target);
    (full, var, fam)
}

/// The family every (dtype, accumulation) pair must land in on each target, so that the
/// loops below cover all four families.
#[test]
fn families_are_all_covered() {
    let t = targets();
    let (cuda, ocl) = (spec(&t, CUDA_TARGET), spec(&t, OPENCL_TARGET));
    let fam = |dt, acc, target| {
        let ir = GemmIr::matmul("f", dt, acc, Layout::RowMajor, Layout::RowMajor);
        family_of(&emit(&ir, target), target)
    };
    assert_eq!(fam(DType::F16, AccMode::F32, cuda), Family::Mma16);
    assert_eq!(fam(DType::Bf16, AccMode::F32, cuda), Family::Mma16);
    assert_eq!(fam(DType::F32, AccMode::Tf32, cuda), Family::MmaTf32);
    assert_eq!(fam(DType::F32, AccMode::F32, cuda), Family::Simt);
    assert_eq!(fam(DType::F16, AccMode::F32, ocl), Family::Opencl);
}

#[test]
fn full_variant_is_the_emitted_source() {
    let t = targets();
    for target in [spec(&t, CUDA_TARGET), spec(&t, OPENCL_TARGET)] {
        for ir in all_irs() {
            assert_eq!(
                emit_variant(&ir, target, Variant::Full),
                emit(&ir, target),
                "{} on {}",
                ir.symbol(),
                target.name
            );
        }
    }
}

#[test]
fn variant_api() {
    assert_eq!(
        Variant::ALL,
        [
            Variant::Full,
            Variant::LoadOnly,
            Variant::NoEpilogue,
            Variant::ComputeOnly,
            Variant::NoStore
        ]
    );
    let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
    assert_eq!(names, ["full", "load_only", "no_epilogue", "compute_only", "no_store"]);
    for v in Variant::ALL {
        assert_eq!(Variant::from_name(v.name()), Some(v));
        assert_eq!(v.name().parse::<Variant>(), Ok(v));
        assert_eq!(v.to_string(), v.name());
    }
    assert_eq!(Variant::from_name("mma_only"), None);
}

/// What every non-Full variant shares: marked, different, deterministic, fully filled,
/// and with the full kernel's symbol, ABI and tile constants.
#[test]
fn variants_keep_symbol_abi_and_defines() {
    let t = targets();
    for target in [spec(&t, CUDA_TARGET), spec(&t, OPENCL_TARGET)] {
        for ir in all_irs() {
            for v in Variant::ALL.into_iter().filter(|v| *v != Variant::Full) {
                let (full, var, fam) = pair(&ir, target, v);
                let what = format!("{} {v} on {} ({fam:?})", ir.symbol(), target.name);
                assert_ne!(var, full, "{what}: the variant was ignored");
                let marker = format!("/* crossgemm diagnosis variant: {} */\n", v.name());
                assert!(var.starts_with(&marker), "{what}: no marker line");
                assert_eq!(count(&var, "crossgemm diagnosis variant:"), 1, "{what}");
                assert_eq!(&var[marker.len()..].lines().next(), &full.lines().next(), "{what}");
                assert!(!full.contains("diagnosis variant"), "{what}");
                assert!(!var.contains('@'), "{what}: unfilled template key");
                assert!(!var.contains("#include"), "{what}");
                assert_eq!(signature(&var), signature(&full), "{what}: symbol / ABI changed");
                assert!(signature(&var).contains(&ir.symbol()), "{what}");
                assert_eq!(
                    preprocessor(&var),
                    preprocessor(&full),
                    "{what}: tile constants changed"
                );
                assert_eq!(
                    emit_variant(&ir, target, v),
                    emit_variant(&ir.clone(), target, v),
                    "{what}"
                );
                // Each variant is distinct from every other one.
                for w in Variant::ALL.into_iter().filter(|w| *w != v) {
                    assert_ne!(var, emit_variant(&ir, target, w), "{what} equals {w}");
                }
            }
        }
    }
}

#[test]
fn load_only_moves_data_but_does_no_math() {
    let t = targets();
    for target in [spec(&t, CUDA_TARGET), spec(&t, OPENCL_TARGET)] {
        for ir in all_irs() {
            let (full, var, fam) = pair(&ir, target, Variant::LoadOnly);
            let what = format!("{} on {} ({fam:?})", ir.symbol(), target.name);
            let (fb, vb) = (body(&full), body(&var));
            match fam {
                Family::Mma16 | Family::MmaTf32 => {
                    assert!(full.contains("mma.sync.aligned"), "{what}");
                    // (The header comment still names the full kernel's family.)
                    assert!(!var.contains("mma.sync.aligned"), "{what}: load_only still has an mma");
                    assert!(!var.contains("asm(\"mma"), "{what}");
                    assert!(!var.contains("cg_mma"), "{what}");
                    // Global -> shared: the same cp.async ring.
                    assert!(var.contains("cp.async.cg.shared.global"), "{what}");
                    for s in ["cg_load_tile<", "cg_cp_commit()", "cg_cp_wait<", "__syncthreads()"] {
                        assert!(count(vb, s) > 0, "{what}: {s}");
                        assert_eq!(count(vb, s), count(fb, s), "{what}: {s}");
                    }
                    // Shared -> registers: the same fragment loads.
                    for s in ["cg_ldsm_x4(", "cg_ldsm_x4_trans(", "cg_lds_tf32("] {
                        assert_eq!(count(vb, s), count(fb, s), "{what}: {s}");
                    }
                    assert!(count(vb, "cg_ldsm_x4") + count(vb, "cg_lds_tf32(") > 0, "{what}");
                    // One sink per A fragment (mi) and one per B fragment (ni), not per pair.
                    assert_eq!(count(vb, "cg_sink_a(af[mi]);"), 1, "{what}");
                    assert_eq!(count(vb, "cg_sink_b(bf[ni]);"), 1, "{what}");
                    assert!(var.contains(r#"asm volatile("" :: "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]));"#));
                    assert!(var.contains(r#"asm volatile("" :: "r"(b[0]), "r"(b[1]));"#));
                    if fam == Family::MmaTf32 {
                        assert!(var.contains("cvt.rna.tf32.f32"), "{what}: the tf32 rounding stays");
                    }
                }
                Family::Simt => {
                    assert!(fb.contains("fmaf(a[mi], b[ni], c[mi][ni])"), "{what}");
                    assert!(!var.contains("fmaf("), "{what}: load_only still multiplies");
                    assert!(vb.contains("c[mi][0] += a[mi];"), "{what}");
                    assert!(vb.contains("c[0][ni] += b[ni];"), "{what}");
                    for s in [
                        "cg_simt_fetch<",
                        "cg_simt_stash<",
                        "cg_as + k * CG_LDA",
                        "cg_bs + k * CG_LDB",
                        "__syncthreads()",
                    ] {
                        assert!(count(vb, s) > 0, "{what}: {s}");
                        assert_eq!(count(vb, s), count(fb, s), "{what}: {s}");
                    }
                }
                Family::Opencl => {
                    assert!(fb.contains("acc[i][j] += a[i] * b[j];"), "{what}");
                    assert!(!vb.contains(" * b[j]"), "{what}: load_only still multiplies");
                    assert!(vb.contains("acc[i][0] += a[i];"), "{what}");
                    assert!(vb.contains("acc[0][j] += b[j];"), "{what}");
                    for s in [
                        "cg_ldv(A,",
                        "cg_ldv(B,",
                        "As[kk][",
                        "Bs[kk][",
                        "barrier(CLK_LOCAL_MEM_FENCE)",
                    ] {
                        assert!(count(vb, s) > 0, "{what}: {s}");
                        assert_eq!(count(vb, s), count(fb, s), "{what}: {s}");
                    }
                }
            }
            // The epilogue and store stay.
            assert_eq!(count(vb, "cg_epilogue("), 1, "{what}");
            assert_eq!(count(vb, "cg_st_"), count(fb, "cg_st_"), "{what}");
        }
    }
}

#[test]
fn compute_only_does_the_math_without_global_loads() {
    let t = targets();
    for target in [spec(&t, CUDA_TARGET), spec(&t, OPENCL_TARGET)] {
        for ir in all_irs() {
            let (full, var, fam) = pair(&ir, target, Variant::ComputeOnly);
            let what = format!("{} on {} ({fam:?})", ir.symbol(), target.name);
            let (fb, vb) = (body(&full), body(&var));
            let a_ptr = format!("p{}", ir.a);
            let b_ptr = format!("p{}", ir.b);
            match fam {
                Family::Mma16 | Family::MmaTf32 => {
                    assert!(fb.contains("cg_load_tile<"), "{what}");
                    assert!(!vb.contains("cg_load_tile<"), "{what}: compute_only still loads tiles");
                    // The same math on the same fragments, through the same pipeline.
                    let mma = if fam == Family::Mma16 {
                        "mma.sync.aligned.m16n8k16"
                    } else {
                        "mma.sync.aligned.m16n8k8"
                    };
                    assert!(var.contains(mma), "{what}");
                    for s in [
                        "cg_mma(c[mi][ni], af[mi], bf[ni]);",
                        "load_stage(",
                        "cg_cp_commit()",
                        "cg_cp_wait<",
                        "__syncthreads()",
                        "cg_ldsm_x4(",
                        "cg_ldsm_x4_trans(",
                        "cg_lds_tf32(",
                    ] {
                        assert_eq!(count(vb, s), count(fb, s), "{what}: {s}");
                    }
                    assert_eq!(count(vb, "cg_mma(c[mi][ni], af[mi], bf[ni]);"), 1, "{what}");
                }
                Family::Simt => {
                    for s in ["cg_simt_fetch<", "cg_simt_stash<"] {
                        assert!(fb.contains(s), "{what}: {s}");
                        assert!(!vb.contains(s), "{what}: compute_only still loads tiles ({s})");
                    }
                    assert!(vb.contains("fmaf(a[mi], b[ni], c[mi][ni])"), "{what}");
                    assert!(
                        vb.contains("if (K < 0) { cg_as["),
                        "{what}: shared tiles must look written"
                    );
                    for s in ["cg_as[k * CG_LDA", "cg_bs[k * CG_LDB", "__syncthreads()"] {
                        assert_eq!(count(vb, s), count(fb, s), "{what}: {s}");
                    }
                }
                Family::Opencl => {
                    assert!(fb.contains("cg_ldv(A,") && fb.contains("cg_ldv(B,"), "{what}");
                    assert!(!vb.contains("cg_ldv("), "{what}: compute_only still loads tiles");
                    assert!(vb.contains("acc[i][j] += a[i] * b[j];"), "{what}");
                    assert!(
                        vb.contains("if (K < 0) { As[0]["),
                        "{what}: local tiles must look written"
                    );
                    for s in ["As[kk][", "Bs[kk][", "barrier(CLK_LOCAL_MEM_FENCE)"] {
                        assert_eq!(count(vb, s), count(fb, s), "{what}: {s}");
                    }
                }
            }
            // A and B are still bound (same ABI) but never dereferenced for the product.
            assert!(vb.contains(&format!("= {a_ptr};")), "{what}");
            assert!(vb.contains(&format!("= {b_ptr};")), "{what}");
            assert_eq!(count(vb, "cg_epilogue("), 1, "{what}");
        }
    }
}

/// The store of the raw accumulator (no epilogue) that `fam`'s kernel writes for `ir`.
fn raw_store(ir: &GemmIr, fam: Family) -> String {
    let (i, j, acc) = match fam {
        Family::Opencl => ("gi", "gj", "acc[i][j]"),
        _ => ("i", "j", "acc"),
    };
    let idx = match ir.out_layout {
        Layout::RowMajor => format!("(long)({i}) * ldo + ({j})"),
        Layout::ColMajor => format!("(long)({j}) * ldo + ({i})"),
    };
    format!("cg_st_{}(out, {idx}, {acc})", ir.out_dtype.name())
}

#[test]
fn no_epilogue_stores_the_raw_accumulator() {
    let t = targets();
    for target in [spec(&t, CUDA_TARGET), spec(&t, OPENCL_TARGET)] {
        for ir in all_irs() {
            let (full, var, fam) = pair(&ir, target, Variant::NoEpilogue);
            let what = format!("{} on {} ({fam:?})", ir.symbol(), target.name);
            let (fb, vb) = (body(&full), body(&var));
            assert_eq!(count(fb, "cg_epilogue("), 1, "{what}");
            assert!(
                !var.contains("cg_epilogue("),
                "{what}: no_epilogue still has the epilogue"
            );
            let store = format!("{};", raw_store(&ir, fam));
            assert_eq!(count(vb, &store), 1, "{what}: expected `{store}`");
            // No epilogue parameter is read, no activation runs.
            for f in ["cg_relu(", "cg_gelu(", "cg_ld_"] {
                assert!(!vb.contains(f), "{what}: {f}");
            }
            // Everything else is the full kernel: identical up to the store.
            let cut = |b: &str| b[..b.find("cg_st_").expect("store")].to_string();
            assert_eq!(cut(vb), cut(fb), "{what}");
        }
    }
}

#[test]
fn no_store_computes_everything_and_writes_nothing() {
    let t = targets();
    for target in [spec(&t, CUDA_TARGET), spec(&t, OPENCL_TARGET)] {
        for ir in all_irs() {
            let (full, var, fam) = pair(&ir, target, Variant::NoStore);
            let what = format!("{} on {} ({fam:?})", ir.symbol(), target.name);
            let (fb, vb) = (body(&full), body(&var));
            // The one store is the raw accumulator's, under a condition that never holds.
            let store = format!("if (K < 0) {{ {}; }}", raw_store(&ir, fam));
            assert_eq!(count(vb, &store), 1, "{what}: expected `{store}`");
            assert_eq!(count(vb, "cg_st_"), 1, "{what}");
            assert!(!var.contains("cg_epilogue("), "{what}");
            // Everything else is the full kernel: identical up to the store.
            let cut = |b: &str| b[..b.find("cg_st_").expect("store")].to_string();
            let cut_var = |b: &str| b[..b.find("if (K < 0) { cg_st_").expect("store")].to_string();
            assert_eq!(cut_var(vb), cut(fb), "{what}");
        }
    }
}
