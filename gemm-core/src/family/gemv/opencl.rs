//! The `gemv` family's OpenCL C 1.2 source: the CUDA kernel's plan (see `emit.rs`) in a
//! dialect without warp shuffles.
//!
//! One work-group of `WARPS × 32` work-items computes `CG_NB = (WARPS / KSPLIT) * COLS`
//! output columns for every row (`M <= MR`). The 32 work-items of a "warp" (a logical
//! group; the device's SIMD width does not matter) stride their group's share of K in
//! chunks of `CG_VEC` elements (16 bytes: one `vload4`, `vload_half8` or `vload8`), each
//! chunk of A's rows read once and reused for the `COLS` columns. Every work-item then
//! leaves its partial sums in local memory, and one work-item per output adds the
//! `32 × KSPLIT` partials of its column in a fixed order (the same bits on every run),
//! applies the fused epilogue and stores. Halves go through `vload_half`, so no
//! `cl_khr_fp16` is needed.

use crate::codegen::prelude::{epilogue_fn, helpers, kernel_params, variant_store, view_prologue};
use crate::codegen::Variant;
use crate::ir::{DType, GemmIr};
use crate::target::Backend;
use std::fmt::Write;

/// The OpenCL C source of diagnosis variant `variant` ([`Variant::Full`]: the kernel),
/// with the same symbol, arguments and defines in every variant:
/// - `LoadOnly`: every load stays; the multiply-adds become adds of each loaded value.
/// - `NoEpilogue`: the store writes the raw dot product.
/// - `ComputeOnly`: no load of A or B; the multiply-adds run on values derived from the
///   loop index (which no compiler can fold away).
pub(super) fn emit_variant(ir: &GemmIr, variant: Variant) -> String {
    let d = Backend::Opencl;
    let mut s = head(ir, variant, "gemv");
    let (vec, chunk_fn) = chunk_fn(ir);
    let st = d.storage(ir.ab_dtype);
    // X and W as the CUDA source has them (`emit::roles`, either form): each load where
    // rows start on 16-byte boundaries (whole chunks) and where they may not (windows over
    // the chunks); `@LEFT@` and `@MASK_A@`/`@MASK_B@` as in the CUDA walk.
    let (load_a_vec, load_a_win, load_b_vec, load_b_win) = match variant {
        Variant::ComputeOnly => {
            let a = "for (int e = 0; e < CG_VEC; ++e) a[d][e] = (float)(k + e + i) * 1e-9f;";
            let b = "for (int e = 0; e < CG_VEC; ++e) b[e] = (float)(k + e - nn) * 1e-9f;";
            (a, a, b, b)
        }
        _ => (
            "CG_LOAD_X_VEC(i, k, a[d]);@MASK_A@",
            "CG_LOAD_X_WIN(d, i, k, @LEFT@, a[d]);@MASK_A@",
            "cg_chunk(gw, (long)nn * CG_LDW + k, b);@MASK_B@",
            "cg_win_unpack(cg_row_win(wrow[c], k, @LEFT@), b);@MASK_B@",
        ),
    };
    let math_vec = match variant {
        // Braced: the walks put it after a `for` without braces of their own.
        Variant::LoadOnly => "{ acc[0][c] += b[e]; acc[i][0] += a[i][e]; }",
        _ => "acc[i][c] = fma(a[i][e], b[e], acc[i][c]);",
    };
    // A step: X's rows, then each column's chunk and its multiply-adds.
    let step = |load_a: &str, load_b: &str, tail: bool| {
        let (left, mask_a, mask_b) = if tail {
            ("K - k", " cg_mask_k(a[d], k, K);", " cg_mask_k(b, k, K);")
        } else {
            ("CG_VEC", "", "")
        };
        format!(
            r#"            float a[MR][CG_VEC];
{}
            for (int c = 0; c < COLS; ++c) {{
                const int nn = n0 + c < CG_C ? n0 + c : CG_C - 1;
                float b[CG_VEC];
                {load_b}
                for (int i = 0; i < MR; ++i)
                    for (int e = 0; e < CG_VEC; ++e) {math_vec}
            }}"#,
            super::emit::x_block(load_a, variant == Variant::ComputeOnly, false)
        )
        .replace("@LEFT@", left)
        .replace("@FULL@", if tail { "0" } else { "1" })
        .replace("@MASK_A@", mask_a)
        .replace("@MASK_B@", mask_b)
    };
    // Whole steps, then a work-item's chunk that crosses K (`pre`: what the walk sets up).
    let walk = |load_a: &str, load_b: &str, pre: &str| {
        format!(
            "{pre}        int k = (part * 32 + lane) * CG_VEC;\n        for (; k < K - (CG_VEC - 1); k += KSPLIT * 32 * CG_VEC) {{\n{}\n        }}\n        if (k < K) {{\n{}\n        }}",
            step(load_a, load_b, false),
            step(load_a, load_b, true)
        )
    };
    // The window walk's rows, taken apart once, as the CUDA walk's.
    let win_rows = if variant == Variant::ComputeOnly {
        ""
    } else {
        "        cg_row wrow[COLS];\n        for (int c = 0; c < COLS; ++c) wrow[c] = cg_row_at(gw + (long)(n0 + c < CG_C ? n0 + c : CG_C - 1) * CG_LDW);\n#if CG_X_ROWS\n        cg_row xrow[MR];\n        for (int d = 0; d < MR; ++d) xrow[d] = cg_row_at(gx + (long)(d < CG_R ? d : CG_R - 1) * CG_LDX);\n#endif\n"
    };
    let store = variant_store(ir, variant, "ci", "cj", "sum");
    let g = d.global();
    let _ = write!(
        s,
        r#"
#ifndef MR
#error "gemv parameters MR WARPS COLS KSPLIT must be defined (-D) at compile time"
#endif
#ifndef A_VEC
#define A_VEC 0
#endif
#ifndef B_VEC
#define B_VEC 0
#endif
#define CG_THREADS (WARPS * 32)
#define CG_GROUPS (WARPS / KSPLIT)
#define CG_NB (CG_GROUPS * COLS)
#define CG_VEC {vec}
#define CG_P {p}
#define CG_E (CG_VEC / CG_P)
#if WARPS % KSPLIT != 0 || CG_NB * MR > CG_THREADS
#error "KSPLIT must divide WARPS, and the block's outputs must not outnumber its work-items"
#endif
{roles}
{chunk_fn}
{across}
{mask_fn}
__kernel __attribute__((reqd_work_group_size(CG_THREADS, 1, 1)))
void {sym}(int M, int N, int K, {params})
{{
    __local float cg_red[MR][COLS][CG_THREADS];
    {view}
    const int tid = get_local_id(0), lane = tid & 31, warp = tid >> 5;
    const int group = warp / KSPLIT, part = warp % KSPLIT;
    const int n0 = get_group_id(0) * CG_NB + group * COLS;
    const {g}{st}* gx = CG_XP;
    const {g}{st}* gw = CG_WP;
    float acc[MR][COLS];
    for (int i = 0; i < MR; ++i)
        for (int c = 0; c < COLS; ++c) acc[i][c] = 0.0f;

    /* Rows past CG_R and columns past CG_C read the last one (in bounds: M, N >= 1 at
       launch); those sums are never stored. Where every row of X and W starts on a
       16-byte boundary, whole chunks (the one that crosses K masked); elsewhere each
       work-item's CG_VEC elements of a row from the aligned chunks that hold them. */
#if {il_if}
    {{
{walk_il}
    }}
#else
    if (CG_VEC_OK) {{
{walk_vec}
    }} else {{
{walk_win}
    }}
#endif

    /* Every work-item's partials, then per output the 32 x KSPLIT of its column group
       in work-item order. */
    for (int i = 0; i < MR; ++i)
        for (int c = 0; c < COLS; ++c) cg_red[i][c][tid] = acc[i][c];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (tid < CG_NB * MR) {{
        const int i = tid / CG_NB, cc = tid % CG_NB, g = cc / COLS, c = cc % COLS;
        const int j = get_group_id(0) * CG_NB + cc;
        if (i < CG_R && j < CG_C) {{
            float sum = 0.0f;
            for (int t = g * KSPLIT * 32; t < (g + 1) * KSPLIT * 32; ++t) sum += cg_red[i][c][t];
{coords}
            {store};
        }}
    }}
}}
"#,
        sym = ir.symbol(),
        p = 4 / ir.ab_dtype.size(),
        params = kernel_params(ir, d),
        view = view_prologue(ir, Backend::Opencl),
        roles = super::emit::roles(ir, d),
        across = super::emit::across_fns(ir, d),
        mask_fn = MASK_FN,
        il_if = if variant == Variant::ComputeOnly { "0" } else { "CG_IL" },
        walk_il = if variant == Variant::ComputeOnly {
            String::new()
        } else {
            super::emit::il_walk(&format!("const {g}{st}*"), false).replace("@MATH_VEC@", math_vec)
        },
        walk_vec = walk(load_a_vec, load_b_vec, ""),
        walk_win = walk(load_a_win, load_b_win, win_rows),
        coords = crate::family::turned::STORE_COORDS,
    );
    s
}

/// The start of an OpenCL gemv family's source (`kind`, named in its first comment): the
/// variant's marker, the helpers and, unless the variant skips it, the epilogue.
pub(in crate::family) fn head(ir: &GemmIr, variant: Variant, kind: &str) -> String {
    let d = Backend::Opencl;
    let mut s = variant.marker();
    let _ = writeln!(
        s,
        "/* crossgemm kernel `{}`: out = {} (OpenCL C 1.2, {kind}) */",
        ir.name,
        ir.epilogue_text()
    );
    s.push_str(&helpers(d));
    if !variant.skips_epilogue() {
        s.push_str(&epilogue_fn(ir, d));
    }
    s
}

/// The OpenCL gemv families' chunk reader `cg_chunk(p, i, out)` (`CG_VEC` consecutive
/// elements from `p + i`, 16 bytes and 16-byte aligned, as floats), the window over the
/// chunks of a row at any element alignment (`cg_win_load`, `cg_win_unpack`: the CUDA
/// helpers of `emit::chunk_helpers`, in OpenCL C) and `CG_VEC`.
pub(in crate::family) fn chunk_fn(ir: &GemmIr) -> (u32, String) {
    let d = Backend::Opencl;
    let g = d.global();
    let st = d.storage(ir.ab_dtype);
    // One 16-byte load a chunk: the vector path runs only where every row starts on a
    // 16-byte boundary (A_VEC, B_VEC) and chunks start at multiples of CG_VEC, so the
    // chunk is a whole aligned uint4/float4. `vloadN` promises element alignment only:
    // NVIDIA's OpenCL compiled `vload_half8` from global memory to eight 2-byte loads
    // (ld.global.nc.u16 in its PTX, bench/results/h200-2026-12-02h), and the kernel moved
    // 1.5 TB/s. The halves are converted from registers (`vload_half8` of the private copy).
    // Through vstoreN into the private array: OpenCL C 1.2 has no subscript on vectors.
    let (vec, unpack) = match ir.ab_dtype {
        DType::F32 => (4, "vstore4(as_float4(w), 0, out);"),
        DType::F16 => (8, "vstore8(vload_half8(0, (const __private half*)&w), 0, out);"),
        DType::Bf16 => (
            8,
            "const uint u[4] = {w.x, w.y, w.z, w.w};\n    for (int e = 0; e < 4; ++e) {\n        out[2 * e] = as_float(u[e] << 16);\n        out[2 * e + 1] = as_float(u[e] & 0xffff0000u);\n    }",
        ),
    };
    (
        vec,
        format!(
            "/* The CG_VEC elements of a 16-byte chunk in registers, as floats. */\nstatic inline void cg_unpack4(uint4 w, float* out) {{\n    {unpack}\n}}\n/* CG_VEC consecutive elements from p + i (16 bytes, 16-byte aligned), as floats. */\nstatic inline void cg_chunk(const {g}{st}* p, long i, float* out) {{\n    cg_unpack4(*(const {g}uint4*)(p + i), out);\n}}\n{}",
            WINDOW_FNS.replace("@G@", g).replace("@ST@", st)
        ),
    )
}

/// The gemv kernel's masking of what lies past K (`cg_mask_k`: the CUDA source's, in
/// OpenCL C; after `CG_VEC`).
const MASK_FN: &str = r#"/* The elements k + e >= K of a row's CG_VEC from k read as zeros (in X and W alike:
   what lies past K may be anything, NaN too). */
static inline void cg_mask_k(float* f, int k, int K) {
    if (k + CG_VEC > K)
        for (int e = 0; e < CG_VEC; ++e)
            if (k + e >= K) f[e] = 0.0f;
}
"#;

/// The OpenCL form of the CUDA window helpers (`@G@`: the global qualifier, `@ST@` the
/// element's storage type).
const WINDOW_FNS: &str = r#"/* CG_VEC consecutive elements of a row from p, where p may lie at any element of a
   16-byte chunk: the aligned chunk holding p and, where the window reaches one of the
   row's elements into it (`left`: the row's elements from p on), the next one; `off`
   bytes of p into the first. No byte outside the chunks holding elements of the row is
   read. */
typedef struct {
    uint4 lo, hi;
    uint off;
} cg_win;
/* Where a row's windows come from: the aligned chunk at or below its start p and the
   bytes p lies into it (a walk along the row takes p apart once). */
typedef struct {
    const @G@@ST@* c;
    uint off;
} cg_row;
static inline cg_row cg_row_at(const @G@@ST@* p) {
    cg_row r;
    r.off = (uint)((ulong)p & 15);
    r.c = p - r.off / sizeof(@ST@);
    return r;
}
/* The window of the row's elements from k (a multiple of CG_VEC), `left` of them from k on. */
static inline cg_win cg_row_win(cg_row r, int k, int left) {
    cg_win w;
    w.off = r.off;
    const @G@uint4* c = (const @G@uint4*)(r.c + k);
    w.lo = c[0];
    const int valid = left < CG_VEC ? left : CG_VEC;
    w.hi = r.off + valid * sizeof(@ST@) > 16 ? c[1] : (uint4)(0u);
    return w;
}
static inline cg_win cg_win_load(const @G@@ST@* p, int left) {
    return cg_row_win(cg_row_at(p), 0, left);
}
static inline uint cg_fsr(uint lo, uint hi, uint sh) {
    return sh ? (lo >> sh) | (hi << (32u - sh)) : lo;
}
/* A window's elements as floats: its two chunks shifted down by `off` bytes, by whole
   words through selects, then by the rest. */
static inline void cg_win_unpack(cg_win w, float* out) {
    uint x0 = w.lo.x, x1 = w.lo.y, x2 = w.lo.z, x3 = w.lo.w, x4 = w.hi.x, x5 = w.hi.y, x6 = w.hi.z, x7 = w.hi.w;
    if (w.off & 8u) { x0 = x2; x1 = x3; x2 = x4; x3 = x5; x4 = x6; x5 = x7; }
    if (w.off & 4u) { x0 = x1; x1 = x2; x2 = x3; x3 = x4; x4 = x5; }
    const uint sh = (w.off & 3u) * 8u;
    cg_unpack4((uint4)(cg_fsr(x0, x1, sh), cg_fsr(x1, x2, sh), cg_fsr(x2, x3, sh), cg_fsr(x3, x4, sh)), out);
}
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{AccMode, EpOp, Func, Layout, Param};

    fn ir(dtype: DType, a: Layout) -> GemmIr {
        GemmIr {
            name: "decode".into(),
            params: vec![
                Param::matrix("x", dtype, a),
                Param::matrix("w", dtype, Layout::ColMajor),
                Param::row("bias", dtype),
            ],
            a: 0,
            a_t: false,
            b: 1,
            b_t: false,
            ab_dtype: dtype,
            acc: AccMode::F32,
            out_dtype: dtype,
            out_layout: Layout::RowMajor,
            epilogue: vec![EpOp::Acc, EpOp::Param(2), EpOp::Add, EpOp::Call(Func::Silu)],
        }
    }

    #[test]
    fn the_source_is_opencl_with_the_epilogue_fused_and_no_shuffles() {
        for dtype in [DType::F16, DType::Bf16, DType::F32] {
            for a in [Layout::RowMajor, Layout::ColMajor] {
                let s = emit_variant(&ir(dtype, a), Variant::Full);
                assert!(s.contains("__kernel") && s.contains("reqd_work_group_size(CG_THREADS, 1, 1)"));
                assert!(
                    s.contains("cg_silu") && s.contains("cg_epilogue(sum, ci, cj, M, N, p2)"),
                    "{s}"
                );
                assert!(!s.contains("__shfl") && !s.contains("cl_khr_fp16") && !s.contains("__global__"));
                assert_eq!(s.contains("vload_half8"), dtype == DType::F16);
                // One 16-byte load a chunk, whatever the element type.
                assert!(s.contains("*(const __global uint4*)(p + i)") || dtype == DType::F32);
                assert_eq!(s, emit_variant(&ir(dtype, a), Variant::Full), "deterministic");
            }
        }
        let raw = emit_variant(&ir(DType::F16, Layout::RowMajor), Variant::NoEpilogue);
        assert!(!raw.contains("cg_epilogue(") && raw.contains("cg_st_f16(out, (long)(ci) * ldo + (cj), sum)"));
    }
}
