//! The `gemv_n` family's OpenCL C 1.2 source: the CUDA kernel's plan (see `emit.rs`) in a
//! dialect without warp shuffles.
//!
//! One work-group of `WARPS × 32` work-items computes `CG_NB = CHUNKS * CG_VEC` output
//! columns for every row (`M <= MR`): work-item `t` takes chunk `t % CHUNKS` of the
//! columns and K-lane `t / CHUNKS`, walking K in steps of `CG_VEC` rows of W (one 16-byte
//! chunk a row, read as a whole aligned vector). The partial sums of one row at a time go
//! through local memory, and one work-item per output adds its chunk's K-lanes in
//! work-item order (the same bits on every run), applies the fused epilogue and stores.
//! With `KSPLIT` > 1 the grid's second dimension splits K over work-groups as well: each
//! leaves its sums in its slot, and a second kernel adds a strip's slots in split order
//! (`strip_sum::SUM_KERNEL_SUFFIX`).

use crate::codegen::prelude::{kernel_params, variant_store, view_prologue};
use crate::codegen::Variant;
use crate::family::gemv::{chunk_fn, opencl_head};
use crate::family::strip_sum;
use crate::ir::GemmIr;
use crate::target::Backend;
use std::fmt::Write;

/// The OpenCL C source of diagnosis variant `variant` ([`Variant::Full`]: the kernel),
/// with the same symbol, arguments and defines in every variant (as the CUDA source's:
/// `LoadOnly` adds the loaded values, `NoEpilogue` stores the raw sums, `ComputeOnly`
/// loads nothing).
pub(super) fn emit_variant(ir: &GemmIr, variant: Variant) -> String {
    let d = Backend::Opencl;
    let mut s = opencl_head(ir, variant, "gemv_n");
    let (vec, chunk_fn) = chunk_fn(ir);
    let st = d.storage(ir.ab_dtype);
    // W's chunk of row kk into `b` in each walk: a whole 16-byte chunk, and a window over
    // the chunks where rows may start anywhere in one.
    let (w_vec, w_win, load_x, load_x_elem) = match variant {
        Variant::ComputeOnly => {
            let fake = "for (int c = 0; c < CG_VEC; ++c) b[c] = (float)(kk - j0 - c) * 1e-9f;";
            (
                fake,
                fake,
                "for (int e = 0; e < CG_VEC; ++e) x[d][e] = (float)(k + e + i) * 1e-9f",
                "(float)(kk + i) * 1e-9f",
            )
        }
        _ => (
            "cg_chunk(gw, (long)kk * CG_LDW + j0, b);",
            "cg_win_unpack(cg_win_load(gw + (long)kk * CG_LDW + j0, CG_C - j0), b);",
            "CG_LOAD_X_STEP(i, k, x[d])",
            "CG_X(i, kk)",
        ),
    };
    let math = match variant {
        // Braced: the loops put it after a `for` without braces of their own.
        Variant::LoadOnly => "{ acc[0][c] += b[c]; acc[i][0] += x[i][e]; }",
        _ => "acc[i][c] = fma(x[i][e], b[c], acc[i][c]);",
    };
    // A strip's walk down its rows of K, CG_VEC rows a step, then K's last rows; rows of
    // X past CG_R read the last one (in bounds: M, N >= 1 at launch), and those sums are
    // never stored.
    let walk = |load_w: &str| {
        format!(
            r#"        int k = kb + kl * CG_VEC;
        for (; k + CG_VEC <= ke; k += CG_KL * CG_VEC) {{
            float x[MR][CG_VEC];
            for (int d = 0; d < MR; ++d) {{
                const int i = d < CG_R ? d : CG_R - 1;
                {load_x};
            }}
            for (int e = 0; e < CG_VEC; ++e) {{
                const int kk = k + e;
                float b[CG_VEC];
                {load_w}
                for (int i = 0; i < MR; ++i)
                    for (int c = 0; c < CG_VEC; ++c) {math}
            }}
        }}
        /* K's last rows, fewer than a step. */
        for (int t = 0; k + t < ke && t < CG_VEC; ++t) {{
            const int kk = k + t, e = 0;
            float x[MR][1];
            for (int i = 0; i < MR; ++i) x[i][0] = i < CG_R ? {load_x_elem} : 0.0f;
            float b[CG_VEC];
            {load_w}
            for (int i = 0; i < MR; ++i)
                for (int c = 0; c < CG_VEC; ++c) {math}
        }}"#
        )
    };
    let store = variant_store(ir, variant, "ci", "cj", "sum");
    let g = d.global();
    let (params, view) = (kernel_params(ir, d), view_prologue(ir, d));
    let _ = write!(
        s,
        r#"
#ifndef MR
#error "gemv_n parameters MR WARPS CHUNKS must be defined (-D) at compile time"
#endif
#ifndef A_VEC
#define A_VEC 0
#endif
#ifndef B_VEC
#define B_VEC 0
#endif
#define CG_THREADS (WARPS * 32)
#define CG_VEC {vec}
#define CG_NB (CHUNKS * CG_VEC)
#define CG_KL (CG_THREADS / CHUNKS)
#ifndef KSPLIT
#define KSPLIT 1
#endif
#if MR < 1 || MR > 8 || CHUNKS < 1 || CHUNKS > 32 || (CHUNKS & (CHUNKS - 1)) != 0 || KSPLIT < 1 || KSPLIT > 32
#error "MR: 1 to 8 rows; CHUNKS: a power of two up to 32; KSPLIT: 1 to 32 work-groups along K"
#endif
#define CG_TR MR
{roles}
{chunk_fn}
__kernel {attrs}
{signature}
{{
    __local float cg_red[CG_THREADS][CG_VEC];
{split_head}
    {view}
    const int tid = get_local_id(0);
    const int chunk = tid % CHUNKS, kl = tid / CHUNKS;
    const int j0 = get_group_id(0) * CG_NB + chunk * CG_VEC;
    /* This work-group's rows of K, [kb, ke): split get_group_id(1) of KSPLIT, in whole
       steps but the last (so that X's chunks stay 16-byte aligned). */
    const int steps = (K + CG_VEC - 1) / CG_VEC;
    const int kb = (int)((long)get_group_id(1) * steps / KSPLIT) * CG_VEC;
    const int ke = min(K, (int)((long)(get_group_id(1) + 1) * steps / KSPLIT) * CG_VEC);
    const {g}{st}* gx = CG_XP;
    const {g}{st}* gw = CG_WP;
    float acc[MR][CG_VEC];
    for (int i = 0; i < MR; ++i)
        for (int c = 0; c < CG_VEC; ++c) acc[i][c] = 0.0f;

    if (CG_W_VEC && j0 + CG_VEC <= CG_C) {{
        /* Whole chunks of W's rows. */
{walk_vec}
    }} else if (j0 < CG_C) {{
        /* Rows of W that do not all start on 16-byte boundaries, or the last chunk, which
           crosses CG_C: each row's CG_VEC columns from j0 a window over the aligned
           chunks that hold them (the columns past CG_C read what lies there, and their
           sums are never stored). */
{walk_win}
    }}

    /* One row at a time: every work-item's partials, then per output its chunk's K-lanes
       in work-item order, stored (with KSPLIT > 1: left in this split's slot). */
    for (int i = 0; i < MR; ++i) {{
        for (int c = 0; c < CG_VEC; ++c) cg_red[tid][c] = acc[i][c];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int jj = tid; jj < CG_NB; jj += CG_THREADS) {{
            float sum = 0.0f;
            for (int t = jj / CG_VEC; t < CG_THREADS; t += CHUNKS) sum += cg_red[t][jj % CG_VEC];
#if KSPLIT > 1
            CG_SLOT(i, jj) = sum;
#else
            const int j = get_group_id(0) * CG_NB + jj;
            if (i < CG_R && j < CG_C) {{
{coords}
                {store};
            }}
#endif
        }}
        barrier(CLK_LOCAL_MEM_FENCE);
    }}
}}
{sum_kernel}"#,
        attrs = ATTRS,
        signature = strip_sum::opencl_signature(&ir.symbol(), &params),
        view = view,
        roles = super::emit::roles(ir, d),
        walk_vec = walk(w_vec),
        walk_win = walk(w_win),
        coords = crate::family::turned::STORE_COORDS,
        split_head = strip_sum::OPENCL_SPLIT_HEAD,
        sum_kernel = strip_sum::opencl_sum_kernel(
            &ir.symbol(),
            ATTRS,
            &params,
            &format!(
                "{}\n    {view}\n    const int tid = get_local_id(0);\n{}",
                strip_sum::OPENCL_SPLIT_HEAD,
                strip_sum::opencl_strip_sum(crate::family::turned::STORE_COORDS, &store)
            ),
        ),
    );
    s
}

/// Both kernels' work-group size.
const ATTRS: &str = "__attribute__((reqd_work_group_size(CG_THREADS, 1, 1)))";
