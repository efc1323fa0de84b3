//! The `simt` family's CUDA source: the CLBlast-style tile of the OpenCL kernel in CUDA C,
//! for operand types no tensor-core instruction takes.

use super::simt_local_pad;
use crate::codegen::cuda::{ab_type, epilogue_store, fill, preamble};
use crate::codegen::prelude::{kernel_params, view_prologue};
use crate::codegen::Variant;
use crate::family::strip_sum;
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
/* A thread owns its rows (columns) of C in runs of CG_VM (CG_VN) adjacent ones where its
   share allows, so that a k-slice of them is one 16-byte shared load: a quarter of the
   shared-memory instructions of strided ownership, which issued one load a row. Runs of
   4 keep local rows a multiple of 4 floats (pad 4, not 1). */
#define CG_VM ((CG_MWI % 4 == 0) ? 4 : 1)
#define CG_VN ((CG_NWI % 4 == 0) ? 4 : 1)
#define CG_LDA (MWG + (CG_VM == 4 ? @RUN_PAD@ : @PAD@))
#define CG_LDB (NWG + (CG_VN == 4 ? @RUN_PAD@ : @PAD@))
static_assert(MWG % MDIMC == 0 && NWG % NDIMC == 0, "tile must split evenly over threads");
static_assert(MWG % VW == 0 && NWG % VW == 0 && KWG % VW == 0, "VW must divide the tile");
typedef @AB_T@ cg_ab_t;
struct alignas(VW * sizeof(cg_ab_t)) cg_vec_t { cg_ab_t v[VW]; };
static __device__ __forceinline__ float cg_ab_f32(cg_ab_t x) { return @CVT@; }

/* Row `mi` of a thread's share (column: the same with N's constants): runs of V adjacent
   rows, run r of thread t starting at r * DIMC * V + t * V. */
template <int V, int DIMC>
static __device__ __forceinline__ int cg_owned(int t, int mi) {
    return (mi / V) * (DIMC * V) + t * V + (mi % V);
}

/* A thread's share of one operand tile in registers, as float: OUTER x INNER elements of
   the global O x I matrix, VW-wide along INNER. */
template <int OUTER, int INNER>
struct cg_frag {
    static constexpr int IV = INNER / VW;
    static constexpr int TOTAL = OUTER * IV;
    static constexpr int ITERS = (TOTAL + CG_THREADS - 1) / CG_THREADS;
    float v[ITERS][VW];
    /* Load `it` of thread `tid`: its row `o` and first column `iv` of the tile; false
       past the tile's end. Fetch and stash both walk the tile by it. */
    static __device__ __forceinline__ bool at(int it, int tid, int& o, int& iv) {
        const int idx = it * CG_THREADS + tid;
        o = idx / IV;
        iv = (idx % IV) * VW;
        return TOTAL % CG_THREADS == 0 || idx < TOTAL;
    }
};

/* Global to registers: the tile at (o0, i0) of the matrix with leading dimension LD,
   zero past its O x I extent. Issued a tile ahead of the shared-memory step that stores
   it, so that its loads are in flight while the block computes on the tile before. */
template <int OUTER, int INNER, int VEC_OK>
static __device__ __forceinline__ void cg_simt_fetch(cg_frag<OUTER, INNER>& f, const cg_ab_t* __restrict__ g,
                                                     int o0, int O, int i0, int I, int LD, int tid) {
    typedef cg_frag<OUTER, INNER> F;
#pragma unroll
    for (int it = 0; it < F::ITERS; ++it) {
        int o, iv;
        if (!F::at(it, tid, o, iv)) break;
        const int go = o0 + o, gi = i0 + iv;
        if (VEC_OK && go < O && gi + VW <= I) {
            const cg_vec_t t = *reinterpret_cast<const cg_vec_t*>(g + ((long)go * LD + gi));
#pragma unroll
            for (int e = 0; e < VW; ++e) f.v[it][e] = cg_ab_f32(t.v[e]);
        } else {
#pragma unroll
            for (int e = 0; e < VW; ++e) f.v[it][e] = (go < O && gi + e < I) ? cg_ab_f32(g[(long)go * LD + gi + e]) : 0.0f;
        }
    }
}

/* VW floats, one shared store where VW is 2 or 4. */
struct alignas((VW == 2 || VW == 4) ? VW * 4 : 4) cg_fvec_t { float v[VW]; };

/* Registers to local memory. KINNER: the inner dimension is K, so the tile is stored
   transposed ([k][outer]) to keep the compute loop's reads contiguous along M/N, one
   float at a time. Otherwise a thread's VW floats are adjacent and aligned (rows of LDS
   floats, LDS a multiple of VW) and go as one 8- or 16-byte store: a warp's scalar
   stores of every VW-th float would meet VW-way bank conflicts. */
template <int OUTER, int INNER, int KINNER, int LDS>
static __device__ __forceinline__ void cg_simt_stash(float* s, const cg_frag<OUTER, INNER>& f, int tid) {
    typedef cg_frag<OUTER, INNER> F;
    constexpr bool VEC = !KINNER && (VW == 2 || VW == 4) && LDS % VW == 0;
#pragma unroll
    for (int it = 0; it < F::ITERS; ++it) {
        int o, iv;
        if (!F::at(it, tid, o, iv)) break;
        if (VEC) {
            cg_fvec_t t;
#pragma unroll
            for (int e = 0; e < VW; ++e) t.v[e] = f.v[it][e];
            *reinterpret_cast<cg_fvec_t*>(s + o * LDS + iv) = t;
            continue;
        }
#pragma unroll
        for (int e = 0; e < VW; ++e) {
            if (KINNER) s[(iv + e) * LDS + o] = f.v[it][e];
            else s[o * LDS + iv + e] = f.v[it][e];
        }
    }
}

/* A thread's CG_MWI (CG_NWI) values of k-slice `row` of a local tile: 16-byte loads
   where it owns runs of 4. */
template <int N, int V, int DIMC>
static __device__ __forceinline__ void cg_simt_slice(float* x, const float* row, int t) {
#pragma unroll
    for (int r = 0; r < N / V; ++r) {
        if (V == 4) {
            const float4 q = *reinterpret_cast<const float4*>(row + r * DIMC * 4 + t * 4);
            x[4 * r] = q.x; x[4 * r + 1] = q.y; x[4 * r + 2] = q.z; x[4 * r + 3] = q.w;
        } else {
            x[r] = row[r * DIMC + t];
        }
    }
}

@SPLIT_HEAD@
extern "C" __global__ void __launch_bounds__(CG_THREADS) @SYM@(
#if KSPLIT > 1
    float* __restrict__ cg_ws, unsigned* __restrict__ cg_flags,
#endif
    int M, int N, int K, @PARAMS@) {
    __shared__ __align__(16) float cg_as[KWG * CG_LDA];
    __shared__ __align__(16) float cg_bs[KWG * CG_LDB];
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

    /* This block's share of K, [kb, ke): split blockIdx.y of KSPLIT, in whole KWG steps
       (only the last split's tile may cross K, and reads zeros past it). */
    const int cg_steps = (K + KWG - 1) / KWG;
    const int kb = (int)((long long)blockIdx.y * cg_steps / KSPLIT) * KWG;
    const int ke = min(K, (int)((long long)(blockIdx.y + 1) * cg_steps / KSPLIT) * KWG);
    @A_FRAG@ fa;
    @B_FRAG@ fb;
    if (kb < ke) {
        @FETCH_A_FIRST@;
        @FETCH_B_FIRST@;
    }
    for (int k0 = kb; k0 < ke; k0 += KWG) {
        @STASH_A@;
        @STASH_B@;
        __syncthreads();
        if (k0 + KWG < ke) {
            @FETCH_A_NEXT@;
            @FETCH_B_NEXT@;
        }
#pragma unroll
        for (int k = 0; k < KWG; ++k) {
            float a[CG_MWI], b[CG_NWI];
            cg_simt_slice<CG_MWI, CG_VM, MDIMC>(a, cg_as + k * CG_LDA, ty);
            cg_simt_slice<CG_NWI, CG_VN, NDIMC>(b, cg_bs + k * CG_LDB, tx);
@MATH@        }
        __syncthreads();
    }

#if KSPLIT > 1
    /* Each split leaves its tile in its slot of the workspace; the last to arrive adds
       the slots in split order (the same bits whichever finishes last) and stores. */
    const long cg_tile = (long)blockIdx.z * gridDim.x + blockIdx.x;
    float* const cg_slots = cg_ws + cg_tile * (KSPLIT * MWG * NWG);
#define CG_SLOT(s, mi, ni) (cg_slots + (s) * (MWG * NWG) + cg_owned<CG_VM, MDIMC>(ty, mi) * NWG + cg_owned<CG_VN, NDIMC>(tx, ni))
#pragma unroll
    for (int mi = 0; mi < CG_MWI; ++mi)
#pragma unroll
        for (int ni = 0; ni < CG_NWI; ++ni) CG_STCG(CG_SLOT(blockIdx.y, mi, ni), c[mi][ni]);
    if (!cg_block_last_to_arrive(cg_flags + cg_tile, tid == 0)) return;
#pragma unroll
    for (int mi = 0; mi < CG_MWI; ++mi)
#pragma unroll
        for (int ni = 0; ni < CG_NWI; ++ni) {
            float sum = 0.0f;
            for (int s = 0; s < KSPLIT; ++s) {
                float v;
                CG_LDCG(CG_SLOT(s, mi, ni), v);
                sum += v;
            }
            c[mi][ni] = sum;
        }
#endif

#pragma unroll
    for (int mi = 0; mi < CG_MWI; ++mi)
#pragma unroll
        for (int ni = 0; ni < CG_NWI; ++ni) {
            const int i = m0 + cg_owned<CG_VM, MDIMC>(ty, mi);
            const int j = n0 + cg_owned<CG_VN, NDIMC>(tx, ni);
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
    // (tile OUTER, INNER, K inner, the fetch's (o0, O, i0, I) with `@K@` for k0).
    let a = match ir.a_layout() {
        Layout::RowMajor => ("MWG", "KWG", 1, "m0, M, @K@, K"),
        Layout::ColMajor => ("KWG", "MWG", 0, "@K@, K, m0, M"),
    };
    let b = match ir.b_layout() {
        Layout::RowMajor => ("KWG", "NWG", 0, "@K@, K, n0, N"),
        Layout::ColMajor => ("NWG", "KWG", 1, "n0, N, @K@, K"),
    };
    let frag = |(outer, inner, _, _): (&str, &str, u32, &str)| format!("cg_frag<{outer}, {inner}>");
    // A fetch with `@K@` for the tile's first k.
    let fetch = |(outer, inner, _, at): (&str, &str, u32, &str), op: &str, frag: &str, ptr: &str, ld: String| {
        format!("cg_simt_fetch<{outer}, {inner}, ({op}_ALIGN % VW == 0)>({frag}, {ptr}, {at}, {ld}, tid)")
    };
    let stash = |(outer, inner, kinner, _): (&str, &str, u32, &str), lds: &str, s: &str, frag: &str| {
        format!("cg_simt_stash<{outer}, {inner}, {kinner}, {lds}>({s}, {frag}, tid)")
    };
    let (fetch_a, fetch_b, stash_a, stash_b, guard) = match variant {
        // The static shared arrays must look written, or a compiler may fold every load
        // of them to undef and the FMAs with them; `K < 0` never holds. The guard also
        // reads `ga`/`gb` (as pointers, not through them), which NVRTC otherwise reports
        // as set but never used.
        Variant::ComputeOnly => (
            "/* compute_only: no A tile load */".to_string(),
            "/* compute_only: no B tile load */".to_string(),
            "(void)fa".to_string(),
            "(void)fb".to_string(),
            "\n    if (K < 0) { cg_as[tid % CG_LDA] = (float)(ga == 0); cg_bs[tid % CG_LDB] = (float)(gb == 0); } /* never taken: see emit_variant */",
        ),
        _ => (
            fetch(a, "A", "fa", "ga", format!("ld{}", ir.a)),
            fetch(b, "B", "fb", "gb", format!("ld{}", ir.b)),
            stash(a, "CG_LDA", "cg_as", "fa"),
            stash(b, "CG_LDB", "cg_bs", "fb"),
            "",
        ),
    };
    let at = |f: &str, k: &str| f.replace("@K@", k);
    let math = match variant {
        Variant::LoadOnly => SIMT_ADDS,
        _ => SIMT_MATH,
    };
    fill(
        SIMT,
        &[
            ("AB_T", ab_t.into()),
            // The pads the planner's model counts (`simt_local_pad`).
            ("RUN_PAD", simt_local_pad(Backend::Cuda, 4).to_string()),
            ("PAD", simt_local_pad(Backend::Cuda, 1).to_string()),
            ("CVT", cvt.into()),
            ("SPLIT_HEAD", strip_sum::cuda_split_head()),
            ("SYM", ir.symbol()),
            ("PARAMS", kernel_params(ir, Backend::Cuda)),
            ("VIEW", view_prologue(ir, Backend::Cuda)),
            ("A_PTR", format!("p{}", ir.a)),
            ("B_PTR", format!("p{}", ir.b)),
            ("A_FRAG", frag(a)),
            ("B_FRAG", frag(b)),
            ("FETCH_A_FIRST", at(&fetch_a, "kb")),
            ("FETCH_B_FIRST", at(&fetch_b, "kb")),
            ("FETCH_A_NEXT", at(&fetch_a, "k0 + KWG")),
            ("FETCH_B_NEXT", at(&fetch_b, "k0 + KWG")),
            ("STASH_A", stash_a),
            ("STASH_B", stash_b),
            ("GUARD", guard.into()),
            ("MATH", math.into()),
            ("STORE", epilogue_store(ir, variant)),
        ],
    )
}
