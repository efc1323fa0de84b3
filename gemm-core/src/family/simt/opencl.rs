//! OpenCL C 1.2 generator: one tiled kernel in the CLBlast parameter family (work-group
//! tile MWG×NWG×KWG, per-thread tile MWI×NWI strided by MDIMC/NDIMC, VW-wide global
//! loads), operands staged in local memory as float, the epilogue fused before the
//! store. Halves go through `vload_half`/`vstore_half_rte`, so no `cl_khr_fp16` is needed.
//! With `KSPLIT` > 1 the grid's second dimension splits K: each work-group leaves its
//! partial tile in its slot, and a second kernel adds a tile's slots in split order and
//! stores (`strip_sum::SUM_KERNEL_SUFFIX`).

use super::OPENCL_LOCAL_PAD;
use crate::codegen::prelude::{epilogue_fn, helpers, kernel_params, variant_store, view_prologue};
use crate::codegen::Variant;
use crate::ir::{DType, GemmIr, Layout};
use crate::target::Backend;
use std::fmt::Write;

/// The OpenCL C source of diagnosis variant `variant` ([`Variant::Full`]: the kernel):
/// every variant has the same symbol, ABI and defines.
///
/// - `LoadOnly`: the tile loads and the local→private loads stay; the MWI×NWI
///   multiply-adds become MWI+NWI adds (`acc[i][0] += a[i]`, `acc[0][j] += b[j]`).
/// - `NoEpilogue`: the store writes `acc[i][j]` converted to the output type;
///   `cg_epilogue` is not emitted.
/// - `ComputeOnly`: no tile load runs; the local tiles get one store that never runs
///   (`K < 0`), so that no compiler may treat them as never written and fold their
///   loads (and the math with them) away.
pub(super) fn emit_variant(ir: &GemmIr, variant: Variant) -> String {
    let d = Backend::Opencl;
    let mut s = variant.marker();
    let _ = writeln!(
        s,
        "/* crossgemm kernel `{}`: out = {} (OpenCL C 1.2) */",
        ir.name,
        ir.epilogue_text()
    );
    s.push_str(TILE_MACROS);
    s.push_str(&helpers(d));
    s.push_str(&vector_loads(ir.ab_dtype));
    if !variant.skips_epilogue() {
        s.push_str(&epilogue_fn(ir, d));
    }
    let a_kc = ir.a_layout() == Layout::RowMajor;
    let b_kc = ir.b_layout() == Layout::ColMajor;
    let (load_a, load_b, guard) = match variant {
        Variant::ComputeOnly => (
            "        (void)A;".to_string(),
            "        (void)B;".to_string(),
            "\n    if (K < 0) { As[0][tid % MWG] = 0.0f; Bs[0][tid % NWG] = 0.0f; } /* never taken: see emit_variant */",
        ),
        _ => (
            tile_load("A", "As", "MWG", "m0", "M", a_kc, &format!("ld{}", ir.a)),
            tile_load("B", "Bs", "NWG", "n0", "N", b_kc, &format!("ld{}", ir.b)),
            "",
        ),
    };
    let math = match variant {
        Variant::LoadOnly => LOAD_ONLY_ADDS,
        _ => FMA_MATH,
    };
    let store = variant_store(ir, variant, "gi", "gj", "acc[i][j]");
    let params = kernel_params(ir, d);
    // What both kernels of a split compute before their work: where the views start, the
    // work-item's place, and the work-group's tile.
    let prologue = format!(
        r#"    {view}
    const {g}{st}* A = p{a};
    const {g}{st}* B = p{b};
    const int tx = get_local_id(0);
    const int ty = get_local_id(1);
    const int tid = ty * NDIMC + tx;

    /* Grouped launch order: GROUP_M tile rows are swept together so that neighbouring
       work-groups share rows of A and columns of B in the cache. */
    const int pid = get_group_id(0);
    const int tiles_m = (M + MWG - 1) / MWG;
    const int tiles_n = (N + NWG - 1) / NWG;
    const int in_group = GROUP_M * tiles_n;
    const int first_m = (pid / in_group) * GROUP_M;
    const int group_rows = min(tiles_m - first_m, GROUP_M);
    const int m0 = (first_m + (pid % in_group) % group_rows) * MWG;
    const int n0 = ((pid % in_group) / group_rows) * NWG;

    float acc[MWI][NWI];
#if KSPLIT > 1
    const long cg_tile = (long)get_group_id(2) * get_num_groups(0) + get_group_id(0);
    __global float* const cg_slots = cg_ws + cg_tile * (KSPLIT * MWG * NWG);
#define CG_AT(s, i, j) cg_slots[(s) * (MWG * NWG) + (ty + (i) * MDIMC) * NWG + tx + (j) * NDIMC]
#endif"#,
        view = view_prologue(ir, Backend::Opencl),
        g = d.global(),
        st = d.storage(ir.ab_dtype),
        a = ir.a,
        b = ir.b,
    );
    let store_tile = format!(
        r#"    for (int i = 0; i < MWI; i++) {{
        const int gi = m0 + ty + i * MDIMC;
        for (int j = 0; j < NWI; j++) {{
            const int gj = n0 + tx + j * NDIMC;
            if (gi < M && gj < N) {{
                {store};
            }}
        }}
    }}"#
    );
    let sum_body = format!(
        r#"{prologue}
    for (int i = 0; i < MWI; i++)
        for (int j = 0; j < NWI; j++) {{
            float sum = 0.0f;
            for (int s = 0; s < KSPLIT; ++s) sum += CG_AT(s, i, j);
            acc[i][j] = sum;
        }}
{store_tile}"#
    );
    let _ = write!(
        s,
        r#"
__kernel {attrs}
{signature}
{{
    __local float As[KWG][MWG + {pad}];
    __local float Bs[KWG][NWG + {pad}];
{prologue}
    for (int i = 0; i < MWI; i++)
        for (int j = 0; j < NWI; j++)
            acc[i][j] = 0.0f;{guard}

    /* This work-group's share of K, [kb, ke): split get_group_id(1) of KSPLIT, in whole
       KWG steps (only the last split's tile may cross K, and reads zeros past it). */
    const int steps = (K + KWG - 1) / KWG;
    const int kb = (int)((long)get_group_id(1) * steps / KSPLIT) * KWG;
    const int ke = min(K, (int)((long)(get_group_id(1) + 1) * steps / KSPLIT) * KWG);
    for (int k0 = kb; k0 < ke; k0 += KWG) {{
{load_a}
{load_b}
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < KWG; kk++) {{
            float a[MWI];
            float b[NWI];
            for (int i = 0; i < MWI; i++) a[i] = As[kk][ty + i * MDIMC];
            for (int j = 0; j < NWI; j++) b[j] = Bs[kk][tx + j * NDIMC];
{math}        }}
        barrier(CLK_LOCAL_MEM_FENCE);
    }}

#if KSPLIT > 1
    /* Every split leaves its partial tile in its slot, for the second kernel. */
    for (int i = 0; i < MWI; i++)
        for (int j = 0; j < NWI; j++)
            CG_AT(get_group_id(1), i, j) = acc[i][j];
#else
{store_tile}
#endif
}}
{sum_kernel}"#,
        attrs = ATTRS,
        signature = crate::family::strip_sum::opencl_signature(&ir.symbol(), &params),
        sum_kernel = crate::family::strip_sum::opencl_sum_kernel(&ir.symbol(), ATTRS, &params, &sum_body),
        pad = OPENCL_LOCAL_PAD,
    );
    s
}

/// Both kernels' work-group size.
const ATTRS: &str = "__attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))";

/// The MWI×NWI inner product of one k step (the full kernel's math).
const FMA_MATH: &str = "            for (int i = 0; i < MWI; i++)
                for (int j = 0; j < NWI; j++)
                    acc[i][j] += a[i] * b[j];
";

/// [`Variant::LoadOnly`]'s k step: every loaded private value added once, no product.
const LOAD_ONLY_ADDS: &str = "            for (int i = 0; i < MWI; i++) acc[i][0] += a[i];
            for (int j = 0; j < NWI; j++) acc[0][j] += b[j];
";

const TILE_MACROS: &str = r#"#ifndef MWG
#error "tile parameters MWG NWG KWG MDIMC NDIMC VW GROUP_M must be defined (-D) at compile time"
#endif
#ifndef KSPLIT
#define KSPLIT 1
#endif
#if KSPLIT < 1 || KSPLIT > 32
#error "KSPLIT: 1 to 32 work-groups along K"
#endif
#define MWI (MWG / MDIMC)
#define NWI (NWG / NDIMC)
#define NTHREADS (MDIMC * NDIMC)
"#;

/// `cg_ldv(p, base, n, out)`: VW consecutive elements from `p + base`, of which the first
/// `n` are inside the matrix (the rest read as 0). The whole-vector case uses one
/// `vloadN`, which needs only element alignment.
fn vector_loads(d: DType) -> String {
    let st = Backend::Opencl.storage(d);
    let n = d.name();
    let full = match d {
        DType::F32 => "float4 t = vload4(0, p + base); out[0] = t.s0; out[1] = t.s1; out[2] = t.s2; out[3] = t.s3;",
        DType::F16 => "float4 t = vload_half4(0, (const __global half*)(p + base)); out[0] = t.s0; out[1] = t.s1; out[2] = t.s2; out[3] = t.s3;",
        DType::Bf16 => "ushort4 t = vload4(0, p + base); out[0] = cg_bf16_to_f32(t.s0); out[1] = cg_bf16_to_f32(t.s1); out[2] = cg_bf16_to_f32(t.s2); out[3] = cg_bf16_to_f32(t.s3);",
    };
    let full2 = match d {
        DType::F32 => "float2 t = vload2(0, p + base); out[0] = t.s0; out[1] = t.s1;",
        DType::F16 => "float2 t = vload_half2(0, (const __global half*)(p + base)); out[0] = t.s0; out[1] = t.s1;",
        DType::Bf16 => "ushort2 t = vload2(0, p + base); out[0] = cg_bf16_to_f32(t.s0); out[1] = cg_bf16_to_f32(t.s1);",
    };
    format!(
        r#"static inline void cg_ldv(const __global {st}* p, long base, int n, float* out) {{
#if VW == 4
    if (n >= 4) {{ {full} return; }}
#elif VW == 2
    if (n >= 2) {{ {full2} return; }}
#endif
    for (int e = 0; e < VW; e++) out[e] = e < n ? cg_ld_{n}(p, base + e) : 0.0f;
}}
"#
    )
}

/// Cooperative load of one operand tile (`mn` rows/cols of the output × KWG of K) into
/// `local[k][mn]`, `ld` (a C expression) elements between the operand's stored rows.
/// `k_contig`: K is the operand's contiguous dimension; then consecutive threads take
/// consecutive K vectors (coalesced), else consecutive M/N vectors.
fn tile_load(op: &str, local: &str, mn_tile: &str, mn0: &str, mn_dim: &str, k_contig: bool, ld: &str) -> String {
    if k_contig {
        format!(
            r#"        for (int v = tid; v < {mn_tile} * KWG / VW; v += NTHREADS) {{
            const int r = v / (KWG / VW);
            const int k = (v % (KWG / VW)) * VW;
            const int gr = {mn0} + r;
            const int gk = k0 + k;
            float t[VW];
            const int n = gr < {mn_dim} ? min(VW, K - gk) : 0;
            cg_ldv({op}, (long)gr * {ld} + gk, n, t);
            for (int e = 0; e < VW; e++) {local}[k + e][r] = t[e];
        }}"#
        )
    } else {
        format!(
            r#"        for (int v = tid; v < {mn_tile} * KWG / VW; v += NTHREADS) {{
            const int k = v / ({mn_tile} / VW);
            const int r = (v % ({mn_tile} / VW)) * VW;
            const int gr = {mn0} + r;
            const int gk = k0 + k;
            float t[VW];
            const int n = gk < K ? min(VW, {mn_dim} - gr) : 0;
            cg_ldv({op}, (long)gk * {ld} + gr, n, t);
            for (int e = 0; e < VW; e++) {local}[k][r + e] = t[e];
        }}"#
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{AccMode, EpOp, Func, Param};

    fn ir() -> GemmIr {
        GemmIr {
            name: "linear_relu".into(),
            params: vec![
                Param::matrix("x", DType::F16, Layout::RowMajor),
                Param::matrix("w", DType::F16, Layout::ColMajor),
                Param::row("bias", DType::F16),
            ],
            a: 0,
            a_t: false,
            b: 1,
            b_t: false,
            ab_dtype: DType::F16,
            acc: AccMode::F32,
            out_dtype: DType::F16,
            out_layout: Layout::RowMajor,
            epilogue: vec![EpOp::Acc, EpOp::Param(2), EpOp::Add, EpOp::Call(Func::Relu)],
        }
    }

    #[test]
    fn source_has_the_fused_epilogue_and_half_io() {
        let s = emit_variant(&ir(), Variant::Full);
        assert!(s.contains(&ir().symbol()));
        assert!(s.contains("return cg_relu((acc + v2));"), "{s}");
        assert!(s.contains("vload_half"));
        assert!(s.contains("vstore_half_rte"));
        assert!(!s.contains("cl_khr_fp16"));
        assert_eq!(s, emit_variant(&ir(), Variant::Full), "codegen must be deterministic");
    }
}
