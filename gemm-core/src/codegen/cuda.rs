//! What the CUDA sources of every family share (NVRTC, header-free): the preamble (a
//! description line, conversions, the swizzle, the fused epilogue, the GROUP_M tile order),
//! the per-shape alignment flags, and small template helpers.
//!
//! Shape-dependent facts that decide between vector and element loads are preprocessor
//! flags (`family::shape_flags`), so one source still serves every shape; the families pass
//! them beside their tile constants.

use super::prelude::{epilogue_fn, helpers, variant_store};
use super::Variant;
use crate::ir::{DType, GemmIr};
use crate::swizzle::C_SWIZZLE;
use crate::target::Backend;

/// Everything before a family's kernel body: the variant marker, a comment naming the
/// kernel, the epilogue and the instruction (`kernel`), then the shared helpers.
pub(crate) fn preamble(ir: &GemmIr, kernel: &str, variant: Variant) -> String {
    let mut s = variant.marker();
    s.push_str(&format!(
        "/* crossgemm: {} = {} ({}, A {}, B {}, out {} {}) */\n",
        ir.symbol(),
        ir.epilogue_text(),
        kernel,
        ir.a_layout().name(),
        ir.b_layout().name(),
        ir.out_dtype.name(),
        ir.out_layout.name(),
    ));
    s.push_str(&helpers(Backend::Cuda));
    s.push_str(C_SWIZZLE);
    if !variant.skips_epilogue() {
        s.push_str(&epilogue_fn(ir, Backend::Cuda));
    }
    s.push_str(COMMON);
    s
}

/// Definitions every family uses: shape-flag defaults, 16-byte type, the GROUP_M tile order.
const COMMON: &str = r#"
#ifndef A_VEC
#define A_VEC 0
#endif
#ifndef B_VEC
#define B_VEC 0
#endif
#ifndef A_ALIGN
#define A_ALIGN 1
#endif
#ifndef B_ALIGN
#define B_ALIGN 1
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
struct alignas(16) cg_u4 { unsigned x, y, z, w; };

/* Triton's grouped launch order: GROUP_M consecutive block rows sweep the columns
   together, so the A rows they share stay in L2. Returns false for a block past the
   last tile (cannot happen with TileConfig::launch's grid). */
static __device__ __forceinline__ bool cg_tile_of_block(int M, int N, int bm, int bn, int* tm, int* tn) {
    const int grid_m = (M + bm - 1) / bm, grid_n = (N + bn - 1) / bn;
    const int pid = blockIdx.x;
    const int width = GROUP_M * grid_n;
    const int first_m = (pid / width) * GROUP_M;
    const int rows = grid_m - first_m < GROUP_M ? grid_m - first_m : GROUP_M;
    if (rows <= 0) return false;
    *tm = first_m + (pid % width) % rows;
    *tn = (pid % width) / rows;
    return *tn < grid_n;
}
"#;

/// Storage type and "to float" expression of an operand element.
pub(crate) fn ab_type(d: DType) -> (&'static str, &'static str) {
    match d {
        DType::F32 => ("float", "x"),
        DType::F16 => ("unsigned short", "cg_f16_to_f32(x)"),
        DType::Bf16 => ("unsigned short", "cg_bf16_to_f32(x)"),
    }
}

/// The store of accumulator `acc` at output (i, j) in `variant` ([`variant_store`]).
pub(crate) fn epilogue_store(ir: &GemmIr, variant: Variant) -> String {
    variant_store(ir, variant, "i", "j", "acc")
}

/// Replaces every `@KEY@` of `tpl`.
pub(crate) fn fill(tpl: &str, subs: &[(&str, String)]) -> String {
    let mut s = tpl.to_string();
    for (k, v) in subs {
        s = s.replace(&format!("@{k}@"), v);
    }
    s
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::codegen::prelude::kernel_params;
    use crate::family::FamilyId;
    use crate::ir::{AccMode, EpOp, Func, Layout, Param};

    /// The CUDA source of `family` for `ir`.
    fn emit(ir: &GemmIr, family: FamilyId) -> String {
        family.emit(ir, Backend::Cuda, Variant::Full)
    }

    /// `gelu(alpha * (a * b) + bias) + res` with the given operand types and layouts.
    pub(crate) fn ir(dt: DType, acc: AccMode, la: Layout, lb: Layout) -> GemmIr {
        GemmIr {
            name: "t".into(),
            params: vec![
                Param::matrix("a", dt, la),
                Param::matrix("b", dt, lb),
                Param::row("bias", DType::F32),
                Param::matrix("res", dt, Layout::RowMajor),
                Param::scalar("alpha"),
            ],
            a: 0,
            a_t: false,
            b: 1,
            b_t: false,
            ab_dtype: dt,
            acc,
            out_dtype: dt,
            out_layout: Layout::RowMajor,
            epilogue: vec![
                EpOp::Param(4),
                EpOp::Acc,
                EpOp::Mul,
                EpOp::Param(2),
                EpOp::Add,
                EpOp::Call(Func::Gelu),
                EpOp::Param(3),
                EpOp::Add,
            ],
        }
    }

    const LAYOUTS: [(Layout, Layout); 4] = [
        (Layout::RowMajor, Layout::RowMajor),
        (Layout::RowMajor, Layout::ColMajor),
        (Layout::ColMajor, Layout::RowMajor),
        (Layout::ColMajor, Layout::ColMajor),
    ];

    #[test]
    fn source_names_the_kernel_and_its_abi() {
        let g = ir(DType::F16, AccMode::F32, Layout::RowMajor, Layout::RowMajor);
        let s = emit(&g, FamilyId::MmaSync);
        assert!(s.contains(&format!(
            "extern \"C\" __global__ void __launch_bounds__(CG_THREADS) {}(int M, int N, int K, ",
            g.symbol()
        )));
        assert!(s.contains(&kernel_params(&g, Backend::Cuda)));
        assert!(s.contains("cg_epilogue(acc, i, j, M, N, p2, p3, ld3, p4)"), "{s}");
        assert!(
            s.contains("const long cg_bz = (long)blockIdx.z; out += offo + cg_bz * bso; p0 += off0 + cg_bz * bs0; p1 += off1 + cg_bz * bs1; p2 += off2 + cg_bz * bs2; p3 += off3 + cg_bz * bs3;"),
            "{s}"
        );
        assert!(!s.contains("#include"));
        assert!(!s.contains('@'), "unfilled template key");
    }

    #[test]
    fn mma_instruction_per_dtype() {
        for (la, lb) in LAYOUTS {
            let f16 = emit(&ir(DType::F16, AccMode::F32, la, lb), FamilyId::MmaSync);
            assert!(f16.contains("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"));
            let bf16 = emit(&ir(DType::Bf16, AccMode::F32, la, lb), FamilyId::MmaSync);
            assert!(bf16.contains("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));
            let tf32 = emit(&ir(DType::F32, AccMode::Tf32, la, lb), FamilyId::MmaSync);
            assert!(tf32.contains("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"));
            assert!(tf32.contains("cvt.rna.tf32.f32"));
            // 32-bit elements cannot be transposed by ldmatrix: MN-major tf32 operands
            // are read with scalar loads, K-major ones with plain ldmatrix.
            assert!(!tf32.contains("cg_ldsm_x4_trans("));
            assert_eq!(tf32.contains("cg_ldsm_x4(af[mi]"), la == Layout::RowMajor);
            assert_eq!(tf32.contains("cg_ldsm_x4(r,"), lb == Layout::ColMajor);
            for s in [&f16, &bf16, &tf32] {
                assert!(s.contains("cp.async.cg.shared.global"));
                assert!(s.contains("cp.async.commit_group"));
                assert!(s.contains("cp.async.wait_group"));
                assert!(s.contains("#define SWZ(row, chunk, cpr)"));
                assert!(s.contains("SWZ(row, chunk, cpr)) * 16"));
                assert!(!s.contains('@'));
            }
        }
    }

    #[test]
    fn ldmatrix_trans_exactly_for_mn_major_operands() {
        for (la, lb) in LAYOUTS {
            let s = emit(&ir(DType::F16, AccMode::F32, la, lb), FamilyId::MmaSync);
            let body = &s[s.find("extern \"C\"").unwrap()..];
            let a_trans = body.contains("cg_ldsm_x4_trans(af[mi]");
            let a_plain = body.contains("cg_ldsm_x4(af[mi]");
            let b_trans = body.contains("cg_ldsm_x4_trans(r,");
            let b_plain = body.contains("cg_ldsm_x4(r,");
            assert_eq!(
                (a_trans, a_plain),
                (la == Layout::ColMajor, la == Layout::RowMajor),
                "A {la:?}"
            );
            assert_eq!(
                (b_trans, b_plain),
                (lb == Layout::RowMajor, lb == Layout::ColMajor),
                "B {lb:?}"
            );
            assert!(s.contains("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"));
        }
    }

    #[test]
    fn the_simt_family_writes_the_fma_kernel() {
        let g = ir(DType::F32, AccMode::F32, Layout::ColMajor, Layout::RowMajor);
        let s = emit(&g, FamilyId::Simt);
        assert!(s.contains("fmaf(a[mi], b[ni], c[mi][ni])"));
        assert!(!s.contains("mma.sync"));
        assert!(!s.contains("cp.async"));
        assert!(s.contains(&g.symbol()));
        let h = emit(
            &ir(DType::Bf16, AccMode::F32, Layout::RowMajor, Layout::ColMajor),
            FamilyId::Simt,
        );
        assert!(h.contains("cg_bf16_to_f32(x)"));
    }

    #[test]
    fn transposed_operands_follow_the_kernel_side_layout() {
        // a.t() of a column-major parameter is row-major for the kernel: K-major A.
        let mut g = ir(DType::F16, AccMode::F32, Layout::ColMajor, Layout::RowMajor);
        g.a_t = true;
        g.b_t = true;
        let s = emit(&g, FamilyId::MmaSync);
        assert!(s.contains("cg_ldsm_x4(af[mi]"));
        assert!(s.contains("cg_ldsm_x4(r,"));
    }

    #[test]
    fn output_is_deterministic() {
        for (la, lb) in LAYOUTS {
            for (dt, acc, family) in [
                (DType::F16, AccMode::F32, FamilyId::MmaSync),
                (DType::F32, AccMode::Tf32, FamilyId::MmaSync),
                (DType::F32, AccMode::F32, FamilyId::Simt),
            ] {
                let g = ir(dt, acc, la, lb);
                assert_eq!(emit(&g, family), emit(&g.clone(), family));
            }
        }
    }
}
