//! The `gemv` family's CUDA source (header-free, NVRTC).
//!
//! One block computes `CG_NB = (WARPS / KSPLIT) * COLS` output columns for every row
//! (`M <= MR`). Warp `w` takes column group `w / KSPLIT` and the `w % KSPLIT`-th share of
//! K; its lanes stride K in 16-byte chunks (B's columns are K-contiguous), each chunk of
//! A's rows loaded once and reused for the `COLS` columns. Lanes then sum by shuffles,
//! the `KSPLIT` warps of a group through shared memory in a fixed order (the same bits
//! on every run), and one thread per output applies the fused epilogue and stores.

use crate::codegen::cuda::{ab_type, epilogue_store, fill, preamble};
use crate::codegen::prelude::{kernel_params, view_prologue};
use crate::codegen::Variant;
use crate::ir::{DType, GemmIr, Layout};
use crate::target::Backend;

/// The CUDA source of diagnosis variant `variant` ([`Variant::Full`]: the kernel).
///
/// - `LoadOnly`: every load stays; the multiply-adds become adds of each loaded value.
/// - `NoEpilogue`: the store writes the raw dot product.
/// - `ComputeOnly`: no global load of A or B; the multiply-adds run on values derived
///   from the loop index (which no compiler can fold away).
pub(super) fn emit_variant(ir: &GemmIr, variant: Variant) -> String {
    let mut s = preamble(ir, "gemv fma", variant);
    let (ab_t, _) = ab_type(ir.ab_dtype);
    // From the chunk's four 32-bit words (never through memory: a pointer cast of the
    // loaded struct lets the compiler split the 16-byte load into element loads).
    let unpack = match ir.ab_dtype {
        DType::F32 => "    f[0] = __uint_as_float(v.x); f[1] = __uint_as_float(v.y); f[2] = __uint_as_float(v.z); f[3] = __uint_as_float(v.w);",
        DType::F16 => "    const unsigned w[4] = {v.x, v.y, v.z, v.w};\n#pragma unroll\n    for (int e = 0; e < 4; ++e) {\n        f[2 * e] = cg_f16_to_f32((unsigned short)(w[e] & 0xffffu));\n        f[2 * e + 1] = cg_f16_to_f32((unsigned short)(w[e] >> 16));\n    }",
        DType::Bf16 => "    const unsigned w[4] = {v.x, v.y, v.z, v.w};\n#pragma unroll\n    for (int e = 0; e < 4; ++e) {\n        f[2 * e] = __uint_as_float(w[e] << 16);\n        f[2 * e + 1] = __uint_as_float(w[e] & 0xffff0000u);\n    }",
    };
    let cvt = match ir.ab_dtype {
        DType::F32 => "x",
        DType::F16 => "cg_f16_to_f32(x)",
        DType::Bf16 => "cg_bf16_to_f32(x)",
    };
    // A(i, k): row-major A has K contiguous (16-byte chunks when A_VEC), column-major A
    // is read element by element (it is M x K with M <= 8: a few cached lines).
    let a_row_major = ir.a_layout() == Layout::RowMajor;
    let (load_a_vec, load_a) = if a_row_major {
        (
            "cg_unpack(cg_ld16(ga + (long)i * @LDA@ + k), a[d]);",
            "cg_elem(ga[(long)i * @LDA@ + k])",
        )
    } else {
        (
            "for (int e = 0; e < CG_VEC; ++e) a[d][e] = cg_elem(ga[(long)(k + e) * @LDA@ + i]);",
            "cg_elem(ga[(long)k * @LDA@ + i])",
        )
    };
    let vec_ok = if a_row_major { "(A_VEC && B_VEC)" } else { "B_VEC" };
    let (math_vec, math) = match variant {
        Variant::LoadOnly => (
            "acc[0][c] += b[e]; acc[i][0] += a[i][e];",
            "acc[0][c] += b; acc[i][0] += a[i];",
        ),
        _ => (
            "acc[i][c] = fmaf(a[i][e], b[e], acc[i][c]);",
            "acc[i][c] = fmaf(a[i], b, acc[i][c]);",
        ),
    };
    let load_b_raw = match variant {
        Variant::ComputeOnly => "cg_u4{0u, 0u, 0u, 0u}",
        _ => "cg_ld16(gb + (long)n * @LDB@ + k)",
    };
    let (load_a_vec, load_a, load_b_vec, load_b) = match variant {
        // The values depend on the loop index, so the multiply-adds cannot be folded.
        Variant::ComputeOnly => (
            "for (int e = 0; e < CG_VEC; ++e) a[d][e] = (float)(k + e + i) * 1e-9f;".to_string(),
            "(float)(k + i) * 1e-9f".to_string(),
            "for (int e = 0; e < CG_VEC; ++e) b[e] = (float)(k + e - n) * 1e-9f;".to_string(),
            "(float)(k - n) * 1e-9f".to_string(),
        ),
        _ => (
            load_a_vec.to_string(),
            load_a.to_string(),
            "cg_unpack(braw[c], b);".to_string(),
            "cg_elem(gb[(long)n * @LDB@ + k])".to_string(),
        ),
    };
    let lds = [("LDA", format!("ld{}", ir.a)), ("LDB", format!("ld{}", ir.b))];
    let (load_a_vec, load_a, load_b) = (fill(&load_a_vec, &lds), fill(&load_a, &lds), fill(&load_b, &lds));
    let load_b_raw = fill(load_b_raw, &lds);
    s.push_str(&fill(
        KERNEL,
        &[
            ("AB_T", ab_t.to_string()),
            ("UNPACK", unpack.to_string()),
            ("CVT", cvt.to_string()),
            ("SYM", ir.symbol()),
            ("PARAMS", kernel_params(ir, Backend::Cuda)),
            ("VIEW", view_prologue(ir, Backend::Cuda)),
            ("A_PTR", format!("p{}", ir.a)),
            ("B_PTR", format!("p{}", ir.b)),
            ("VEC_OK", vec_ok.to_string()),
            ("LOAD_A_VEC", load_a_vec),
            ("LOAD_A", load_a),
            ("LOAD_B_VEC", load_b_vec),
            ("LOAD_B_RAW", load_b_raw),
            ("LOAD_B", load_b),
            ("MATH_VEC", math_vec.to_string()),
            ("MATH", math.to_string()),
            ("STORE", epilogue_store(ir, variant)),
        ],
    ));
    s
}

const KERNEL: &str = r#"
#define CG_THREADS (WARPS * 32)
#define CG_GROUPS (WARPS / KSPLIT)
#define CG_NB (CG_GROUPS * COLS)
typedef @AB_T@ cg_ab_t;
#define CG_VEC (16 / (int)sizeof(cg_ab_t))
static_assert(MR >= 1 && MR <= 8, "MR: 1 to 8 rows");
static_assert(WARPS % KSPLIT == 0, "KSPLIT must divide WARPS");
static_assert(CG_NB * MR <= CG_THREADS, "one thread per output of the block");

static __device__ __forceinline__ float cg_elem(cg_ab_t x) { return @CVT@; }
/* One 16-byte chunk through the read-only path (B and A are never written here). Not
   volatile: the compiler may hoist the next iteration's loads above this one's math. */
static __device__ __forceinline__ cg_u4 cg_ld16(const cg_ab_t* p) {
    cg_u4 v;
    asm("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
/* The CG_VEC elements of one 16-byte chunk, as floats. */
static __device__ __forceinline__ void cg_unpack(const cg_u4& v, float* f) {
@UNPACK@
}

extern "C" __global__ void __launch_bounds__(CG_THREADS) @SYM@(int M, int N, int K, @PARAMS@) {
    __shared__ float cg_red[WARPS][MR][COLS];
    @VIEW@
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int group = warp / KSPLIT, part = warp % KSPLIT;
    const int n0 = blockIdx.x * CG_NB + group * COLS;
    const cg_ab_t* __restrict__ ga = @A_PTR@;
    const cg_ab_t* __restrict__ gb = @B_PTR@;
    (void)ga; (void)gb;
    float acc[MR][COLS];
#pragma unroll
    for (int i = 0; i < MR; ++i)
#pragma unroll
        for (int c = 0; c < COLS; ++c) acc[i][c] = 0.0f;

    if (@VEC_OK@) {
        /* Every row of A and column of B is a whole number of 16-byte chunks. */
#pragma unroll 2
        for (int k = (part * 32 + lane) * CG_VEC; k < K; k += KSPLIT * 32 * CG_VEC) {
            /* Rows past M and columns past N read row M-1 / column N-1 instead (always in
               bounds, M, N >= 1 at launch): no predicate keeps the loads apart, and those
               sums are never stored. */
            float a[MR][CG_VEC];
#pragma unroll
            for (int d = 0; d < MR; ++d) {
                const int i = d < M ? d : M - 1;
                @LOAD_A_VEC@
            }
            /* Every column's chunk in flight before the first multiply. */
            cg_u4 braw[COLS];
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
                const int n = n0 + c < N ? n0 + c : N - 1;
                (void)n;
                braw[c] = @LOAD_B_RAW@;
            }
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
                const int n = n0 + c < N ? n0 + c : N - 1;
                (void)n;
                float b[CG_VEC];
                @LOAD_B_VEC@
#pragma unroll
                for (int i = 0; i < MR; ++i)
#pragma unroll
                    for (int e = 0; e < CG_VEC; ++e) @MATH_VEC@
            }
        }
    } else {
        for (int k = part * 32 + lane; k < K; k += KSPLIT * 32) {
            float a[MR];
#pragma unroll
            for (int i = 0; i < MR; ++i) a[i] = i < M ? @LOAD_A@ : 0.0f;
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
                const int n = n0 + c;
                if (n < N) {
                    const float b = @LOAD_B@;
#pragma unroll
                    for (int i = 0; i < MR; ++i) @MATH@
                }
            }
        }
    }

    /* Lanes of a warp, then the KSPLIT warps of a group in part order. */
#pragma unroll
    for (int i = 0; i < MR; ++i)
#pragma unroll
        for (int c = 0; c < COLS; ++c) {
            float v = acc[i][c];
#pragma unroll
            for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
            if (lane == 0) cg_red[warp][i][c] = v;
        }
    __syncthreads();
    if (tid < CG_NB * MR) {
        const int i = tid / CG_NB, cc = tid % CG_NB, g = cc / COLS, c = cc % COLS;
        const int j = blockIdx.x * CG_NB + cc;
        if (i < M && j < N) {
            float acc = 0.0f;
#pragma unroll
            for (int p = 0; p < KSPLIT; ++p) acc += cg_red[g * KSPLIT + p][i][c];
            @STORE@;
        }
    }
}
"#;
