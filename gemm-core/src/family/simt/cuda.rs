//! The `simt` family's CUDA source: the CLBlast-style tile of the OpenCL kernel in CUDA C,
//! for operand types no tensor-core instruction takes.

use crate::codegen::cuda::{ab_type, epilogue_store, fill, preamble};
use crate::codegen::prelude::{kernel_params, view_prologue};
use crate::codegen::Variant;
use crate::ir::{GemmIr, Layout};
use crate::target::Backend;

/// The CUDA source of diagnosis variant `variant` ([`Variant::Full`]: the kernel).
///
/// - `LoadOnly`: the shared loads stay; the MWI×NWI FMAs become MWI+NWI adds.
/// - `NoEpilogue`: the store writes `acc` converted to the output type.
/// - `ComputeOnly`: no tile load (`cg_simt_load`) runs; the static shared arrays get one
///   store that never runs (`K < 0`), so that no compiler may treat them as never written
///   and fold their loads (and the FMAs) away.
pub(super) fn emit_variant(ir: &GemmIr, variant: Variant) -> String {
    let mut s = preamble(ir, "simt fma", variant);
    s.push_str(&simt_kernel(ir, variant));
    s
}

const SIMT: &str = r#"
#define CG_THREADS (MDIMC * NDIMC)
#define CG_MWI (MWG / MDIMC)
#define CG_NWI (NWG / NDIMC)
#define CG_PAD 1
#define CG_LDA (MWG + CG_PAD)
#define CG_LDB (NWG + CG_PAD)
static_assert(MWG % MDIMC == 0 && NWG % NDIMC == 0, "tile must split evenly over threads");
static_assert(MWG % VW == 0 && NWG % VW == 0 && KWG % VW == 0, "VW must divide the tile");
typedef @AB_T@ cg_ab_t;
struct alignas(VW * sizeof(cg_ab_t)) cg_vec_t { cg_ab_t v[VW]; };
static __device__ __forceinline__ float cg_ab_f32(cg_ab_t x) { return @CVT@; }

/* One operand tile into local memory as float: OUTER x INNER elements of the global
   O x I matrix (leading dimension LD) starting at (o0, i0). KINNER: the inner dimension is
   K, so the tile is stored transposed ([k][outer]) to keep the compute loop's reads
   contiguous along M/N. */
template <int OUTER, int INNER, int KINNER, int LDS, int VEC_OK>
static __device__ __forceinline__ void cg_simt_load(float* s, const cg_ab_t* __restrict__ g,
                                                    int o0, int O, int i0, int I, int LD, int tid) {
    constexpr int IV = INNER / VW;
    constexpr int TOTAL = OUTER * IV;
    constexpr int ITERS = (TOTAL + CG_THREADS - 1) / CG_THREADS;
#pragma unroll
    for (int it = 0; it < ITERS; ++it) {
        const int idx = it * CG_THREADS + tid;
        if (TOTAL % CG_THREADS != 0 && idx >= TOTAL) break;
        const int o = idx / IV, iv = (idx % IV) * VW;
        const int go = o0 + o, gi = i0 + iv;
        float v[VW];
        if (VEC_OK && go < O && gi + VW <= I) {
            const cg_vec_t t = *reinterpret_cast<const cg_vec_t*>(g + ((long)go * LD + gi));
#pragma unroll
            for (int e = 0; e < VW; ++e) v[e] = cg_ab_f32(t.v[e]);
        } else {
#pragma unroll
            for (int e = 0; e < VW; ++e) v[e] = (go < O && gi + e < I) ? cg_ab_f32(g[(long)go * LD + gi + e]) : 0.0f;
        }
#pragma unroll
        for (int e = 0; e < VW; ++e) {
            if (KINNER) s[(iv + e) * LDS + o] = v[e];
            else s[o * LDS + iv + e] = v[e];
        }
    }
}

extern "C" __global__ void __launch_bounds__(CG_THREADS) @SYM@(int M, int N, int K, @PARAMS@) {
    __shared__ float cg_as[KWG * CG_LDA];
    __shared__ float cg_bs[KWG * CG_LDB];
    @VIEW@
    int tm, tn;
    if (!cg_tile_of_block(M, N, MWG, NWG, &tm, &tn)) return;
    const int m0 = tm * MWG, n0 = tn * NWG;
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * NDIMC + tx;
    const cg_ab_t* __restrict__ ga = @A_PTR@;
    const cg_ab_t* __restrict__ gb = @B_PTR@;@GUARD@

    float c[CG_MWI][CG_NWI];
#pragma unroll
    for (int mi = 0; mi < CG_MWI; ++mi)
#pragma unroll
        for (int ni = 0; ni < CG_NWI; ++ni) c[mi][ni] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += KWG) {
        @LOAD_A@;
        @LOAD_B@;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < KWG; ++k) {
            float a[CG_MWI], b[CG_NWI];
#pragma unroll
            for (int mi = 0; mi < CG_MWI; ++mi) a[mi] = cg_as[k * CG_LDA + ty + mi * MDIMC];
#pragma unroll
            for (int ni = 0; ni < CG_NWI; ++ni) b[ni] = cg_bs[k * CG_LDB + tx + ni * NDIMC];
@MATH@        }
        __syncthreads();
    }

    /* Strided ownership: neighbouring threads hold neighbouring columns, so the stores
       of a row-major output coalesce. */
#pragma unroll
    for (int mi = 0; mi < CG_MWI; ++mi)
#pragma unroll
        for (int ni = 0; ni < CG_NWI; ++ni) {
            const int i = m0 + ty + mi * MDIMC;
            const int j = n0 + tx + ni * NDIMC;
            if (i < M && j < N) {
                const float acc = c[mi][ni];
                @STORE@;
            }
        }
}
"#;

/// The SIMT kernel's inner product (`@MATH@` of [`SIMT`]).
const SIMT_MATH: &str = "#pragma unroll
            for (int mi = 0; mi < CG_MWI; ++mi)
#pragma unroll
                for (int ni = 0; ni < CG_NWI; ++ni) c[mi][ni] = fmaf(a[mi], b[ni], c[mi][ni]);
";

/// [`Variant::LoadOnly`]'s SIMT inner step: every loaded value added once, no product.
const SIMT_ADDS: &str = "#pragma unroll
            for (int mi = 0; mi < CG_MWI; ++mi) c[mi][0] += a[mi];
#pragma unroll
            for (int ni = 0; ni < CG_NWI; ++ni) c[0][ni] += b[ni];
";

fn simt_kernel(ir: &GemmIr, variant: Variant) -> String {
    let (ab_t, cvt) = ab_type(ir.ab_dtype);
    let load_a = match ir.a_layout() {
        Layout::RowMajor => {
            "cg_simt_load<MWG, KWG, 1, CG_LDA, (A_ALIGN % VW == 0)>(cg_as, ga, m0, M, k0, K, @LDA@, tid)"
        }
        Layout::ColMajor => {
            "cg_simt_load<KWG, MWG, 0, CG_LDA, (A_ALIGN % VW == 0)>(cg_as, ga, k0, K, m0, M, @LDA@, tid)"
        }
    };
    let load_b = match ir.b_layout() {
        Layout::RowMajor => {
            "cg_simt_load<KWG, NWG, 0, CG_LDB, (B_ALIGN % VW == 0)>(cg_bs, gb, k0, K, n0, N, @LDB@, tid)"
        }
        Layout::ColMajor => {
            "cg_simt_load<NWG, KWG, 1, CG_LDB, (B_ALIGN % VW == 0)>(cg_bs, gb, n0, N, k0, K, @LDB@, tid)"
        }
    };
    let (load_a, load_b, guard) = match variant {
        // The static shared arrays must look written, or a compiler may fold every load
        // of them to undef and the FMAs with them; `K < 0` never holds. The guard also
        // reads `ga`/`gb` (as pointers, not through them), which NVRTC otherwise reports
        // as set but never used.
        Variant::ComputeOnly => (
            "/* compute_only: no A tile load */",
            "/* compute_only: no B tile load */",
            "\n    if (K < 0) { cg_as[tid % CG_LDA] = (float)(ga == 0); cg_bs[tid % CG_LDB] = (float)(gb == 0); } /* never taken: see emit_variant */",
        ),
        _ => (load_a, load_b, ""),
    };
    let load_a = load_a.replace("@LDA@", &format!("ld{}", ir.a));
    let load_b = load_b.replace("@LDB@", &format!("ld{}", ir.b));
    let math = match variant {
        Variant::LoadOnly => SIMT_ADDS,
        _ => SIMT_MATH,
    };
    fill(
        SIMT,
        &[
            ("AB_T", ab_t.into()),
            ("CVT", cvt.into()),
            ("SYM", ir.symbol()),
            ("PARAMS", kernel_params(ir, Backend::Cuda)),
            ("VIEW", view_prologue(ir, Backend::Cuda)),
            ("A_PTR", format!("p{}", ir.a)),
            ("B_PTR", format!("p{}", ir.b)),
            ("LOAD_A", load_a),
            ("LOAD_B", load_b),
            ("GUARD", guard.into()),
            ("MATH", math.into()),
            ("STORE", epilogue_store(ir, variant)),
        ],
    )
}
