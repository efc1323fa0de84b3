//! The `decode` family's CUDA source (header-free, NVRTC).
//!
//! Lane `(g, q)` of a warp (`g = lane / 4`, `q = lane % 4`) owns, per 32-k chunk `c`,
//! the 8 elements `k = 32c + 8q .. 32c + 8q + 8` of two columns of B per 16-column block
//! (columns `g` and `g + 8`) and of one row of A per 8-row block (row `g`): one 16-byte
//! load each, straight into registers. The chunk's two `m16n8k16` MMAs (B's columns as the
//! instruction's 16 rows, A's rows as its 8 columns: C is computed transposed) take the
//! loaded 32-bit words in the order `{w0, w1}` then `{w2, w3}`: lane `q`'s word `j` holds
//! k pair `8q + 2j`, which the first MMA reads as its pair `2q` (`j = 0`) and `2q + 8`
//! (`j = 1`), the second likewise for `j = 2, 3`. A and B see the same permutation, so
//! each product pairs the same k; only the order of the sum differs from k order.
//!
//! Turned around (`SWAP`, [`super::DecodeTile::swap`]) the kernel computes `Cᵀ = Bᵀ · Aᵀ`
//! for N ≤ `8 * MT`: B's columns take A's place and A's rows B's (both K-contiguous, so
//! every load is the same), and each sum is stored at its transposed place in C.
//!
//! The small side may instead be stored *across* (`CG_X_KMAJ` 0: its few rows
//! contiguous, one k after another): a row-major weight `W` (K×N, N ≤ 32; the plan's
//! default tiles take 16) turned around, or a column-major A with few rows. Each lane then loads, per word of the chunk, the
//! pair of adjacent rows `2(lane % 4)`, `+1` at one k, and `movmatrix.trans` turns the
//! 8×8 pieces so that every lane holds the same words a K-contiguous 16-byte load would
//! have given it. The small side is a few KiB a chunk that every block reads (L1 and L2
//! hits); the streamed side keeps its 16-byte loads.
//!
//! f32 operands rounded to tf32 (`acc = tf32`) take `m16n8k8`, whose fragments hold one
//! 32-bit element where `m16n8k16`'s hold a pair: a lane's 16-byte load holds `k = 4q ..
//! 4q + 3` of a 16-k chunk, and the same calls put word `j`'s k at the instruction's
//! slot `q` (`j` even) or `q + 4` (`j` odd). Every word is rounded to tf32 (`cvt.rna`) as
//! the mma_sync family rounds its operands. Stored across, a lane loads its four
//! elements one by one (`movmatrix` moves 16-bit pairs only); 8 lanes of a quad position
//! read 32 contiguous bytes of one k.

use super::chunk_k;
use crate::codegen::cuda::{fill, preamble};
use crate::codegen::prelude::{kernel_params, variant_store, view_prologue};
use crate::codegen::Variant;
use crate::family::mma_sync::TO_TF32;
use crate::family::turned;
use crate::ir::GemmIr;
use crate::target::Backend;

/// The CUDA source of diagnosis variant `variant` ([`Variant::Full`]: the kernel).
///
/// - `LoadOnly`: every load stays; each chunk's loaded words are folded into one
///   accumulator instead of the MMAs.
/// - `NoEpilogue`: the store writes the raw dot product.
/// - `ComputeOnly`: no global load of A or B; the MMAs run on words derived from the chunk
///   index (which no compiler can fold away).
pub(super) fn emit_variant(ir: &GemmIr, variant: Variant) -> String {
    let tf32 = ir.ab_dtype.size() == 4;
    let what = if tf32 {
        "decode mma.sync m16n8k8 tf32, swap-AB"
    } else {
        "decode mma.sync m16n8k16, swap-AB"
    };
    let mut s = preamble(ir, what, variant);
    s.push_str(&crate::family::promote_define(ir));
    let chunk = match variant {
        Variant::LoadOnly => SINK_CHUNK.to_string(),
        _ if tf32 => format!(
            "{MMA_TF32_FN}{TO_TF32}{ROUND_U4}{}",
            fill(MMA_CHUNK, &[("PREP", ROUND_TF32.to_string())])
        ),
        _ => format!("{MMA_FN}{}", fill(MMA_CHUNK, &[("PREP", KEEP.to_string())])),
    };
    let loads = match variant {
        Variant::ComputeOnly => "#define CG_LOAD_B(p, c) cg_fake(c, 1u)\n#define CG_LOAD_A(p, c) cg_fake(c, 2u)",
        // Rows that do not all start on 16-byte boundaries: windows over the aligned chunks.
        _ => "#if CG_W_VEC\n#define CG_LOAD_B(p, c) cg_ld_stream(p)\n#else\n#define CG_LOAD_B(p, c) cg_ld_win(p)\n#endif\n#if CG_X_VEC\n#define CG_LOAD_A(p, c) cg_ld_cached(p)\n#else\n#define CG_LOAD_A(p, c) cg_ld_win(p)\n#endif",
    };
    // The small side stored across: its own loads (compute-only derives its words from
    // the chunk, as for a K-contiguous side).
    let across = match variant {
        Variant::ComputeOnly => "#define CG_LOAD_ACROSS(mt, c, kvalid) cg_fake(c, 2u)",
        _ => "#define CG_LOAD_ACROSS(mt, c, kvalid) cg_ld_across(xq, xk, xr, mt, c, kvalid, CG_R, CG_LDX)",
    };
    s.push_str(&fill(
        KERNEL,
        &[
            ("CHUNK_FN", fill(&chunk, &[("TY", ir.ab_dtype.name().to_string())])),
            ("CHUNK_K", chunk_k(ir.ab_dtype).to_string()),
            ("ELEM", if tf32 { ELEM_32 } else { ELEM_16 }.to_string()),
            ("SHIFT_DOWN", crate::family::gemv::SHIFT_DOWN.to_string()),
            ("SYM", ir.symbol()),
            ("PARAMS", kernel_params(ir, Backend::Cuda)),
            ("VIEW", view_prologue(ir, Backend::Cuda)),
            ("ROLES", roles(ir)),
            (
                "LOADS",
                format!(
                    "{loads}\n#if !CG_X_KMAJ\n{}{across}\n#endif",
                    fill(if tf32 { ACROSS_32 } else { ACROSS }, &[("LD_U32", LD_U32.to_string())])
                ),
            ),
            ("COORDS", turned::STORE_COORDS.to_string()),
            ("STORE", variant_store(ir, variant, "ci", "cj", "acc")),
        ],
    ));
    s
}

/// The operands' roles in either form (`SWAP` 0 or 1): `CG_XP`/`CG_LDX` the side of at
/// most `8 * MT` rows (A, or B's columns turned around), `CG_WP`/`CG_LDW` the streamed side
/// (B's columns, or A's rows), `CG_R`/`CG_C` their extents, `CG_X_VEC`/`CG_W_VEC` whether
/// each side's rows all start on 16-byte boundaries, `CG_X_KMAJ` whether the small
/// side's rows are K-contiguous (else stored across, read by [`ACROSS`]'s loads, in
/// pairs of elements where `CG_X_ALIGN`, the side's element alignment, is even). The
/// streamed side is K-contiguous in either form (B column-major, or A row-major turned
/// around: [`turned::modes`]).
fn roles(ir: &GemmIr) -> String {
    // Whether each side's rows all start on 16-byte boundaries (the shape flags of the
    // operand that takes the side), and whether the small side's rows are K-contiguous.
    // A small side stored across takes no 16-byte loads: its alignment does not matter.
    let form = |swap: bool| {
        let flags = turned::form_error(ir, swap, "decode").unwrap_or_else(|| {
            let (x, w) = if swap { ('B', 'A') } else { ('A', 'B') };
            let x_kmaj = turned::small_side_k_contiguous(ir, swap);
            let x_vec = if x_kmaj { format!("{x}_VEC") } else { "1".into() };
            format!(
                "#define CG_X_KMAJ {}\n#define CG_X_VEC {x_vec}\n#define CG_X_ALIGN {x}_ALIGN\n#define CG_W_VEC {w}_VEC\n",
                x_kmaj as u8
            )
        });
        turned::role_defines(ir, swap) + &flags
    };
    turned::forms("8 * MT", &form(true), &form(false))
}

/// `cg_mma`: one `mma.sync m16n8k16` with f32 accumulators `c`, the operands' type
/// `@TY@` (f16 or bf16). Shared with `decode_n`.
pub(in crate::family) const MMA_FN: &str = r#"static __device__ __forceinline__ void cg_mma(float* c, unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.@TY@.@TY@.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
"#;

/// `cg_mma` for f32 operands: one `mma.sync m16n8k8` on tf32 words (rounded by the
/// caller), the same argument places as [`MMA_FN`]'s. Shared with `decode_n`.
pub(in crate::family) const MMA_TF32_FN: &str = r#"static __device__ __forceinline__ void cg_mma(float* c, unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
"#;

/// `cg_to_tf32` of a 16-byte load's four words (after [`TO_TF32`]'s of one).
const ROUND_U4: &str = r#"static __device__ __forceinline__ cg_u4 cg_to_tf32(const cg_u4& v) {
    return cg_u4{cg_to_tf32(v.x), cg_to_tf32(v.y), cg_to_tf32(v.z), cg_to_tf32(v.w)};
}
"#;

/// [`MMA_CHUNK`]'s operands as loaded (16-bit words go to the MMA as they are).
const KEEP: &str = "    const cg_u4 (&wr)[NT][2] = w;\n    const cg_u4 (&xr)[MT] = x;";

/// [`MMA_CHUNK`]'s operands rounded to tf32, each word once (an MMA per block pair would
/// round the shared words again).
const ROUND_TF32: &str = r#"    cg_u4 wr[NT][2], xr[MT];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
        wr[nt][0] = cg_to_tf32(w[nt][0]);
        wr[nt][1] = cg_to_tf32(w[nt][1]);
    }
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) xr[mt] = cg_to_tf32(x[mt]);"#;

/// `cg_chunk`: a chunk's two MMAs for every (16-column, 8-row) block pair, on the words
/// `@PREP@` makes of the loaded ones ([`KEEP`] or [`ROUND_TF32`]).
const MMA_CHUNK: &str = r#"static __device__ __forceinline__ void cg_chunk(float (&acc)[NT][MT][4], const cg_u4 (&w)[NT][2], const cg_u4 (&x)[MT]) {
@PREP@
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
            cg_mma(acc[nt][mt], wr[nt][0].x, wr[nt][1].x, wr[nt][0].y, wr[nt][1].y, xr[mt].x, xr[mt].y);
            cg_mma(acc[nt][mt], wr[nt][0].z, wr[nt][1].z, wr[nt][0].w, wr[nt][1].w, xr[mt].z, xr[mt].w);
        }
}
"#;

/// The element type and what depends on its width, 16-bit: `cg_ab_t`, `CG_EPC` (elements
/// a 16-byte chunk), where a lane's stored-across pair lies (`CG_XK`: its k of word 0,
/// `CG_XR`: its first row of a block; see [`ACROSS`]) and `cg_ld_part`, the first `valid`
/// of a segment's elements and zeros after them (the chunk that crosses K).
const ELEM_16: &str = r#"typedef unsigned short cg_ab_t;
#define CG_EPC 8
#define CG_XK (8 * (lane >> 3) + ((lane >> 2) & 1))
#define CG_XR (2 * q)
static __device__ __forceinline__ cg_u4 cg_ld_part(const cg_ab_t* p, int valid) {
    unsigned e[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) e[i] = i < valid ? (unsigned)p[i] : 0u;
    return cg_u4{e[0] | e[1] << 16, e[2] | e[3] << 16, e[4] | e[5] << 16, e[6] | e[7] << 16};
}
"#;

/// [`ELEM_16`] for f32 elements (tf32): a lane's stored-across elements are its row `g`
/// at `k = 4q .. 4q + 3` ([`ACROSS_32`]).
const ELEM_32: &str = r#"typedef float cg_ab_t;
#define CG_EPC 4
#define CG_XK (4 * q)
#define CG_XR g
static __device__ __forceinline__ cg_u4 cg_ld_part(const cg_ab_t* p, int valid) {
    unsigned e[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) e[i] = i < valid ? __float_as_uint(p[i]) : 0u;
    return cg_u4{e[0], e[1], e[2], e[3]};
}
"#;

/// [`Variant::LoadOnly`]'s `cg_chunk`: no MMA; every loaded word is folded (xor) into one
/// accumulator, which the store writes. An empty `asm volatile` that only reads the words
/// is not enough: it leaves no instruction in the PTX, so ptxas found the loads dead and
/// deleted the whole loop (the H200's "load-only" time was a kernel without loads).
const SINK_CHUNK: &str = r#"/* Diagnosis variant load_only: no mma; the loaded words reach the output. */
static __device__ __forceinline__ void cg_chunk(float (&acc)[NT][MT][4], const cg_u4 (&w)[NT][2], const cg_u4 (&x)[MT]) {
    unsigned h = __float_as_uint(acc[0][0][0]);
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int i = 0; i < 2; ++i) h ^= w[nt][i].x ^ w[nt][i].y ^ w[nt][i].z ^ w[nt][i].w;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) h ^= x[mt].x ^ x[mt].y ^ x[mt].z ^ x[mt].w;
    acc[0][0][0] = __uint_as_float(h);
}
"#;

/// `cg_ld_u32`: a 4-byte word of the small side stored across, read-only (both widths'
/// across loads take it).
const LD_U32: &str = r#"static __device__ __forceinline__ unsigned cg_ld_u32(const cg_ab_t* p) {
    unsigned v;
    asm("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}
"#;

/// `cg_ld_across`: a chunk's words of the small side's 8-row block `mt` where that side
/// is stored across (`CG_X_KMAJ` 0: element `(r, k)` at `r + k * ld`, `rows` rows), for lane
/// `(g, q)` the same words as a K-contiguous 16-byte load of row `8mt + g` at `k = 8q ..
/// 8q + 7` (see the module's docs).
pub(super) const ACROSS: &str = r#"static __device__ __forceinline__ unsigned short cg_ld_u16(const cg_ab_t* p) {
    unsigned short v;
    asm("ld.global.nc.u16 %0, [%1];" : "=h"(v) : "l"(p));
    return v;
}
@LD_U32@/* movmatrix.trans takes lane l's pair (rows 2(l % 4), +1 of the block) at row l / 4 of an
   8x8 piece and gives lane (g, q) row g's entries 2q, 2q + 1 of it: with piece row
   rho = l / 4 standing for k = 8(rho / 2) + 2j + rho % 2 (xk + 2j, xk the lane's k of
   word 0), lane (g, q) gets row g's k pair 8q + 2j, 8q + 2j + 1: word j of the chunk.
   Where the side's pitch and start are even (CG_X_ALIGN >= 2) a pair is one 4-byte
   load, and the last row of an odd count is read alone (the pair's other row is past
   the last: its sums are never stored, whatever it reads); else two 2-byte loads, rows
   past the last reading the last. k past K reads zero. */
static __device__ __forceinline__ cg_u4 cg_ld_across(const cg_ab_t* xq, int xk, int xr, int mt, int c, int kvalid, int rows, long ld) {
    const int r0 = min(8 * mt + xr, rows - 1);
    const cg_ab_t* pc = xq + (long)c * CG_CK * ld + r0;
    unsigned w[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const cg_ab_t* p = pc + 2 * j * ld;
        unsigned v = 0u;
        if (xk + 2 * j < kvalid) {
#if CG_X_ALIGN >= 2
            v = r0 + 1 < rows ? cg_ld_u32(p) : (unsigned)cg_ld_u16(p) * 0x10001u;
#else
            v = (unsigned)cg_ld_u16(p) | (unsigned)cg_ld_u16(p + (r0 + 1 < rows)) << 16;
#endif
        }
        asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(w[j]) : "r"(v));
    }
    return cg_u4{w[0], w[1], w[2], w[3]};
}
"#;

/// [`ACROSS`] for 32-bit elements: lane `(g, q)` loads its row `8mt + g` (`xr`, rows past
/// the last reading the last) at `k = 4q + j` (`xk + j`) for `j = 0..3`, one 4-byte load
/// each (zero from K on): the words a K-contiguous 16-byte load would have given it.
pub(super) const ACROSS_32: &str = r#"@LD_U32@static __device__ __forceinline__ cg_u4 cg_ld_across(const cg_ab_t* xq, int xk, int xr, int mt, int c, int kvalid, int rows, long ld) {
    const cg_ab_t* p = xq + (long)c * CG_CK * ld + min(8 * mt + xr, rows - 1);
    unsigned w[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) w[j] = xk + j < kvalid ? cg_ld_u32(p + j * ld) : 0u;
    return cg_u4{w[0], w[1], w[2], w[3]};
}
"#;

const KERNEL: &str = r#"
#define CG_THREADS (WARPS * 32)
#define CG_GROUPS (WARPS / KW)
#define CG_WN (NT * 16)
#define CG_NB (CG_GROUPS * CG_WN)
#define CG_FR (NT * MT * 4)
#define CG_CK @CHUNK_K@
@ELEM@static_assert(BK == CG_CK, "a chunk is four lanes' 16 bytes: 32 k of 16-bit elements, 16 of f32");
static_assert(WARPS % KW == 0, "KW must divide WARPS");
static_assert(MT >= 1 && MT <= 8 && NT >= 1 && NT <= 4, "MT 1-8, NT 1-4");
@ROLES@
/* Chunks in flight a super-step: a window holds two chunks until it is shifted, so rows
   at any alignment take half the unroll (at the whole one ptxas spilled at 128
   registers: MT = 4 with NT = 2, or with a rotated walk), and so does a small side
   stored across from 32 rows on, or from 16 where a pair is two loads (their loads
   spilled at 128 registers); four loads of f32 elements count as pairs. So does tf32
   at 32 accumulators: rounding the words spilled 4 bytes at 128 registers (MT = 4 with
   NT = 2, whole chunks). */
#if CG_X_KMAJ
#define CG_X_HEAVY 0
#elif CG_X_ALIGN >= 2 || CG_EPC == 4
#define CG_X_HEAVY (MT >= 4)
#else
#define CG_X_HEAVY (MT >= 2)
#endif
#if CG_W_VEC && CG_X_VEC && !CG_X_HEAVY && !(CG_EPC == 4 && MT * NT >= 8)
#define CG_UNROLL UNROLL
#else
#define CG_UNROLL ((UNROLL + 1) / 2)
#endif
#ifndef ROT
#define ROT 0
#endif
/* B: read once by the whole grid. The L1 keeps none of it, and the L2 fetches the
   256 bytes around each miss (a column's next chunks, which this lane's quad reads next). */
static __device__ __forceinline__ cg_u4 cg_ld_stream(const cg_ab_t* p) {
    cg_u4 v;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
/* A: read by every block; the column groups of a block read the same chunk (L1 hits). */
static __device__ __forceinline__ cg_u4 cg_ld_cached(const cg_ab_t* p) {
    cg_u4 v;
    asm("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
@SHIFT_DOWN@/* A chunk's CG_EPC elements at p where rows may start anywhere in a 16-byte chunk (an odd K,
   a view of odd pitch): the aligned chunk holding p and, unless p is aligned, the next,
   which holds the window's last element (whole chunks only: every element is the row's),
   shifted down into place. Through the L1 (unlike B's aligned stream): a lane's second
   chunk is its neighbour's first. */
static __device__ __forceinline__ cg_u4 cg_ld_win(const cg_ab_t* p) {
    const unsigned off = (unsigned)(unsigned long long)p & 15u;
    const cg_ab_t* c = p - off / sizeof(cg_ab_t);
    const cg_u4 lo = cg_ld_cached(c);
    return cg_shift_down(lo, off ? cg_ld_cached(c + CG_EPC) : lo, off);
}
/* Diagnosis variant compute_only's stand-in for a load: words that depend on the chunk. */
static __device__ __forceinline__ cg_u4 cg_fake(int c, unsigned salt) {
    const unsigned h = (unsigned)c * 0x9E3779B9u + salt;
    return cg_u4{h & 0x3bff3bffu, (h >> 3) & 0x3bff3bffu, (h >> 5) & 0x3bff3bffu, (h >> 7) & 0x3bff3bffu};
}
/* A chunk's 16 bytes at p (chunk index c). */
@LOADS@
@CHUNK_FN@
/* Sixteen warps per SM (two blocks of 8, four of 4): 128 registers a thread. Without a
   minimum, ptxas picked 80 for the 32-row tiles and spilled. */
extern "C" __global__ void __launch_bounds__(CG_THREADS, 16 / WARPS) @SYM@(int M, int N, int K, @PARAMS@) {
    extern __shared__ float cg_red[];
    @VIEW@
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, q = lane & 3;
    const int group = warp / KW, part = warp % KW;
    const int n0 = blockIdx.x * CG_NB + group * CG_WN;
    const cg_ab_t* __restrict__ ga = CG_XP;
    const cg_ab_t* __restrict__ gb = CG_WP;
    (void)ga; (void)gb;
    /* This lane's columns (g and g + 8 of each 16-column block) and rows (g of each 8-row
       block), at its CG_EPC elements of a chunk. Columns past CG_C and rows past CG_R read the
       last one instead (always in bounds: M, N >= 1 at launch); those sums are never
       stored. */
    const cg_ab_t* wp[NT][2];
    const cg_ab_t* xp[MT];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int n = min(n0 + nt * 16 + h * 8 + g, CG_C - 1);
            wp[nt][h] = gb + (long)n * CG_LDW + q * CG_EPC;
        }
#if CG_X_KMAJ
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) xp[mt] = ga + (long)min(mt * 8 + g, CG_R - 1) * CG_LDX + q * CG_EPC;
#else
    /* Stored across: this lane's k of word 0 in a chunk and its pair of rows in a block. */
    [[maybe_unused]] const int xk = CG_XK, xr = CG_XR;
    [[maybe_unused]] const cg_ab_t* xq = ga + (long)xk * CG_LDX;
    (void)xp;
#endif

    float acc[NT][MT][4];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int v = 0; v < 4; ++v) acc[nt][mt][v] = 0.0f;
#if CG_PROMOTE
    /* The sums of the accumulators of every super-step (family::promotes). */
    float cg_sum[NT][MT][4];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int v = 0; v < 4; ++v) cg_sum[nt][mt][v] = 0.0f;
    auto cg_promote = [&]() {
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int v = 0; v < 4; ++v) {
                    cg_sum[nt][mt][v] += acc[nt][mt][v];
                    acc[nt][mt][v] = 0.0f;
                }
    };
#endif

    /* Whole super-steps: part p of a group takes chunks p*CG_UNROLL .. p*CG_UNROLL+CG_UNROLL-1 of
       every KW*CG_UNROLL, so the group reads each column front to back. Not unrolled
       further: CG_UNROLL says how many loads are in flight, and ptxas unrolling it again
       spilled at 128 registers.
       With ROT each block starts its walk at its own CG_UNROLL-aligned chunk and wraps:
       blocks in step would all read the same chunk of A at once (every block's request
       for one line at one L2 slice). Decode::defines says which tiles rotate. */
    const int step = KW * CG_UNROLL;
    const int whole = K / CG_CK / step * step;
#if ROT
    const int rot = whole > 0 ? (int)(blockIdx.x % (unsigned)(whole / CG_UNROLL)) * CG_UNROLL : 0;
#else
    const int rot = 0;
#endif
#pragma unroll 1
    for (int v = part * CG_UNROLL; v < whole; v += step) {
        const int c = v + rot < whole ? v + rot : v + rot - whole;
        cg_u4 w[CG_UNROLL][NT][2], x[CG_UNROLL][MT];
#pragma unroll
        for (int u = 0; u < CG_UNROLL; ++u)
#pragma unroll
            for (int nt = 0; nt < NT; ++nt)
#pragma unroll
                for (int h = 0; h < 2; ++h) w[u][nt][h] = CG_LOAD_B(wp[nt][h] + (long)(c + u) * CG_CK, c + u);
#pragma unroll
        for (int u = 0; u < CG_UNROLL; ++u)
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#if CG_X_KMAJ
                x[u][mt] = CG_LOAD_A(xp[mt] + (long)(c + u) * CG_CK, c + u);
#else
                x[u][mt] = CG_LOAD_ACROSS(mt, c + u, CG_CK);
#endif
#pragma unroll
        for (int u = 0; u < CG_UNROLL; ++u) cg_chunk(acc, w[u], x[u]);
#if CG_PROMOTE
        cg_promote();
#endif
    }
    /* The rest, a chunk at a time over the parts: whole chunks, then the one that
       crosses K (element loads, zeros past K in A and B alike). */
    const int chunks = (K + CG_CK - 1) / CG_CK;
#pragma unroll 1
    for (int c = whole + part; c < chunks; c += KW) {
        const int valid = K - c * CG_CK - q * CG_EPC;
        cg_u4 w[NT][2], x[MT];
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const cg_ab_t* p = wp[nt][h] + (long)c * CG_CK;
                w[nt][h] = valid >= CG_EPC ? CG_LOAD_B(p, c) : cg_ld_part(p, valid);
            }
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
#if CG_X_KMAJ
            const cg_ab_t* p = xp[mt] + (long)c * CG_CK;
            x[mt] = valid >= CG_EPC ? CG_LOAD_A(p, c) : cg_ld_part(p, valid);
#else
            x[mt] = CG_LOAD_ACROSS(mt, c, K - c * CG_CK);
#endif
        }
        cg_chunk(acc, w, x);
    }
#if CG_PROMOTE
    /* The tail's few chunks (fewer than a super-step a part) are one run. */
    cg_promote();
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int v = 0; v < 4; ++v) acc[nt][mt][v] = cg_sum[nt][mt][v];
#endif

    /* The KW parts of a group: parts 1.. park their sums, part 0 adds them in part order
       (the same bits on every run). Lane-minor, so a store of the warp hits 32 banks. */
#define CG_EACH_ACC(STMT)                                                    \
    {                                                                        \
        int e = 0;                                                           \
        _Pragma("unroll") for (int nt = 0; nt < NT; ++nt)                    \
            _Pragma("unroll") for (int mt = 0; mt < MT; ++mt)                \
                _Pragma("unroll") for (int v = 0; v < 4; ++v, ++e) { STMT; } \
    }
    if (KW > 1) {
        if (part > 0) {
            float* r = cg_red + (group * (KW - 1) + part - 1) * CG_FR * 32 + lane;
            CG_EACH_ACC(r[32 * e] = acc[nt][mt][v]);
        }
        __syncthreads();
        if (part == 0) {
            for (int p = 1; p < KW; ++p) {
                const float* r = cg_red + (group * (KW - 1) + p - 1) * CG_FR * 32 + lane;
                CG_EACH_ACC(acc[nt][mt][v] += r[32 * e]);
            }
        }
    }
    if (part != 0) return;
    /* Element v of block (nt, mt): column n0 + 16nt + g (+8 for v >= 2), row 8mt + 2q
       (+1 for odd v). */
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int v = 0; v < 4; ++v) {
                const int i = mt * 8 + q * 2 + (v & 1);
                const int j = n0 + nt * 16 + g + (v >> 1) * 8;
                if (i < CG_R && j < CG_C) {
                    const float acc_v = acc[nt][mt][v];
                    {
                        const float acc = acc_v;
@COORDS@
                        @STORE@;
                    }
                }
            }
}
"#;
