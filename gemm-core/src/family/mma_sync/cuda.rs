//! The `mma_sync` family's CUDA source (NVRTC, header-free).
//!
//! Two kernels share one body: f16/bf16 `mma.sync.m16n8k16` with ldmatrix fragment loads,
//! and f32 operands rounded to tf32 with `mma.sync.m16n8k8` and plain shared loads.
//!
//! A and B are staged through a `STAGES`-deep cp.async ring in dynamic shared memory. Each
//! tile is stored as rows of 16-byte chunks along the operand's contiguous global dimension
//! (K for K-major operands, M or N for MN-major ones), so that a 16-byte cp.async moves one
//! contiguous global chunk, and the chunk is placed at `SWZ(row, chunk, chunks_per_row)`
//! ([`C_SWIZZLE`](crate::swizzle::C_SWIZZLE)): the layout the planner proves free of
//! ldmatrix bank conflicts. ldmatrix then transposes on the fly (`.trans`) for MN-major
//! operands.

use crate::codegen::cuda::{ab_type, epilogue_store, fill, preamble};
use crate::codegen::prelude::{kernel_params, view_prologue};
use crate::codegen::Variant;
use crate::ir::{DType, GemmIr, Layout};
use crate::target::Backend;

/// Which kernel body the source holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// m16n8k16 on f16 or bf16 operands.
    Mma16,
    /// m16n8k8 on f32 operands rounded to tf32.
    MmaTf32,
}

/// The CUDA source of diagnosis variant `variant` ([`Variant::Full`]: the kernel).
///
/// - `LoadOnly`: the cp.async ring and the fragment loads stay but no `cg_mma` is defined;
///   each k-step feeds every A fragment (per `mi`) and every B fragment (per `ni`) to an
///   empty `asm volatile` instead.
/// - `NoEpilogue`: the store writes `acc` converted to the output type; `cg_epilogue` is
///   not emitted.
/// - `ComputeOnly`: the tile loads (`cg_load_tile`) are not called; commits, waits,
///   barriers, fragment loads and math stay (dynamic shared memory is opaque to the
///   compiler, so nothing folds away).
pub(super) fn emit_variant(ir: &GemmIr, variant: Variant) -> String {
    let kind = match ir.ab_dtype {
        DType::F32 => Kind::MmaTf32,
        DType::F16 | DType::Bf16 => Kind::Mma16,
    };
    let desc = match kind {
        Kind::Mma16 => "mma.sync m16n8k16",
        Kind::MmaTf32 => "mma.sync m16n8k8 tf32",
    };
    let mut s = preamble(ir, desc, variant);
    s.push_str(&mma_kernel(ir, kind, variant));
    s
}

const MMA_COMMON: &str = r#"
#define CG_THREADS (WARPS_M * WARPS_N * 32)
#define CG_WM (BM / WARPS_M)
#define CG_WN (BN / WARPS_N)
#define CG_MI (CG_WM / 16)
#define CG_NI (CG_WN / 8)
#define CG_ESZ @ESZ@
#define CG_EPC (16 / CG_ESZ)
#define CG_KSTEP @KSTEP@
#define A_ROWS @A_ROWS@
#define A_CPR @A_CPR@
#define B_ROWS @B_ROWS@
#define B_CPR @B_CPR@
#define A_STAGE_BYTES (BM * BK * CG_ESZ)
#define B_STAGE_BYTES (BN * BK * CG_ESZ)
static_assert(BM % WARPS_M == 0 && BN % WARPS_N == 0, "block tile must split evenly over warps");
static_assert(CG_WM % 16 == 0 && CG_WN % 16 == 0, "warp tile must be a multiple of 16x16");
static_assert(BK % CG_KSTEP == 0 && BK % CG_EPC == 0, "BK must be a multiple of the mma K step");
static_assert(STAGES >= 2, "the cp.async ring needs at least two stages");
static_assert((A_CPR & (A_CPR - 1)) == 0 && (B_CPR & (B_CPR - 1)) == 0, "SWZ permutes power-of-two rows only");
typedef @AB_T@ cg_ab_t;

static __device__ __forceinline__ unsigned cg_smem_u32(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}
/* Byte offset of logical 16-byte chunk `chunk` of tile row `row` (rows of `cpr` chunks). */
static __device__ __forceinline__ int cg_chunk_off(int row, int chunk, int cpr) {
    return (row * cpr + SWZ(row, chunk, cpr)) * 16;
}
/* src_bytes < 16 zero-fills the rest of the chunk: out-of-range rows/columns become 0,
   which is what the K tail and the M/N edges need. */
static __device__ __forceinline__ void cg_cp_async16(unsigned dst, const void* src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
static __device__ __forceinline__ void cg_cp_commit() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
static __device__ __forceinline__ void cg_cp_wait() {
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
}

/* One operand tile: ROWS rows of CPR chunks, row r holding global outer index o0 + r
   and inner (contiguous) indices i0 + chunk * CG_EPC...; the global matrix is O x I with
   leading dimension LD (at least I). */
template <int ROWS, int CPR, int VEC>
static __device__ __forceinline__ void cg_load_tile(unsigned char* s, const cg_ab_t* __restrict__ g,
                                                    int o0, int O, int i0, int I, int LD, int tid) {
    constexpr int CHUNKS = ROWS * CPR;
    constexpr int ITERS = (CHUNKS + CG_THREADS - 1) / CG_THREADS;
    if constexpr (CG_THREADS % CPR == 0 && (CG_THREADS / CPR) % 8 == 0) {
        /* Each thread keeps one chunk column and steps down by RSTEP rows; SWZ's key
           repeats every 8 rows, so the shared offsets are one base plus constants and
           the global ones one pointer plus multiples of a stride: few live registers. */
        constexpr int RSTEP = CG_THREADS / CPR;
        const int r0 = tid / CPR, ch = tid % CPR;
        const int gi = i0 + ch * CG_EPC;
        const int rows_left = O - (o0 + r0);
        const int left = I - gi;
        const long step = (long)RSTEP * LD;
        const cg_ab_t* p = g + ((long)(o0 + r0) * LD + gi);
        unsigned char* dst = s + cg_chunk_off(r0, ch, CPR);
#pragma unroll
        for (int it = 0; it < ITERS; ++it) {
            if (CHUNKS % CG_THREADS != 0 && r0 + it * RSTEP >= ROWS) break;
            const bool row_ok = it * RSTEP < rows_left;
            if (VEC) {
                /* LD and the view's start are multiples of CG_EPC here, so every chunk is
                   16-byte aligned; one that crosses I is zero-filled past it. */
                const int valid = (row_ok && left > 0) ? (left < CG_EPC ? left : CG_EPC) : 0;
                cg_cp_async16(cg_smem_u32(dst + it * RSTEP * CPR * 16), valid ? p + it * step : g, valid * CG_ESZ);
            } else {
                /* Unaligned chunks: cp.async would fault, so load elements synchronously. */
                alignas(16) cg_ab_t v[CG_EPC];
#pragma unroll
                for (int e = 0; e < CG_EPC; ++e) v[e] = (row_ok && e < left) ? p[it * step + e] : (cg_ab_t)0;
                *reinterpret_cast<cg_u4*>(dst + it * RSTEP * CPR * 16) = *reinterpret_cast<const cg_u4*>(v);
            }
        }
    } else {
#pragma unroll
        for (int it = 0; it < ITERS; ++it) {
            const int c = it * CG_THREADS + tid;
            if (CHUNKS % CG_THREADS != 0 && c >= CHUNKS) break;
            const int r = c / CPR, ch = c % CPR;
            const int go = o0 + r, gi = i0 + ch * CG_EPC;
            unsigned char* dst = s + cg_chunk_off(r, ch, CPR);
            if (VEC) {
                const int left = I - gi;
                const int valid = (go < O && left > 0) ? (left < CG_EPC ? left : CG_EPC) : 0;
                const cg_ab_t* src = valid ? g + ((long)go * LD + gi) : g;
                cg_cp_async16(cg_smem_u32(dst), src, valid * CG_ESZ);
            } else {
                alignas(16) cg_ab_t v[CG_EPC];
#pragma unroll
                for (int e = 0; e < CG_EPC; ++e)
                    v[e] = (go < O && gi + e < I) ? g[(long)go * LD + gi + e] : (cg_ab_t)0;
                *reinterpret_cast<cg_u4*>(dst) = *reinterpret_cast<const cg_u4*>(v);
            }
        }
    }
}
"#;

const MMA16_FRAG: &str = r#"
static __device__ __forceinline__ void cg_ldsm_x4(unsigned* r, unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory");
}
static __device__ __forceinline__ void cg_ldsm_x4_trans(unsigned* r, unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory");
}
@MMA_FN@"#;

/// `cg_mma` (`@MMA_FN@` of [`MMA16_FRAG`] and [`MMATF32_FRAG`]); `@MMA_SHAPE@` is the
/// instruction's shape and types, e.g. `m16n8k16.row.col.f32.f16.f16.f32`.
const MMA_FN: &str = r#"static __device__ __forceinline__ void cg_mma(float* c, const unsigned* a, const unsigned* b) {
    asm("mma.sync.aligned.@MMA_SHAPE@ {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
"#;

/// [`Variant::LoadOnly`]'s stand-ins for `cg_mma`: they consume one A or one B fragment,
/// so that the loads (and tf32 conversions) that produced it are kept, and do nothing.
const SINK_FN: &str = r#"/* Diagnosis variant load_only: no mma; these keep the fragment loads alive. */
static __device__ __forceinline__ void cg_sink_a(const unsigned* a) {
    asm volatile("" :: "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]));
}
static __device__ __forceinline__ void cg_sink_b(const unsigned* b) {
    asm volatile("" :: "r"(b[0]), "r"(b[1]));
}
"#;

/// `cg_to_tf32`: an f32 word rounded to tf32 for an mma's tf32 operand. Shared with
/// `decode`.
pub(in crate::family) const TO_TF32: &str = r#"/* The mma reads tf32 operands as f32 bit patterns; round to nearest (away) first, as
   cuBLAS does, rather than letting the hardware truncate. */
static __device__ __forceinline__ unsigned cg_to_tf32(unsigned x) {
    unsigned u;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(u) : "f"(__uint_as_float(x)));
    return u;
}
"#;

const MMATF32_FRAG: &str = r#"
static __device__ __forceinline__ void cg_ldsm_x4(unsigned* r, unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory");
}
@TO_TF32@/* Element (row, col) of a swizzled f32 tile, rounded to tf32. */
static __device__ __forceinline__ unsigned cg_lds_tf32(const unsigned char* s, int row, int col, int cpr) {
    return cg_to_tf32(*reinterpret_cast<const unsigned*>(s + cg_chunk_off(row, col >> 2, cpr) + (col & 3) * 4));
}
@MMA_FN@"#;

const MMA_KERNEL: &str = r#"
extern "C" __global__ void __launch_bounds__(CG_THREADS) @SYM@(int M, int N, int K, @PARAMS@) {
    extern __shared__ __align__(128) unsigned char cg_smem[];
    @VIEW@
    int tm, tn;
    if (!cg_tile_of_block(M, N, BM, BN, &tm, &tn)) return;
    const int m0 = tm * BM, n0 = tn * BN;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
    const cg_ab_t* __restrict__ ga = @A_PTR@;
    const cg_ab_t* __restrict__ gb = @B_PTR@;
    unsigned char* const sa = cg_smem;
    unsigned char* const sb = cg_smem + STAGES * A_STAGE_BYTES;
    (void)lane; (void)warp_m; (void)warp_n;

    float c[CG_MI][CG_NI][4];
#pragma unroll
    for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < CG_NI; ++ni)
#pragma unroll
            for (int q = 0; q < 4; ++q) c[mi][ni][q] = 0.0f;
#if CG_PROMOTE
    /* The sums of the accumulators of each run of CG_PROMOTE k-tiles (family::promotes). */
    float cg_sum[CG_MI][CG_NI][4];
#pragma unroll
    for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < CG_NI; ++ni)
#pragma unroll
            for (int q = 0; q < 4; ++q) cg_sum[mi][ni][q] = 0.0f;
#endif

    auto load_stage = [&](int st, int k0) {
        @LOAD_A@;
        @LOAD_B@;
    };

    const int ktiles = (K + BK - 1) / BK;
    /* Prologue: STAGES-1 tiles in flight. Every slot commits a group, empty or not, so
       that wait_group<STAGES-2> below always means "tile kt has landed". */
#pragma unroll
    for (int st = 0; st < STAGES - 1; ++st) {
        if (st < ktiles) load_stage(st, st * BK);
        cg_cp_commit();
    }
    int rd = 0, wr = STAGES - 1;
    for (int kt = 0; kt < ktiles; ++kt) {
        cg_cp_wait<STAGES - 2>();
        /* Makes tile kt visible to every warp, and tells the producer below that every
           warp is done with the slot it overwrites (consumed in iteration kt-1). */
        __syncthreads();
        if (kt + STAGES - 1 < ktiles) load_stage(wr, (kt + STAGES - 1) * BK);
        cg_cp_commit();
        wr = wr + 1 == STAGES ? 0 : wr + 1;

        const unsigned char* const as = sa + rd * A_STAGE_BYTES;
        const unsigned char* const bs = sb + rd * B_STAGE_BYTES;
        (void)as; (void)bs;
        const unsigned as_u = cg_smem_u32(as), bs_u = cg_smem_u32(bs);
        (void)as_u; (void)bs_u;
        rd = rd + 1 == STAGES ? 0 : rd + 1;
#pragma unroll
        for (int kk = 0; kk < BK / CG_KSTEP; ++kk) {
            unsigned af[CG_MI][4], bf[CG_NI][2];
@FRAGS@
@MMA@        }
#if CG_PROMOTE
        if ((kt + 1) % CG_PROMOTE == 0 || kt + 1 == ktiles) {
#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                for (int ni = 0; ni < CG_NI; ++ni)
#pragma unroll
                    for (int q = 0; q < 4; ++q) {
                        cg_sum[mi][ni][q] += c[mi][ni][q];
                        c[mi][ni][q] = 0.0f;
                    }
        }
#endif
    }
    cg_cp_wait<0>();
#if CG_PROMOTE
#pragma unroll
    for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < CG_NI; ++ni)
#pragma unroll
            for (int q = 0; q < 4; ++q) c[mi][ni][q] = cg_sum[mi][ni][q];
#endif

    /* Accumulator fragment: c0,c1 at (groupID, 2*tig + {0,1}), c2,c3 eight rows lower. */
#pragma unroll
    for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < CG_NI; ++ni)
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const int i = m0 + warp_m * CG_WM + mi * 16 + (lane >> 2) + (q >> 1) * 8;
                const int j = n0 + warp_n * CG_WN + ni * 8 + (lane & 3) * 2 + (q & 1);
                if (i < M && j < N) {
                    const float acc = c[mi][ni][q];
                    @STORE@;
                }
            }
}
"#;

/// The math of one k-step of the tensor-core kernels (`@MMA@` of [`MMA_KERNEL`]).
const MMA_LOOP: &str = "#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                for (int ni = 0; ni < CG_NI; ++ni) cg_mma(c[mi][ni], af[mi], bf[ni]);
";

/// [`Variant::LoadOnly`]'s k-step: each fragment consumed once, no mma.
const SINK_LOOP: &str = "#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi) cg_sink_a(af[mi]);
#pragma unroll
            for (int ni = 0; ni < CG_NI; ++ni) cg_sink_b(bf[ni]);
";

/// Fragment loads of one k-step for the f16/bf16 kernel (ldmatrix.x4). Each ldmatrix
/// lane supplies the address of one 16-byte row of one of four 8x8 matrices (lanes
/// 8q..8q+7 for matrix q); matrix q lands in register q in the mma fragment order.
fn frags_mma16(ir: &GemmIr) -> String {
    // A: registers {rows 0-7, k 0-7}, {rows 8-15, k 0-7}, {rows 0-7, k 8-15}, {rows 8-15, k 8-15}.
    let a = match ir.a_layout() {
        // K-major smem (rows m): lane -> row m = lane%16, k chunk = lane/16.
        Layout::RowMajor => {
            "                const int ar = warp_m * CG_WM + mi * 16 + (lane & 15);
                const int ac = kk * 2 + (lane >> 4);
                cg_ldsm_x4(af[mi], as_u + cg_chunk_off(ar, ac, A_CPR));"
        }
        // M-major smem (rows k): matrix q covers m block q&1, k block q>>1; .trans hands
        // each thread the (m, k..k+1) pair the fragment wants.
        Layout::ColMajor => {
            "                const int ar = kk * 16 + (lane & 7) + ((lane >> 4) << 3);
                const int ac = (warp_m * CG_WM + mi * 16) / 8 + ((lane >> 3) & 1);
                cg_ldsm_x4_trans(af[mi], as_u + cg_chunk_off(ar, ac, A_CPR));"
        }
    };
    // B: two n8 fragments per ldmatrix.x4: {n 0-7, k 0-7}, {n 0-7, k 8-15}, {n 8-15, k 0-7}, {n 8-15, k 8-15}.
    let b = match ir.b_layout() {
        // K-major smem (rows n).
        Layout::ColMajor => {
            "                const int br = warp_n * CG_WN + nj * 16 + (lane & 7) + ((lane >> 4) << 3);
                const int bc = kk * 2 + ((lane >> 3) & 1);
                cg_ldsm_x4(r, bs_u + cg_chunk_off(br, bc, B_CPR));"
        }
        // N-major smem (rows k).
        Layout::RowMajor => {
            "                const int br = kk * 16 + (lane & 7) + (((lane >> 3) & 1) << 3);
                const int bc = (warp_n * CG_WN + nj * 16) / 8 + (lane >> 4);
                cg_ldsm_x4_trans(r, bs_u + cg_chunk_off(br, bc, B_CPR));"
        }
    };
    format!(
        "#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi) {{
{a}
            }}
#pragma unroll
            for (int nj = 0; nj < CG_NI / 2; ++nj) {{
                unsigned r[4];
{b}
                bf[2 * nj][0] = r[0]; bf[2 * nj][1] = r[1];
                bf[2 * nj + 1][0] = r[2]; bf[2 * nj + 1][1] = r[3];
            }}
"
    )
}

/// Fragment loads of one k-step for the tf32 kernel: a0..a3 at (g, t), (g+8, t),
/// (g, t+4), (g+8, t+4) and b0, b1 at (k=t, n=g), (k=t+4, n=g), with g = lane/4 and
/// t = lane%4.
///
/// A K-major f32 tile viewed as b16 is exactly what non-trans ldmatrix expects: an 8x8
/// b16 matrix is 8 rows of 4 floats and hands thread l the float (l/4, l%4), which is
/// (g, t). So K-major operands reuse the f16 ldmatrix addressing (a k-step of 8 floats
/// is two chunks, as a k-step of 16 halves is). MN-major operands would need a 32-bit
/// transpose, which ldmatrix lacks: they use scalar shared loads. Their rows are
/// `kb + r` with kb a multiple of 8, and SWZ's key repeats every 8 rows, so the
/// swizzled offset is `kb * row_bytes + cg_chunk_off(r, ..)`, with the second term
/// loop-invariant.
fn frags_tf32(ir: &GemmIr) -> String {
    let mut s = String::from(
        "            const int g = lane >> 2, t = lane & 3, kb = kk * 8;\n            (void)g; (void)t; (void)kb;\n",
    );
    match ir.a_layout() {
        Layout::RowMajor => s.push_str(
            "#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi) {
                const int ar = warp_m * CG_WM + mi * 16 + (lane & 15);
                const int ac = kk * 2 + (lane >> 4);
                cg_ldsm_x4(af[mi], as_u + cg_chunk_off(ar, ac, A_CPR));
#pragma unroll
                for (int q = 0; q < 4; ++q) af[mi][q] = cg_to_tf32(af[mi][q]);
            }
",
        ),
        Layout::ColMajor => s.push_str(
            "#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi) {
                const int mt = warp_m * CG_WM + mi * 16;
                af[mi][0] = cg_lds_tf32(as + kb * A_CPR * 16, t, mt + g, A_CPR);
                af[mi][1] = cg_lds_tf32(as + kb * A_CPR * 16, t, mt + g + 8, A_CPR);
                af[mi][2] = cg_lds_tf32(as + kb * A_CPR * 16, t + 4, mt + g, A_CPR);
                af[mi][3] = cg_lds_tf32(as + kb * A_CPR * 16, t + 4, mt + g + 8, A_CPR);
            }
",
        ),
    }
    match ir.b_layout() {
        Layout::ColMajor => s.push_str(
            "#pragma unroll
            for (int nj = 0; nj < CG_NI / 2; ++nj) {
                unsigned r[4];
                const int br = warp_n * CG_WN + nj * 16 + (lane & 7) + ((lane >> 4) << 3);
                const int bc = kk * 2 + ((lane >> 3) & 1);
                cg_ldsm_x4(r, bs_u + cg_chunk_off(br, bc, B_CPR));
                bf[2 * nj][0] = cg_to_tf32(r[0]); bf[2 * nj][1] = cg_to_tf32(r[1]);
                bf[2 * nj + 1][0] = cg_to_tf32(r[2]); bf[2 * nj + 1][1] = cg_to_tf32(r[3]);
            }
",
        ),
        Layout::RowMajor => s.push_str(
            "#pragma unroll
            for (int ni = 0; ni < CG_NI; ++ni) {
                const int nt = warp_n * CG_WN + ni * 8;
                bf[ni][0] = cg_lds_tf32(bs + kb * B_CPR * 16, t, nt + g, B_CPR);
                bf[ni][1] = cg_lds_tf32(bs + kb * B_CPR * 16, t + 4, nt + g, B_CPR);
            }
",
        ),
    }
    s
}

fn mma_kernel(ir: &GemmIr, fam: Kind, variant: Variant) -> String {
    let (ab_t, _) = ab_type(ir.ab_dtype);
    let (esz, kstep) = match fam {
        Kind::MmaTf32 => ("4", "8"),
        _ => ("2", "16"),
    };
    // Shared rows run along the operand's outer (non-contiguous) global dimension.
    let (a_rows, a_cpr, load_a) = match ir.a_layout() {
        Layout::RowMajor => (
            "BM",
            "(BK / CG_EPC)",
            "cg_load_tile<A_ROWS, A_CPR, A_VEC>(sa + st * A_STAGE_BYTES, ga, m0, M, k0, K, @LDA@, tid)",
        ),
        Layout::ColMajor => (
            "BK",
            "(BM / CG_EPC)",
            "cg_load_tile<A_ROWS, A_CPR, A_VEC>(sa + st * A_STAGE_BYTES, ga, k0, K, m0, M, @LDA@, tid)",
        ),
    };
    let (b_rows, b_cpr, load_b) = match ir.b_layout() {
        Layout::RowMajor => (
            "BK",
            "(BN / CG_EPC)",
            "cg_load_tile<B_ROWS, B_CPR, B_VEC>(sb + st * B_STAGE_BYTES, gb, k0, K, n0, N, @LDB@, tid)",
        ),
        Layout::ColMajor => (
            "BN",
            "(BK / CG_EPC)",
            "cg_load_tile<B_ROWS, B_CPR, B_VEC>(sb + st * B_STAGE_BYTES, gb, n0, N, k0, K, @LDB@, tid)",
        ),
    };
    let mma_t = match ir.ab_dtype {
        DType::Bf16 => "bf16",
        _ => "f16",
    };
    let shape = match fam {
        Kind::MmaTf32 => "m16n8k8.row.col.f32.tf32.tf32.f32".to_string(),
        _ => format!("m16n8k16.row.col.f32.{mma_t}.{mma_t}.f32"),
    };
    let (mma_fn, mma) = match variant {
        Variant::LoadOnly => (SINK_FN.to_string(), SINK_LOOP),
        _ => (fill(MMA_FN, &[("MMA_SHAPE", shape)]), MMA_LOOP),
    };
    let (frag_helpers, frags) = match fam {
        Kind::MmaTf32 => (
            fill(MMATF32_FRAG, &[("MMA_FN", mma_fn), ("TO_TF32", TO_TF32.to_string())]),
            frags_tf32(ir),
        ),
        _ => (fill(MMA16_FRAG, &[("MMA_FN", mma_fn)]), frags_mma16(ir)),
    };
    // ComputeOnly: load_stage keeps its signature (and the ring its commits) but moves
    // nothing.
    let (load_a, load_b) = match variant {
        Variant::ComputeOnly => ("(void)st; (void)k0; (void)ga", "(void)gb"),
        _ => (load_a, load_b),
    };
    let ld = |p: u32| format!("ld{p}");
    let (load_a, load_b) = (load_a.replace("@LDA@", &ld(ir.a)), load_b.replace("@LDB@", &ld(ir.b)));
    let mut s = crate::family::promote_define(ir);
    s.push_str(&fill(
        MMA_COMMON,
        &[
            ("ESZ", esz.into()),
            ("KSTEP", kstep.into()),
            ("A_ROWS", a_rows.into()),
            ("A_CPR", a_cpr.into()),
            ("B_ROWS", b_rows.into()),
            ("B_CPR", b_cpr.into()),
            ("AB_T", ab_t.into()),
        ],
    ));
    s.push_str(&frag_helpers);
    s.push_str(&fill(
        MMA_KERNEL,
        &[
            ("SYM", ir.symbol()),
            ("PARAMS", kernel_params(ir, Backend::Cuda)),
            ("VIEW", view_prologue(ir, Backend::Cuda)),
            ("A_PTR", format!("p{}", ir.a)),
            ("B_PTR", format!("p{}", ir.b)),
            ("LOAD_A", load_a),
            ("LOAD_B", load_b),
            ("FRAGS", frags),
            ("MMA", mma.into()),
            ("STORE", epilogue_store(ir, variant)),
        ],
    ));
    s
}
