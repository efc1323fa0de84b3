//! The `gemv_n` family's CUDA source (header-free, NVRTC).
//!
//! One block computes `CG_NB = CHUNKS * CG_VEC` output columns for every row (`M <= MR`).
//! Lane `l` of warp `w` takes the `l % CHUNKS`-th 16-byte chunk of the block's columns
//! and the K-lane `w * 32 / CHUNKS + l / CHUNKS`: it walks K in steps of `CG_VEC` rows of
//! W (one chunk per row, all in flight before the first multiply) with X's `CG_VEC`
//! values per row, so a warp's loads are `CHUNKS` adjacent chunks of `32 / CHUNKS` rows.
//! Lanes of a chunk sum by shuffles, the warps through shared memory in warp order (the
//! same bits on every run), and the block's threads apply the fused epilogue and store.
//! With `KSPLIT` > 1 the grid's `y` splits K as well (W's rows are long: a strip of
//! columns alone leaves too few blocks at N = 4096), the splits meeting as
//! [`crate::family::strip_sum`] says.
//!
//! Rows of W that do not start on 16-byte boundaries (an odd N: a 50257-word vocabulary's
//! output layer; a view of odd pitch) take the same walk, each row's chunk read through
//! the one or two aligned chunks that hold it and shifted into place (the gemv family's
//! `cg_win`), where they were read element by element.

use crate::codegen::cuda::{ab_type, fill, preamble};
use crate::codegen::prelude::{kernel_params, variant_store, view_prologue};
use crate::codegen::Variant;
use crate::family::gemv::{chunk_helpers, x_loads};
use crate::family::{strip_sum, turned};
use crate::ir::GemmIr;
use crate::target::Backend;

/// The CUDA source of diagnosis variant `variant` ([`Variant::Full`]: the kernel).
///
/// - `LoadOnly`: every load stays; the multiply-adds become adds of each loaded value.
/// - `NoEpilogue`: the store writes the raw dot product.
/// - `ComputeOnly`: no global load of X or W; the multiply-adds run on values derived
///   from the loop index (which no compiler can fold away).
pub(super) fn emit_variant(ir: &GemmIr, variant: Variant) -> String {
    let mut s = preamble(ir, "gemv_n fma", variant);
    let (ab_t, _) = ab_type(ir.ab_dtype);
    // W's chunk of row kk in each walk (`[raw type, load, unpack]`): whole 16-byte chunks,
    // and windows over them where rows may start anywhere in one.
    let fake = [
        "cg_u4",
        "cg_u4{(unsigned)(kk), (unsigned)j0, (unsigned)(kk) * 3u, (unsigned)j0 * 5u}",
        "cg_unpack",
    ];
    let (w_vec, w_win, load_x, load_x_elem) = match variant {
        Variant::ComputeOnly => (
            fake,
            fake,
            "for (int e = 0; e < CG_VEC; ++e) x[d][e] = (float)(k + e + i) * 1e-9f",
            "(float)(kk + i) * 1e-9f",
        ),
        _ => (
            ["cg_u4", "cg_ld16(gw + (long)(kk) * CG_LDW + j0)", "cg_unpack"],
            [
                "cg_win",
                "cg_win_load(gw + (long)(kk) * CG_LDW + j0, CG_C - j0)",
                "cg_win_unpack",
            ],
            "CG_LOAD_X_STEP(i, k, x[d])",
            "CG_X(i, kk)",
        ),
    };
    let walk = |[raw_t, load, unpack]: [&str; 3]| {
        fill(
            WALK,
            &[
                ("RAW_T", raw_t.to_string()),
                ("LOAD_W", load.to_string()),
                ("UNPACK_W", unpack.to_string()),
            ],
        )
    };
    let math = match variant {
        // Braced: the loops put it after a `for` without braces of their own.
        Variant::LoadOnly => "{ acc[0][c] += b[c]; acc[i][0] += x[i][e]; }",
        _ => "acc[i][c] = fmaf(x[i][e], b[c], acc[i][c]);",
    };
    s.push_str(&fill(
        KERNEL,
        &[
            ("AB_T", ab_t.to_string()),
            ("HELPERS", chunk_helpers(ir)),
            ("ROLES", roles(ir, Backend::Cuda)),
            ("SPLIT_HEAD", strip_sum::cuda_split_head()),
            ("SYM", ir.symbol()),
            ("PARAMS", kernel_params(ir, Backend::Cuda)),
            ("VIEW", view_prologue(ir, Backend::Cuda)),
            ("WALK_VEC", walk(w_vec)),
            ("WALK_WIN", walk(w_win)),
            ("LOAD_X", load_x.to_string()),
            ("LOAD_X_ELEM", load_x_elem.to_string()),
            ("MATH", math.to_string()),
            (
                "TAIL",
                strip_sum::cuda_tail(turned::STORE_COORDS, &variant_store(ir, variant, "ci", "cj", "sum")),
            ),
        ],
    ));
    s
}

/// Both forms' roles (`SWAP` 0 or 1) as preprocessor definitions: `gx`/`CG_LDX` the
/// MR-row side X (A, or B turned around), `gw`/`CG_LDW` the streamed W (B's rows, or A's
/// columns), `CG_R`/`CG_C` their extents, whether X is stored K-contiguous
/// (`CG_X_ROWS`) and the two sides' 16-byte flags (`CG_X_VEC`, `CG_W_VEC`), and X's
/// loads. A form the kernel's layouts do not allow is an `#error` (the plan never gives
/// it). Shared with the OpenCL source (`backend`).
pub(super) fn roles(ir: &GemmIr, backend: Backend) -> String {
    let form = |swap: bool| -> String {
        if !super::modes(ir).contains(&swap) {
            let (w_name, what) = if swap {
                ("A", "column-major (M-contiguous)")
            } else {
                ("B", "row-major (N-contiguous)")
            };
            return format!("#error \"this gemv_n form streams {w_name}, which must be {what}\"\n");
        }
        let (x_rows, x_vec, w_vec) = if swap {
            (ir.b_layout() == crate::ir::Layout::ColMajor, "B_VEC", "A_VEC")
        } else {
            (ir.a_layout() == crate::ir::Layout::RowMajor, "A_VEC", "B_VEC")
        };
        let (elem, chunk) = x_loads(ir, backend, x_rows);
        // A step's CG_VEC values of X's row i from k: one chunk where X's rows are
        // K-contiguous and 16-byte aligned, else element by element.
        let step = if x_rows {
            format!(
                "if (CG_X_VEC) {{ {chunk}; }} else {{ for (int e = 0; e < CG_VEC; ++e) dst[e] = CG_X(i, (k) + e); }}"
            )
        } else {
            "for (int e = 0; e < CG_VEC; ++e) dst[e] = CG_X(i, (k) + e)".to_string()
        };
        format!(
            "{}#define CG_X_ROWS {}\n#define CG_X_VEC {x_vec}\n#define CG_W_VEC {w_vec}\n#define CG_X(i, k) {elem}\n#define CG_LOAD_X_STEP(i, k, dst) {step}\n",
            turned::role_defines(ir, swap),
            x_rows as u32
        )
    };
    turned::forms("MR", &form(true), &form(false))
}

/// A strip's walk down its rows of K (`@RAW_T@`, `@LOAD_W@`, `@UNPACK_W@`: a row's
/// chunk as loaded, its load from row `kk` and its unpacking into `b`).
const WALK: &str = r#"        /* Rows of X past CG_R read the last one (always in bounds, M, N >= 1 at launch):
           those sums are never stored. */
        int k = kb + kl * CG_VEC;
        /* A step's CG_VEC chunks are enough in flight; unrolled further, MR = 1 spills. */
#pragma unroll 1
        for (; k + CG_VEC <= ke; k += CG_KL * CG_VEC) {
            @RAW_T@ w[CG_VEC];
#pragma unroll
            for (int e = 0; e < CG_VEC; ++e) {
                const int kk = k + e;
                w[e] = @LOAD_W@;
            }
            float x[MR][CG_VEC];
#pragma unroll
            for (int d = 0; d < MR; ++d) {
                const int i = d < CG_R ? d : CG_R - 1;
                @LOAD_X@;
            }
#pragma unroll
            for (int e = 0; e < CG_VEC; ++e) {
                float b[CG_VEC];
                @UNPACK_W@(w[e], b);
#pragma unroll
                for (int i = 0; i < MR; ++i)
#pragma unroll
                    for (int c = 0; c < CG_VEC; ++c) @MATH@
            }
        }
        /* K's last rows, fewer than a step (one lane of the block has them). */
        for (int t = 0; k + t < ke && t < CG_VEC; ++t) {
            const int kk = k + t, e = 0;
            float b[CG_VEC];
            @UNPACK_W@(@LOAD_W@, b);
            float x[MR][1];
#pragma unroll
            for (int i = 0; i < MR; ++i) x[i][0] = i < CG_R ? @LOAD_X_ELEM@ : 0.0f;
#pragma unroll
            for (int i = 0; i < MR; ++i)
#pragma unroll
                for (int c = 0; c < CG_VEC; ++c) @MATH@
        }"#;

const KERNEL: &str = r#"
#define CG_THREADS (WARPS * 32)
typedef @AB_T@ cg_ab_t;
#define CG_VEC (16 / (int)sizeof(cg_ab_t))
#define CG_NB (CHUNKS * CG_VEC)
#define CG_KL (CG_THREADS / CHUNKS)
static_assert(MR >= 1 && MR <= 8, "MR: 1 to 8 rows");
static_assert(CHUNKS >= 1 && CHUNKS <= 32 && (CHUNKS & (CHUNKS - 1)) == 0, "CHUNKS: a power of two up to 32");
@SPLIT_HEAD@@ROLES@
@HELPERS@
/* X has CG_R <= MR rows, W CG_C columns (N-contiguous rows of K); C(i, j) = X(i) . W(:, j),
   stored at (i, j) of the output, or at (j, i) turned around. */
/* One block per SM is all the bound asks: at 8 blocks ptxas spills MR = 1 at 32 registers. */
extern "C" __global__ void __launch_bounds__(CG_THREADS, 1) @SYM@(
#if KSPLIT > 1
    float* __restrict__ cg_ws, unsigned* __restrict__ cg_flags,
#endif
    int M, int N, int K, @PARAMS@) {
    __shared__ float cg_red[WARPS][CHUNKS][MR][CG_VEC];
    @VIEW@
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int chunk = lane % CHUNKS;
    const int kl = warp * (32 / CHUNKS) + lane / CHUNKS;
    const int j0 = blockIdx.x * CG_NB + chunk * CG_VEC;
    /* This block's rows of K, [kb, ke): split blockIdx.y of KSPLIT, in whole steps but
       the last (so that X's chunks stay 16-byte aligned). */
    const int steps = (K + CG_VEC - 1) / CG_VEC;
    const int kb = (int)((long long)blockIdx.y * steps / KSPLIT) * CG_VEC;
    const int ke = min(K, (int)((long long)(blockIdx.y + 1) * steps / KSPLIT) * CG_VEC);
    const cg_ab_t* __restrict__ gx = CG_XP;
    const cg_ab_t* __restrict__ gw = CG_WP;
    (void)gx; (void)gw;
    float acc[MR][CG_VEC];
#pragma unroll
    for (int i = 0; i < MR; ++i)
#pragma unroll
        for (int c = 0; c < CG_VEC; ++c) acc[i][c] = 0.0f;

    if (CG_W_VEC && j0 + CG_VEC <= CG_C) {
        /* A whole 16-byte chunk of each row of W. */
@WALK_VEC@
    } else if (j0 < CG_C) {
        /* Rows of W that do not all start on 16-byte boundaries (an odd N, a view of odd
           pitch), or the last chunk, which crosses CG_C: the same walk, each row's
           CG_VEC columns from j0 a window over the aligned chunks that hold them
           (cg_win; the columns past CG_C read what lies there, and their sums are never
           stored). Once element by element: eight 2-byte loads a row's chunk. */
@WALK_WIN@
    }

    /* The K-lanes of a chunk within the warp, then the warps in order. */
#pragma unroll
    for (int i = 0; i < MR; ++i)
#pragma unroll
        for (int c = 0; c < CG_VEC; ++c) {
            float v = acc[i][c];
#pragma unroll
            for (int off = 16; off >= CHUNKS; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
            if (lane < CHUNKS) cg_red[warp][lane][i][c] = v;
        }
    __syncthreads();
#define CG_TR MR
#define CG_RED(w, i, jj) cg_red[w][(jj) / CG_VEC][i][(jj) % CG_VEC]
@TAIL@
}
"#;
