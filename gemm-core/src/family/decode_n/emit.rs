//! The `decode_n` family's CUDA source (header-free, NVRTC).
//!
//! Each warp streams its own chunks of k (64 bytes of k: 32 of 16-bit elements, 16 of
//! f32) of the block's `CG_NB` columns through a ring of `STAGES` slots in shared memory
//! (cp.async, 16 bytes a lane, so a row of W's tile is read whole: 128 or 256 bytes in
//! 16 bits, 256 or 512 in f32), and X's `CG_MR` rows of the chunk beside them. The ring
//! is the warp's alone: a slot is waited for with `cp.async.wait_group` and `__syncwarp`,
//! never a block barrier. W's rows are N-contiguous, so the MMA takes them transposed,
//! with the block's columns as the instruction's 16 rows and X's rows as its 8 columns: C
//! is computed transposed, as in the `decode` family, so at most 8 rows of X pad nothing.
//!
//! - 16 bits (`mma.m16n8k16`): `ldmatrix.trans` turns four 8x8 pieces of the slot (8
//!   k-rows of 8 columns each) into the A fragment, `ldmatrix` X's rows into the B one.
//!   The slots are swizzled (a row's 16-byte chunk `c` at `c ^ (row & 7)`, X's at
//!   `c ^ ((row >> 1) & 3)`), so each `ldmatrix` phase reads 8 different bank groups.
//! - f32 rounded to tf32 (`mma.m16n8k8`, one element a fragment word): `ldmatrix` moves
//!   16-bit pieces only, so each lane reads its words with 8-byte shared loads. The
//!   instruction's rows and k are taken in a permuted order that makes a lane's words
//!   adjacent: row `g` is column `2g` of the 16-column block and row `g + 8` column
//!   `2g + 1`, k `q` is k `2q` of the 8-k step and k `q + 4` is `2q + 1`. A lane then reads
//!   columns `2g, 2g + 1` of k rows `2q` and `2q + 1` (two loads) and X's k `2q, 2q + 1` (one);
//!   A and B see the same k permutation, so only the order of the sum changes, and the
//!   sums are stored at their permuted columns. Chunk `c` of W's row `r` sits at
//!   `c ^ (2 ((r >> 1) & 3))`, X's row `m` at `c ^ (m & 2)`: each half-warp's loads hit 8
//!   different bank groups. Each word is rounded once (`cvt.rna`) as it is loaded.
//!
//! After the walk the warps' sums meet in shared memory and are added in warp order,
//! then (with `KSPLIT` > 1) over the blocks of a strip as `gemv_n` adds them
//! ([`crate::family::strip_sum`]): the same bits on every run.

use crate::codegen::cuda::{fill, preamble};
use crate::codegen::prelude::{kernel_params, variant_store, view_prologue};
use crate::codegen::Variant;
use crate::family::decode::{MMA_FN, MMA_TF32_FN};
use crate::family::mma_sync::TO_TF32;
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
    let tf32 = ir.ab_dtype.size() == 4;
    let what = if tf32 {
        "decode_n mma.sync m16n8k8 tf32 on 8-byte shared loads, swap-AB"
    } else {
        "decode_n mma.sync m16n8k16 on ldmatrix.trans, swap-AB"
    };
    let mut s = preamble(ir, what, variant);
    let math = match variant {
        Variant::LoadOnly => SINK_MATH.to_string(),
        _ if tf32 => format!("{MMA_TF32_FN}{MMA_MATH}"),
        _ => format!("{MMA_FN}{MMA_MATH}"),
    };
    let (elem, frags) = if tf32 {
        (ELEM_32, format!("{TO_TF32}{FRAGS_32}"))
    } else {
        (ELEM_16, FRAGS_16.to_string())
    };
    let copies = match variant {
        Variant::ComputeOnly => "0",
        _ => "1",
    };
    s.push_str(&fill(
        KERNEL,
        &[
            ("ELEM", elem.to_string()),
            ("FRAGS", frags),
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

/// The 16-bit slot layout and fragment loads (`ldmatrix`, W's pieces transposed).
const ELEM_16: &str = r#"#define CG_BK 32
#define CG_EPC 8
#define CG_ES 2u
typedef unsigned short cg_ab_t;
/* Where chunk c of W's row r and of X's row m sit in a slot (chunk c ^ CG_*SW), and the
   column of C that accumulator v of a lane (g, q) holds in a 16-column block. */
#define CG_WSW(r) ((r) & 7)
#define CG_XSW(m) (((m) >> 1) & 3)
#define CG_SUM_COL(g, v) ((g) + ((v) >> 1) * 8)
"#;

/// `cg_ld_x` and `cg_ld_w` in 16 bits: X's fragments of a chunk (both k16 steps) and W's
/// of k16 step `s` of 16-column block `nt`.
const FRAGS_16: &str = r#"static __device__ __forceinline__ void cg_ldsm4(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
        : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
static __device__ __forceinline__ void cg_ldsm4_t(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
        : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
/* Lane l gives the address of row l & 7 of piece l >> 3. X's pieces: k chunks 0-3 of 8
   rows. W's for 16 columns at k16 step s: (k 0-7, columns 0-7), (k 0-7, 8-15), (k 8-15,
   0-7), (k 8-15, 8-15), the A fragment's order. */
static __device__ __forceinline__ void cg_ld_x(unsigned (&x)[4], unsigned slot, int mt, int lane) {
    const int m = mt * 8 + (lane & 7), ch = lane >> 3;
    cg_ldsm4(x, slot + (unsigned)(CG_WSLOT + m * CG_BK + (ch ^ CG_XSW(m)) * CG_EPC) * CG_ES);
}
static __device__ __forceinline__ void cg_ld_w(unsigned (&a)[4], unsigned slot, int s, int nt, int lane) {
    const int r = s * 16 + ((lane >> 4) & 1) * 8 + (lane & 7), ch = nt * 2 + ((lane >> 3) & 1);
    cg_ldsm4_t(a, slot + (unsigned)(r * CG_NB + (ch ^ CG_WSW(r)) * CG_EPC) * CG_ES);
}
"#;

/// The f32 slot layout (rounded to tf32 at the fragment loads).
const ELEM_32: &str = r#"#define CG_BK 16
#define CG_EPC 4
#define CG_ES 4u
typedef float cg_ab_t;
#define CG_WSW(r) ((((r) >> 1) & 3) << 1)
#define CG_XSW(m) ((m) & 2)
#define CG_SUM_COL(g, v) (2 * (g) + ((v) >> 1))
"#;

/// `cg_ld_x` and `cg_ld_w` in tf32 (see the module's doc for the permuted rows and k):
/// X's words of a chunk (`x[2s]`, `x[2s + 1]` for k8 step `s`) and W's of step `s` of
/// 16-column block `nt`, each rounded once.
const FRAGS_32: &str = r#"static __device__ __forceinline__ void cg_lds2(unsigned& a, unsigned& b, unsigned addr) {
    asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];\n" : "=r"(a), "=r"(b) : "r"(addr));
}
static __device__ __forceinline__ void cg_ld_x(unsigned (&x)[4], unsigned slot, int mt, int lane) {
    const int m = mt * 8 + (lane >> 2), q = lane & 3;
#pragma unroll
    for (int s = 0; s < 2; ++s) {
        const int ch = 2 * s + (q >> 1);
        cg_lds2(x[2 * s], x[2 * s + 1], slot + (unsigned)(CG_WSLOT + m * CG_BK + (ch ^ CG_XSW(m)) * CG_EPC + (q & 1) * 2) * CG_ES);
    }
#pragma unroll
    for (int v = 0; v < 4; ++v) x[v] = cg_to_tf32(x[v]);
}
static __device__ __forceinline__ void cg_ld_w(unsigned (&a)[4], unsigned slot, int s, int nt, int lane) {
    const int g = lane >> 2, r = s * 8 + 2 * (lane & 3), ch = nt * 4 + (g >> 1), w = (g & 1) * 2;
    cg_lds2(a[0], a[1], slot + (unsigned)(r * CG_NB + (ch ^ CG_WSW(r)) * CG_EPC + w) * CG_ES);
    cg_lds2(a[2], a[3], slot + (unsigned)((r + 1) * CG_NB + (ch ^ CG_WSW(r + 1)) * CG_EPC + w) * CG_ES);
#pragma unroll
    for (int v = 0; v < 4; ++v) a[v] = cg_to_tf32(a[v]);
}
"#;

const KERNEL: &str = r#"
#define CG_THREADS (WARPS * 32)
#define CG_NB (NT * 16)
#define CG_MR (MT * 8)
@ELEM@
/* Slot sizes in elements; a row of X's chunk is 64 bytes (4 copies). */
#define CG_WCH (CG_NB / CG_EPC)
#define CG_WSLOT (CG_BK * CG_NB)
#define CG_SLOT (CG_WSLOT + CG_MR * CG_BK)
#define CG_RS (CG_NB + 4)
#define CG_COPIES @COPIES@
static_assert(BK == CG_BK, "a chunk is 64 bytes of k");
static_assert(NT == 4 || NT == 8, "NT: 4 or 8 (16-column blocks a block)");
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
@FRAGS@@MATH@
/* The ring's copies of chunk `c` (CG_BK rows of k from k = CG_BK c) into the slot at
   `slot` (a shared address): each lane CG_BK CG_WCH / 32 16-byte chunks of W's rows and
   MT of X's. Rows of W past K and columns past CG_C are zeros, as are X's k past K; rows
   of X past CG_R read the last one (never stored). */
static __device__ __forceinline__ void cg_copy(unsigned slot, int c, int lane, const cg_ab_t* gx, const cg_ab_t* gw,
                                               long ldx, long ldw, int n0, int R, int C, int K) {
#pragma unroll
    for (int u = 0; u < CG_BK * CG_WCH / 32; ++u) {
        const int idx = u * 32 + lane, r = idx / CG_WCH, ch = idx % CG_WCH;
        const int k = c * CG_BK + r, n = n0 + ch * CG_EPC;
        const int cols = C - n;
        const int bytes = k < K && cols > 0 ? (cols >= CG_EPC ? 16 : cols * (int)CG_ES) : 0;
        const cg_ab_t* src = gw + (long)(k < K ? k : K - 1) * ldw + (cols > 0 ? n : n0);
        cg_cp16(slot + (unsigned)(r * CG_NB + (ch ^ CG_WSW(r)) * CG_EPC) * CG_ES, src, bytes);
    }
#pragma unroll
    for (int u = 0; u < MT; ++u) {
        const int idx = u * 32 + lane, m = idx >> 2, ch = idx & 3;
        const int k = c * CG_BK + ch * CG_EPC;
        const int left = K - k;
        const int bytes = left >= CG_EPC ? 16 : (left > 0 ? left * (int)CG_ES : 0);
        const cg_ab_t* src = gx + (long)(m < R ? m : R - 1) * ldx + (left > 0 ? k : 0);
        cg_cp16(slot + (unsigned)(CG_WSLOT + m * CG_BK + (ch ^ CG_XSW(m)) * CG_EPC) * CG_ES, src, bytes);
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
    const unsigned ring = cg_smem_addr(cg_smem) + (unsigned)(warp * STAGES * CG_SLOT) * CG_ES;
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
            cg_copy(ring + (unsigned)(s * CG_SLOT) * CG_ES, cb + warp + s * WARPS, lane, gx, gw, CG_LDX, CG_LDW, n0, CG_R, CG_C, K);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
#pragma unroll 1
    for (int it = 0; it < mine; ++it) {
        asm volatile("cp.async.wait_group %0;\n" :: "n"(STAGES - 2) : "memory");
        __syncwarp();
        {
            const int nx = it + STAGES - 1;
            if (CG_COPIES && nx < mine)
                cg_copy(ring + (unsigned)((nx % STAGES) * CG_SLOT) * CG_ES, cb + warp + nx * WARPS, lane, gx, gw, CG_LDX, CG_LDW, n0, CG_R, CG_C, K);
            asm volatile("cp.async.commit_group;\n" ::: "memory");
        }
        const unsigned slot = ring + (unsigned)((it % STAGES) * CG_SLOT) * CG_ES;
        unsigned x[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) cg_ld_x(x[mt], slot, mt, lane);
        /* The chunk's two MMA k-steps (k16 in 16 bits, k8 in tf32). */
#pragma unroll
        for (int s = 0; s < 2; ++s)
#pragma unroll
            for (int nt = 0; nt < NT; ++nt) {
                unsigned a[4];
                cg_ld_w(a, slot, s, nt, lane);
                cg_frag_math(acc, nt, a, x, s);
            }
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    __syncthreads();

    /* Every warp's sums in shared memory (the ring's no longer), row-major with rows of
       CG_RS floats (a warp's stores hit 32 banks); the threads then add them in warp
       order. Element v of block (nt, mt): column 16nt + CG_SUM_COL(g, v), row 8mt + 2q
       (+1 for odd v). */
    float* const cg_sums = reinterpret_cast<float*>(cg_smem);
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int v = 0; v < 4; ++v)
                cg_sums[(warp * CG_MR + mt * 8 + q * 2 + (v & 1)) * CG_RS + nt * 16 + CG_SUM_COL(g, v)] = acc[nt][mt][v];
    __syncthreads();
#define CG_TR CG_MR
#define CG_RED(w, i, jj) cg_sums[((w) * CG_MR + (i)) * CG_RS + (jj)]
@TAIL@
}
"#;
