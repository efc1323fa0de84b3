//! The decode family's generator without a GPU: the source's instruction and loads, and,
//! where libnvrtc can be loaded, a compile of every planned config (each row class,
//! f16 and bf16, a fused epilogue, every diagnosis variant) with no spills, no stack and
//! no ptxas warnings.

use gemm_core::codegen::Variant;
use gemm_core::family::{Decode, FamilyId, KernelFamily, Problem, TileConfig};
use gemm_core::plan::TuneSpace;
use gemm_core::target::{Targets, BUILTIN_TARGETS};
use gemm_core::{plan_target, AccMode, Backend, DType, EpOp, Func, GemmIr, Layout, Param};

mod common;

fn plain(dtype: DType) -> GemmIr {
    GemmIr::matmul("dec_test", dtype, AccMode::F32, Layout::RowMajor, Layout::ColMajor)
}

fn bias_gelu(dtype: DType) -> GemmIr {
    GemmIr::matmul("dec_bias_gelu", dtype, AccMode::F32, Layout::RowMajor, Layout::ColMajor).with_epilogue(
        [Param::row("bias", dtype)],
        vec![EpOp::Acc, EpOp::Param(2), EpOp::Add, EpOp::Call(Func::Gelu)],
    )
}

/// The decode configs a plan of `ir` for `target` keeps under `space`.
fn planned(ir: &GemmIr, target: &str, space: &TuneSpace) -> Vec<gemm_core::family::DecodeTile> {
    let t = Targets::parse(BUILTIN_TARGETS).unwrap().get(target).unwrap().clone();
    let plan = plan_target(ir, &t, space);
    assert!(plan.families.contains(&FamilyId::Decode), "{:?}", plan.families);
    plan.configs
        .iter()
        .filter_map(|c| match c {
            TileConfig::Decode(d) => Some(*d),
            _ => None,
        })
        .collect()
}

#[test]
fn source_takes_both_types_swapped_and_streams_b() {
    for (dt, ty) in [(DType::F16, "f16"), (DType::Bf16, "bf16")] {
        let s = Decode.emit(&plain(dt), Backend::Cuda, Variant::Full);
        assert!(s.contains(&format!("mma.sync.aligned.m16n8k16.row.col.f32.{ty}.{ty}.f32")));
        assert!(s.contains("ld.global.nc.L1::no_allocate.L2::256B.v4.u32"));
        assert!(!s.contains('@'), "unfilled template key");
        assert!(!s.contains("#include"));
        // B's columns are the instruction's rows: column g and g + 8 of each block.
        assert!(
            s.contains("cg_mma(acc[nt][mt], wr[nt][0].x, wr[nt][1].x, wr[nt][0].y, wr[nt][1].y, xr[mt].x, xr[mt].y);")
        );
        assert!(!s.contains("cvt.rna.tf32"), "16-bit words go to the MMA as loaded");
    }
    // f32 operands rounded to tf32: m16n8k8 on the same words, each rounded once.
    let mut tf32 = plain(DType::F32);
    tf32.acc = AccMode::Tf32;
    let s = Decode.emit(&tf32, Backend::Cuda, Variant::Full);
    assert!(s.contains("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"));
    assert!(s.contains("cvt.rna.tf32.f32") && s.contains("wr[nt][0] = cg_to_tf32(w[nt][0]);"));
    assert!(s.contains("typedef float cg_ab_t;\n#define CG_EPC 4"));
    assert!(
        !s.contains("movmatrix"),
        "32-bit elements stored across are loaded one by one"
    );
    assert!(!s.contains('@'), "unfilled template key");
    let load_only = Decode.emit(&plain(DType::F16), Backend::Cuda, Variant::LoadOnly);
    assert!(!load_only.contains("mma.sync.aligned"));
    let compute_only = Decode.emit(&plain(DType::F16), Backend::Cuda, Variant::ComputeOnly);
    assert!(compute_only.contains("#define CG_LOAD_B(p, c) cg_fake(c, 1u)"));
}

#[test]
fn planned_configs_compile_without_spills() {
    let Some(nv) = common::nvrtc_or_skip("planned_configs_compile_without_spills") else {
        return;
    };
    // Whole super-steps only, and a tail with the chunk that crosses K (K = 72).
    let shapes = [Problem::new(16, 4096, 4096), Problem::new(5, 100, 72)];
    for (target, cc) in [("h200", 90), ("a100", 80)] {
        for ir in [plain(DType::F16), bias_gelu(DType::Bf16)] {
            let mut configs = planned(&ir, target, &TuneSpace::default());
            assert_eq!(configs.len(), 30, "{target}: 15 tiles in each form");
            // The 64-row tiles `tune(block_m = [64])` asks for.
            let mut rows64 = TuneSpace::default();
            rows64.0.insert("block_m".into(), vec![64]);
            configs.extend(planned(&ir, target, &rows64).into_iter().filter(|c| c.mt == 8));
            compile_all(&nv, cc, &ir, &configs, &shapes);
        }
    }
}

/// acc = tf32x3 (the split copies, K-major both): its sums beside the accumulators
/// (CG_PROMOTE) in every planned config, on both CUDA targets, with no spills.
#[test]
fn tf32x3_configs_compile_without_spills() {
    let ir = GemmIr::matmul(
        "dec_x3",
        DType::F32,
        AccMode::Tf32x3,
        Layout::RowMajor,
        Layout::ColMajor,
    );
    let src = Decode.emit(&ir, Backend::Cuda, Variant::Full);
    assert!(src.contains("#define CG_PROMOTE 1") && src.contains("cg_promote();"));
    let Some(nv) = common::nvrtc_or_skip("tf32x3_configs_compile_without_spills") else {
        return;
    };
    // K' = 3K of the split problem, whole super-steps and a tail.
    let shapes = [Problem::new(16, 4096, 3 * 4096), Problem::new(5, 100, 3 * 24)];
    for (target, cc) in [("h200", 90), ("a100", 80)] {
        let configs = planned(&ir, target, &TuneSpace::default());
        assert!(!configs.is_empty(), "{target}");
        compile_all(&nv, cc, &ir, &configs, &shapes);
    }
}

/// The small side stored across (a row-major B turned around, a column-major A plain):
/// one form each, every planned config with no spills, at whole super-steps and at a
/// chunk that crosses K.
#[test]
fn across_configs_compile_without_spills() {
    let Some(nv) = common::nvrtc_or_skip("across_configs_compile_without_spills") else {
        return;
    };
    let rr = GemmIr::matmul("dec_rr", DType::F16, AccMode::F32, Layout::RowMajor, Layout::RowMajor);
    let cc_gelu = GemmIr::matmul("dec_cc", DType::Bf16, AccMode::F32, Layout::ColMajor, Layout::ColMajor)
        .with_epilogue(
            [Param::row("bias", DType::Bf16)],
            vec![EpOp::Acc, EpOp::Param(2), EpOp::Add, EpOp::Call(Func::Gelu)],
        );
    // tf32's (f32 elements loaded one by one, no movmatrix): the plain form (its only one
    // with both operands column-major; diagnosis variants too) on the H200's plan,
    // K = 71 crossing a chunk at an odd pitch. A row-major B turned around is compiled
    // in tests/nvrtc.rs.
    let tf32_cc = GemmIr::matmul(
        "dec_tf32_cc",
        DType::F32,
        AccMode::Tf32,
        Layout::ColMajor,
        Layout::ColMajor,
    );
    for (ir, swap, shapes) in [
        (&rr, true, [Problem::new(4096, 16, 4096), Problem::new(100, 5, 72)]),
        (
            &cc_gelu,
            false,
            [Problem::new(16, 4096, 4096), Problem::new(5, 100, 72)],
        ),
        (
            &tf32_cc,
            false,
            [Problem::new(16, 4096, 4096), Problem::new(7, 100, 71)],
        ),
    ] {
        let tf32 = ir.acc == AccMode::Tf32;
        let src = Decode.emit(ir, Backend::Cuda, Variant::Full);
        assert_eq!(src.contains("movmatrix.sync.aligned.m8n8.trans.b16"), !tf32);
        for (target, cc) in [("h200", 90), ("a100", 80)] {
            let mut configs = planned(ir, target, &TuneSpace::default());
            assert_eq!(configs.len(), 6, "{target}: one form, 16 rows");
            if tf32 {
                if target == "h200" {
                    compile_all(&nv, cc, ir, &configs, &shapes);
                }
                continue;
            }
            // The 8- and 32-row tiles a `tune(..)` of the small side asks for (at 32 fewer
            // chunks in flight: their loads spilled at the whole unroll).
            let mut rows = TuneSpace::default();
            rows.0
                .insert(if swap { "block_n" } else { "block_m" }.into(), vec![8, 32]);
            configs.extend(planned(ir, target, &rows));
            assert!(configs.iter().all(|c| c.swap == swap), "{target}: {configs:?}");
            assert!(
                configs.iter().any(|c| c.mt == 4) && configs.iter().any(|c| c.mt == 1),
                "{target}: {configs:?}"
            );
            compile_all(&nv, cc, ir, &configs, &shapes);
        }
    }
}

/// Compiles `configs` of `ir` for `sm_{cc}` at each of `shapes`: every config in full,
/// the diagnosis variants of the plain form's one-block-a-warp configs; no spills, and
/// a load-only variant that keeps its loads.
fn compile_all(
    nv: &common::nvrtc::Nvrtc,
    cc: u32,
    ir: &GemmIr,
    configs: &[gemm_core::family::DecodeTile],
    shapes: &[Problem],
) {
    for c in configs {
        for v in Variant::ALL {
            // The diagnosis variants of one config per row class are enough, of the
            // plain form (the turned-around one differs in its roles' defines only).
            if v != Variant::Full && (c.nt != 1 || c.swap) {
                continue;
            }
            let src = Decode.emit(ir, Backend::Cuda, v);
            for &p in shapes {
                let opts = common::compile_options(&cc.to_string(), Decode.defines(c, ir, Backend::Cuda, p));
                let (ok, log, cubin) = nv.compile(&src, &format!("{}.cu", ir.symbol()), &opts);
                let what = format!("sm_{cc} {} {c:?} {v} {p:?}", ir.symbol());
                assert!(ok && cubin > 0, "{what} failed to compile:\n{log}");
                common::assert_no_spills(&what, &log);
                // The loads of an iteration are in flight at once, so their words
                // hold registers; a load-only variant under that has lost its
                // loads (ptxas deleted them once as dead).
                if v == Variant::LoadOnly {
                    let held = 4 * c.unroll * c.loads_per_chunk();
                    let regs = common::registers(&log).unwrap_or(0);
                    assert!(
                        regs >= held,
                        "{what}: {regs} registers, under the {held} its loads hold"
                    );
                }
                if v == Variant::Full && p == shapes[0] {
                    eprintln!(
                        "{what}: {} registers (estimated {})",
                        common::registers(&log).unwrap_or(0),
                        c.est_regs()
                    );
                }
            }
        }
    }
}
