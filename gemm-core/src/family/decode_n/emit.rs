//! The `decode_n` family's CUDA source (header-free, NVRTC).
//!
//! Each warp streams its own 32-k chunks of the block's `CG_NB` columns through a ring of
//! `STAGES` slots in shared memory (cp.async, 16 bytes a lane, so a row of W's tile is
//! read whole: 128 or 256 bytes), and X's `CG_MR` rows of the chunk beside them. The ring
//! is the warp's alone: a slot is waited for with `cp.async.wait_group` and `__syncwarp`,
//! never a block barrier. W's rows are N-contiguous, so the MMA takes them transposed:
//! `ldmatrix.trans` turns four 8x8 pieces of the slot (8 k-rows of 8 columns each) into
//! the A fragment of `mma.m16n8k16` with the block's columns as the instruction's 16 rows
//! and X's rows (`ldmatrix`, untransposed) as its 8 columns: C is computed transposed,
//! as in the `decode` family, so at most 8 rows of X pad nothing. The slots are swizzled
//! (a row's 16-byte chunk `c` at `c ^ (row & 7)`, X's at `c ^ ((row >> 1) & 3)`), so each
//! `ldmatrix` phase reads 8 different bank groups.
//!
//! After the walk the warps' sums meet in shared memory and are added in warp order,
//! then (with `KSPLIT` > 1) over the blocks of a strip as `gemv_n` adds them
//! ([`crate::family::strip_sum`]): the same bits on every run.

use crate::codegen::cuda::{fill, preamble};
use crate::codegen::prelude::{kernel_params, variant_store, view_prologue};
use crate::codegen::Variant;
use crate::family::decode::MMA_FN;
use crate::family::{strip_sum, turned};
use crate::ir::GemmIr;
use crate::target::Backend;

/// The CUDA source of diagnosis variant `variant` ([`Variant::Full`]: the kernel).
///
/// - `LoadOnly`: every copy into the ring and every `ldmatrix` stay; the fragments are
///   folded (xor) into one accumulator instead of the MMAs.
/// - `NoEpilogue`: the store writes the raw dot product.
/// - `ComputeOnly`: no copy into the ring; the MMAs run on whatever the slots hold.
pub(super) fn emit_variant(ir: &GemmIr, variant: Variant) -> String {
    let mut s = preamble(ir, "decode_n mma.sync m16n8k16 on ldmatrix.trans, swap-AB", variant);
    let math = match variant {
        Variant::LoadOnly => SINK_MATH.to_string(),
        _ => format!("{MMA_FN}{MMA_MATH}"),
    };
    let copies = match variant {
        Variant::ComputeOnly => "0",
        _ => "1",
    };
    s.push_str(&fill(
        KERNEL,
        &[
            ("MATH", fill(&math, &[("TY", ir.ab_dtype.name().to_string())])),
            ("COPIES", copies.to_string()),
            ("ROLES", turned::role_defines(ir, false)),
            ("SPLIT_HEAD", strip_sum::cuda_split_head()),
            ("SYM", ir.symbol()),
            ("PARAMS", kernel_params(ir, Backend::Cuda)),
            ("VIEW", view_prologue(ir, Backend::Cuda)),
            (
                "TAIL",
                strip_sum::cuda_tail(
                    "const int ci = i, cj = j;",
                    &variant_store(ir, variant, "ci", "cj", "sum"),
                ),
            ),
        ],
    ));
    s
}

/// `cg_frag_math`: one k16 step's MMAs for every (16-column, 8-row) block pair (after
/// `decode`'s `cg_mma`).
const MMA_MATH: &str = r#"static __device__ __forceinline__ void cg_frag_math(float (&acc)[NT][MT][4], int nt, const unsigned (&a)[4], const unsigned (&x)[MT][4], int s) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) cg_mma(acc[nt][mt], a[0], a[1], a[2], a[3], x[mt][2 * s], x[mt][2 * s + 1]);
}
"#;

/// [`Variant::LoadOnly`]'s `cg_frag_math`: no MMA; the fragments are folded into one
/// accumulator, which the store writes (so that no load is dead).
const SINK_MATH: &str = r#"/* Diagnosis variant load_only: no mma; the fragments reach the output. */
static __device__ __forceinline__ void cg_frag_math(float (&acc)[NT][MT][4], int nt, const unsigned (&a)[4], const unsigned (&x)[MT][4], int s) {
    unsigned h = __float_as_uint(acc[0][0][0]) ^ a[0] ^ a[1] ^ a[2] ^ a[3];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) h ^= x[mt][2 * s] ^ x[mt][2 * s + 1];
    acc[0][0][0] = __uint_as_float(h);
}
"#;

const KERNEL: &str = r#"
#define CG_THREADS (WARPS * 32)
#define CG_BK 32
#define CG_NB (NT * 16)
#define CG_MR (MT * 8)
#define CG_WCH (CG_NB / 8)
#define CG_WSLOT (CG_BK * CG_NB)
#define CG_SLOT (CG_WSLOT + CG_MR * CG_BK)
#define CG_RS (CG_NB + 4)
#define CG_COPIES @COPIES@
typedef unsigned short cg_ab_t;
static_assert(BK == CG_BK, "a chunk is 32 rows of k");
static_assert(NT == 4 || NT == 8, "NT: 4 or 8 (rows of W's tile of 128 or 256 bytes)");
static_assert(MT == 1 || MT == 2 || MT == 4, "MT: 1, 2 or 4 (8 to 32 rows)");
static_assert(STAGES >= 2 && STAGES <= 8, "STAGES: 2 to 8");
@SPLIT_HEAD@@ROLES@
static __device__ __forceinline__ unsigned cg_smem_addr(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}
/* 16 bytes from global to shared; `bytes` < 16 zero-fills the rest (0: all zeros). */
static __device__ __forceinline__ void cg_cp16(unsigned dst, const void* src, int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(dst), "l"(src), "r"(bytes) : "memory");
}
static __device__ __forceinline__ void cg_ldsm4(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
        : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
static __device__ __forceinline__ void cg_ldsm4_t(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
        : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
@MATH@
/* The ring's copies of chunk `c` (32 rows of k from k = 32c) into the slot at `slot`
   (a shared address): each lane CG_WCH chunks of W's rows and MT of X's. Rows of W past
   K and columns past CG_C are zeros, as are X's k past K; rows of X past CG_R read the
   last one (never stored). */
static __device__ __forceinline__ void cg_copy(unsigned slot, int c, int lane, const cg_ab_t* gx, const cg_ab_t* gw,
                                               long ldx, long ldw, int n0, int R, int C, int K) {
#pragma unroll
    for (int u = 0; u < CG_WCH; ++u) {
        const int idx = u * 32 + lane, r = idx / CG_WCH, ch = idx % CG_WCH;
        const int k = c * CG_BK + r, n = n0 + ch * 8;
        const int cols = C - n;
        const int bytes = k < K && cols > 0 ? (cols >= 8 ? 16 : cols * 2) : 0;
        const cg_ab_t* src = gw + (long)(k < K ? k : K - 1) * ldw + (cols > 0 ? n : n0);
        cg_cp16(slot + (unsigned)(r * CG_NB + ((ch ^ (r & 7)) * 8)) * 2u, src, bytes);
    }
#pragma unroll
    for (int u = 0; u < MT; ++u) {
        const int idx = u * 32 + lane, m = idx >> 2, ch = idx & 3;
        const int k = c * CG_BK + ch * 8;
        const int left = K - k;
        const int bytes = left >= 8 ? 16 : (left > 0 ? left * 2 : 0);
        const cg_ab_t* src = gx + (long)(m < R ? m : R - 1) * ldx + (left > 0 ? k : 0);
        cg_cp16(slot + (unsigned)(CG_WSLOT + m * CG_BK + ((ch ^ ((m >> 1) & 3)) * 8)) * 2u, src, bytes);
    }
}
/* X has CG_R <= CG_MR rows (K-contiguous), W CG_C columns (N-contiguous rows of K);
   C(i, j) = X(i) . W(:, j). One block per SM: the ring is most of its shared memory. */
extern "C" __global__ void __launch_bounds__(CG_THREADS, 1) @SYM@(
#if KSPLIT > 1
    float* __restrict__ cg_ws, unsigned* __restrict__ cg_flags,
#endif
    int M, int N, int K, @PARAMS@) {
    extern __shared__ __align__(128) unsigned char cg_smem[];
    @VIEW@
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int g = lane >> 2, q = lane & 3;
    const int n0 = blockIdx.x * CG_NB;
    const cg_ab_t* __restrict__ gx = CG_XP;
    const cg_ab_t* __restrict__ gw = CG_WP;
    (void)gx; (void)gw;
    /* This block's chunks of K, [cb, ce): split blockIdx.y of KSPLIT; the warps take
       every WARPS-th from cb + warp. */
    const int chunks = (K + CG_BK - 1) / CG_BK;
    const int cb = (int)((long long)blockIdx.y * chunks / KSPLIT);
    const int ce = (int)((long long)(blockIdx.y + 1) * chunks / KSPLIT);
    const int mine = ce - cb - warp > 0 ? (ce - cb - warp + WARPS - 1) / WARPS : 0;
    const unsigned ring = cg_smem_addr(cg_smem) + (unsigned)(warp * STAGES * CG_SLOT) * 2u;
    float acc[NT][MT][4];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int v = 0; v < 4; ++v) acc[nt][mt][v] = 0.0f;

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (CG_COPIES && s < mine)
            cg_copy(ring + (unsigned)(s * CG_SLOT) * 2u, cb + warp + s * WARPS, lane, gx, gw, CG_LDX, CG_LDW, n0, CG_R, CG_C, K);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
    /* The ldmatrix addresses within a slot: lane l gives row l & 7 of piece l >> 3. W's
       pieces for 16 columns at k16 step s: (k 0-7, columns 0-7), (k 0-7, 8-15), (k 8-15,
       0-7), (k 8-15, 8-15), the A fragment's order. X's: k chunks 0-3 of 8 rows. */
    const int wr = ((lane >> 4) & 1) * 8 + (lane & 7), wc = (lane >> 3) & 1;
    const int xm = lane & 7, xc = lane >> 3;
#pragma unroll 1
    for (int it = 0; it < mine; ++it) {
        asm volatile("cp.async.wait_group %0;\n" :: "n"(STAGES - 2) : "memory");
        __syncwarp();
        {
            const int nx = it + STAGES - 1;
            if (CG_COPIES && nx < mine)
                cg_copy(ring + (unsigned)((nx % STAGES) * CG_SLOT) * 2u, cb + warp + nx * WARPS, lane, gx, gw, CG_LDX, CG_LDW, n0, CG_R, CG_C, K);
            asm volatile("cp.async.commit_group;\n" ::: "memory");
        }
        const unsigned slot = ring + (unsigned)((it % STAGES) * CG_SLOT) * 2u;
        unsigned x[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
            const int m = mt * 8 + xm;
            cg_ldsm4(x[mt], slot + (unsigned)(CG_WSLOT + m * CG_BK + ((xc ^ ((m >> 1) & 3)) * 8)) * 2u);
        }
#pragma unroll
        for (int s = 0; s < 2; ++s)
#pragma unroll
            for (int nt = 0; nt < NT; ++nt) {
                const int r = s * 16 + wr, ch = nt * 2 + wc;
                unsigned a[4];
                cg_ldsm4_t(a, slot + (unsigned)(r * CG_NB + ((ch ^ (r & 7)) * 8)) * 2u);
                cg_frag_math(acc, nt, a, x, s);
            }
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    __syncthreads();

    /* Every warp's sums in shared memory (the ring's no longer), row-major with rows of
       CG_RS floats (a warp's stores hit 32 banks); the threads then add them in warp
       order. Element v of block (nt, mt): column 16nt + g (+8 for v >= 2), row 8mt + 2q
       (+1 for odd v). */
    float* const cg_sums = reinterpret_cast<float*>(cg_smem);
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int v = 0; v < 4; ++v)
                cg_sums[(warp * CG_MR + mt * 8 + q * 2 + (v & 1)) * CG_RS + nt * 16 + g + (v >> 1) * 8] = acc[nt][mt][v];
    __syncthreads();
#define CG_TR CG_MR
#define CG_RED(w, i, jj) cg_sums[((w) * CG_MR + (i)) * CG_RS + (jj)]
@TAIL@
}
"#;
