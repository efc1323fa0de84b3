//! The `gemv` family's CUDA source (header-free, NVRTC).
//!
//! One block computes `CG_NB = (WARPS / KSPLIT) * COLS` output columns for every row
//! (`M <= MR`). Warp `w` takes column group `w / KSPLIT` and the `w % KSPLIT`-th share of
//! K; its lanes stride K in 16-byte chunks (B's columns are K-contiguous), each chunk of
//! A's rows loaded once and reused for the `COLS` columns. Lanes then sum by shuffles,
//! the `KSPLIT` warps of a group through shared memory in a fixed order (the same bits
//! on every run), and one thread per output applies the fused epilogue and stores. An X
//! stored across is read by [`across_fns`]'s loads, at `MR` = 8 in [`WALK_IL`]'s walk.

use crate::codegen::cuda::{ab_type, fill, preamble};
use crate::codegen::prelude::{kernel_params, variant_store, view_prologue};
use crate::codegen::Variant;
use crate::family::turned;
use crate::ir::{DType, GemmIr};
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
    // X(i, k): K-contiguous rows (CG_X_ROWS) are read in 16-byte chunks, whole ones
    // when CG_VEC_OK, else windows over them; otherwise X is MR x K stored the other way
    // (M-contiguous A, N-contiguous B) and read by `cg_x_across` ([`across_fns`]).
    let math_vec = match variant {
        // Braced: the walks put it after a `for` without braces of their own.
        Variant::LoadOnly => "{ acc[0][c] += b[e]; acc[i][0] += a[i][e]; }",
        _ => "acc[i][c] = fmaf(a[i][e], b[e], acc[i][c]);",
    };
    // Each walk's loads (`[X's rows, a column's raw type, its load, its unpacking]`):
    // whole 16-byte chunks, and windows over them where rows may start anywhere in one.
    // `@LEFT@` is how many of the row's elements lie from k on (at least CG_VEC but in a
    // lane's chunk that crosses K), `@MASK_A@`/`@MASK_B@` zero what lies past K there.
    let (vec, win): ([&str; 4], [&str; 4]) = match variant {
        // The values depend on the loop index, so the multiply-adds cannot be folded.
        Variant::ComputeOnly => {
            let fake = [
                "for (int e = 0; e < CG_VEC; ++e) a[d][e] = (float)(k + e + i) * 1e-9f;",
                "cg_u4",
                "cg_u4{0u, 0u, 0u, 0u}",
                "for (int e = 0; e < CG_VEC; ++e) b[e] = (float)(k + e - n) * 1e-9f;",
            ];
            (fake, fake)
        }
        _ => (
            [
                "CG_LOAD_X_VEC(i, k, a[d]);@MASK_A@",
                "cg_u4",
                "cg_ld16(gw + (long)n * CG_LDW + k)",
                "cg_unpack(braw[c], b);@MASK_B@",
            ],
            [
                "CG_LOAD_X_WIN(d, i, k, @LEFT@, a[d]);@MASK_A@",
                "cg_win",
                "cg_row_win(wrow[c], k, @LEFT@)",
                "cg_win_unpack(braw[c], b);@MASK_B@",
            ],
        ),
    };
    // A step of the walk, whole chunks (the loop) or the chunk that crosses K (its tail).
    let step = |[load_a, raw_t, load_b_raw, load_b]: [&str; 4], tail: bool| {
        let (left, mask_a, mask_b) = if tail {
            ("K - k", " cg_mask_k(a[d], k, K);", " cg_mask_k(b, k, K);")
        } else {
            ("CG_VEC", "", "")
        };
        fill(
            STEP,
            &[
                ("LOAD_X", x_block(load_a, variant == Variant::ComputeOnly, true)),
                ("RAW_T", raw_t.to_string()),
                ("LOAD_B_RAW", load_b_raw.to_string()),
                ("LOAD_B", load_b.to_string()),
                ("LEFT", left.to_string()),
                ("FULL", (!tail as u32).to_string()),
                ("MASK_A", mask_a.to_string()),
                ("MASK_B", mask_b.to_string()),
            ],
        )
    };
    // X stored across beside W's words; the compute-only variant keeps the walks above,
    // whose values it makes up.
    let il = il_walk("const cg_ab_t*", true);
    let walk = |loads: [&str; 4], unroll: u32, pre: &str| {
        fill(
            WALK,
            &[
                ("PRE", pre.to_string()),
                ("UNROLL", unroll.to_string()),
                ("STEP", step(loads, false)),
                ("TAIL", step(loads, true)),
            ],
        )
    };
    s.push_str(&fill(
        KERNEL,
        &[
            ("AB_T", ab_t.to_string()),
            ("P", (4 / ir.ab_dtype.size()).to_string()),
            ("HELPERS", chunk_helpers(ir)),
            ("ACROSS", across_fns(ir, Backend::Cuda)),
            ("ROLES", roles(ir, Backend::Cuda)),
            ("SYM", ir.symbol()),
            ("PARAMS", kernel_params(ir, Backend::Cuda)),
            ("VIEW", view_prologue(ir, Backend::Cuda)),
            (
                "IL_IF",
                if variant == Variant::ComputeOnly { "0" } else { "CG_IL" }.to_string(),
            ),
            (
                "WALK_IL",
                if variant == Variant::ComputeOnly {
                    String::new()
                } else {
                    il
                },
            ),
            ("WALK_VEC", walk(vec, 2, "")),
            (
                "WALK_WIN",
                walk(win, 1, if variant == Variant::ComputeOnly { "" } else { WIN_ROWS }),
            ),
            ("MATH_VEC", math_vec.to_string()),
            ("COORDS", turned::STORE_COORDS.to_string()),
            ("STORE", variant_store(ir, variant, "ci", "cj", "acc")),
        ],
    ));
    s
}

/// The streaming helpers of the gemv families' CUDA sources (after `cg_ab_t` and
/// `CG_VEC`): `cg_elem` (one element as a float), `cg_ld16` (a 16-byte chunk through the
/// read-only path), `cg_unpack` (a chunk's `CG_VEC` elements as floats) and the window
/// over the chunks of a row at any element alignment (`cg_win_load`, `cg_win_unpack`;
/// for a walk along one row, `cg_row_at` once and `cg_row_win` each step).
pub(in crate::family) fn chunk_helpers(ir: &GemmIr) -> String {
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
    SHIFT_DOWN.to_string()
        + &fill(
            CHUNK_HELPERS,
            &[("UNPACK", unpack.to_string()), ("CVT", cvt.to_string())],
        )
}

const CHUNK_HELPERS: &str = r#"static __device__ __forceinline__ float cg_elem(cg_ab_t x) { return @CVT@; }
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
/* CG_VEC consecutive elements of a row from p, where p may lie at any element of a
   16-byte chunk (a pitch, view offset or batch stride that is not a multiple of CG_VEC):
   the aligned chunk holding p and, where the window reaches one of the row's elements
   into it (`left`: the row's elements from p on), the next one; `off` bytes of p into
   the first. No byte outside the chunks holding elements of the row is read. */
struct cg_win {
    cg_u4 lo, hi;
    unsigned off;
};
/* Where a row's windows come from: the aligned chunk at or below its start p and the
   bytes p lies into it. A walk whose k steps by whole chunks reads every window of the
   row from it (cg_row_win), without taking p apart again each step. */
struct cg_row {
    const cg_ab_t* c;
    unsigned off;
};
static __device__ __forceinline__ cg_row cg_row_at(const cg_ab_t* p) {
    const unsigned off = (unsigned)(unsigned long long)p & 15u;
    return cg_row{p - off / (unsigned)sizeof(cg_ab_t), off};
}
/* The window of the row's elements from k (a multiple of CG_VEC), `left` of them from k on. */
static __device__ __forceinline__ cg_win cg_row_win(const cg_row& r, int k, int left) {
    cg_win w;
    w.off = r.off;
    w.lo = cg_ld16(r.c + k);
    const int valid = left < CG_VEC ? left : CG_VEC;
    w.hi = r.off + valid * (unsigned)sizeof(cg_ab_t) > 16u ? cg_ld16(r.c + k + CG_VEC) : cg_u4{0u, 0u, 0u, 0u};
    return w;
}
static __device__ __forceinline__ cg_win cg_win_load(const cg_ab_t* p, int left) {
    return cg_row_win(cg_row_at(p), 0, left);
}
/* A window's elements as floats. */
static __device__ __forceinline__ void cg_win_unpack(const cg_win& w, float* f) {
    cg_unpack(cg_shift_down(w.lo, w.hi, w.off), f);
}
"#;

/// `cg_shift_down(lo, hi, off)`: bytes `off .. off + 15` (`off` < 16) of the 32 bytes of
/// two adjacent 16-byte chunks, the window a row at any alignment takes from them; shared
/// by the gemv families' windows and decode's (after `cg_u4`).
pub(in crate::family) const SHIFT_DOWN: &str = r#"/* By whole words through selects (no indexing, which would put the words in local
   memory), then by the rest through funnel shifts. */
static __device__ __forceinline__ cg_u4 cg_shift_down(const cg_u4& lo, const cg_u4& hi, unsigned off) {
    unsigned x0 = lo.x, x1 = lo.y, x2 = lo.z, x3 = lo.w, x4 = hi.x, x5 = hi.y, x6 = hi.z, x7 = hi.w;
    if (off & 8u) { x0 = x2; x1 = x3; x2 = x4; x3 = x5; x4 = x6; x5 = x7; }
    if (off & 4u) { x0 = x1; x1 = x2; x2 = x3; x3 = x4; x4 = x5; }
    const unsigned sh = (off & 3u) * 8u;
    return cg_u4{__funnelshift_r(x0, x1, sh), __funnelshift_r(x1, x2, sh), __funnelshift_r(x2, x3, sh), __funnelshift_r(x3, x4, sh)};
}
"#;

/// The operands' roles in either form (`SWAP` 0 or 1), as preprocessor definitions the
/// kernel reads: `gx`/`CG_LDX` the MR-row side X (A, or B turned around), `gw`/`CG_LDW`
/// the streamed side W (B's columns, or A's rows), `CG_R`/`CG_C` their extents, whether
/// X's rows are K-contiguous (`CG_X_ROWS`), when the 16-byte path may run (`CG_VEC_OK`),
/// and the loads of X. A form the kernel's layouts do not allow is an `#error` (the plan
/// never gives it). Shared with the OpenCL source (`backend`).
pub(super) fn roles(ir: &GemmIr, backend: Backend) -> String {
    let form = |swap: bool| -> String {
        let x_rows = turned::small_side_k_contiguous(ir, swap);
        let (x, w) = if swap { ('B', 'A') } else { ('A', 'B') };
        if let Some(error) = turned::form_error(ir, swap, "gemv") {
            return error;
        }
        // X stored across is read by `cg_x_across` ([`across_fns`]), in the vectors its
        // element alignment allows; the walks' 16-byte path then waits on W alone.
        let loads = if x_rows {
            let (vec, win) = x_window_loads(ir, backend);
            format!(
                "#define CG_IL 0\n#define CG_VEC_OK ({x}_VEC && {w}_VEC)\n#define CG_LOAD_X_VEC(i, k, dst) {vec}\n#define CG_LOAD_X_WIN(d, i, k, left, dst) {win}\n"
            )
        } else {
            format!("#define CG_VEC_OK {w}_VEC\n#define CG_X_ALIGN {x}_ALIGN\n#define CG_IL (MR >= 8 && {w}_ALIGN % CG_P == 0)\n")
        };
        format!(
            "{}#define CG_X_ROWS {}\n{loads}",
            turned::role_defines(ir, swap),
            x_rows as u32
        )
    };
    turned::forms("MR", &form(true), &form(false))
}

/// The loads of a K-contiguous X in the gemv kernel (both dialects): `CG_VEC` elements of
/// row `i` from `k` into `dst` where X's rows start on 16-byte boundaries (a whole chunk)
/// and where they may not (a window over the chunks of row `d`'s `cg_row`, `left` of the
/// row's elements from `k` on); the walk masks what lies past K.
fn x_window_loads(ir: &GemmIr, backend: Backend) -> (String, String) {
    let (_, chunk) = x_loads(ir, backend, true);
    // The window helpers have the same names and arguments in both dialects; `xrow[d]`
    // is row `i`'s, taken apart before the walk.
    let win = "cg_win_unpack(cg_row_win(xrow[d], (k), left), dst)";
    (chunk, win.to_string())
}

/// X's loads as the gemv families' sources spell them (after `gx` and `CG_LDX`; X stored
/// K-contiguous when `x_rows`, else M-contiguous): element `(i, k)` as a float, and the
/// `CG_VEC` elements of row `i` from `k` into `dst`, one 16-byte chunk where X is
/// K-contiguous (whole: the caller masks what lies past K), else element by element
/// (zeros from K on).
pub(in crate::family) fn x_loads(ir: &GemmIr, backend: Backend, x_rows: bool) -> (String, String) {
    let at = if x_rows {
        "(long)(i) * CG_LDX + (k)"
    } else {
        "(long)(k) * CG_LDX + (i)"
    };
    let elem = match backend {
        Backend::Opencl => format!("cg_ld_{}(gx, {at})", ir.ab_dtype.name()),
        _ => format!("cg_elem(gx[{at}])"),
    };
    let chunk = match (x_rows, backend) {
        (true, Backend::Opencl) => "cg_chunk(gx, (long)(i) * CG_LDX + (k), dst)".to_string(),
        (true, _) => "cg_unpack(cg_ld16(gx + (long)(i) * CG_LDX + (k)), dst)".to_string(),
        // Rows past X's K are past its stored matrix: none is read.
        (false, _) => format!(
            "for (int e = 0; e < CG_VEC; ++e) dst[e] = (k) + e < K ? {} : 0.0f",
            elem.replace("(k)", "((k) + e)")
        ),
    };
    (elem, chunk)
}

/// A warp's walk along K, one chunk a lane a step: whole steps, then a lane's chunk that
/// crosses K (its elements from K on masked), so that the loop tests nothing per step.
/// The bound is `k < K - (CG_VEC - 1)`: with `k + CG_VEC <= K` NVRTC recomputed the
/// loads' addresses every step (204 instructions a double step at MR = 1, COLS = 4,
/// against 178 with pointer increments).
const WALK: &str = r#"@PRE@        int k = (part * 32 + lane) * CG_VEC;
#pragma unroll @UNROLL@
        for (; k < K - (CG_VEC - 1); k += KSPLIT * 32 * CG_VEC) {
@STEP@
        }
        if (k < K) {
@TAIL@
        }"#;

/// A step's loads of X into `a[MR][CG_VEC]` (both dialects; `pragmas`: CUDA's unroll
/// pragmas): row by row through `load_a` where X's rows are K-contiguous, else
/// [`across_fns`]'s `cg_x_across`; `fake` (the compute-only variant): `load_a` row by row
/// in either form.
pub(super) fn x_block(load_a: &str, fake: bool, pragmas: bool) -> String {
    let rows = format!(
        "{}            for (int d = 0; d < MR; ++d) {{\n                const int i = d < CG_R ? d : CG_R - 1;\n                {load_a}\n            }}",
        if pragmas { "#pragma unroll\n" } else { "" }
    );
    if fake {
        return rows;
    }
    format!("#if CG_X_ROWS\n{rows}\n#else\n            cg_x_across(gx, CG_LDX, k, CG_P, @FULL@, K, CG_R, a);\n#endif")
}

/// The loads of an X stored across (M-contiguous A, N-contiguous B turned around; after
/// the roles and the chunk helpers), both dialects:
/// - `cg_x_across(gx, ldx, k, s, full, K, R, a)` fills `a[d][e]` with X(d, k_e) for the
///   `MR` rows and the `CG_VEC` k's of a lane's step, `k_e = k + (e / CG_P) * s + e % CG_P`
///   (`s = CG_P`: the k's from k on; `s = 32 * CG_P`: every 32nd word's, [`WALK_IL`]), as
///   zeros from K on unless `full`. Each k's rows are read as vectors of `CG_X_AV`
///   elements. Where X's rows start on a multiple of `CG_X_AV` elements (pitch, start and
///   batch stride: `CG_X_ALIGN`) a vector that holds an element of a row lies inside that
///   row's pitch, so vectors past its `R` elements read the last one that holds any again
///   (their sums are never stored).
/// - `cg_ld4` (a 4-byte word through the read-only path) and `cg_word_unpack` (a word's
///   `CG_P` elements as floats), for W's words in the interleaved walk.
///
/// Element by element (`CG_X_AV` = 1, each k of a lane's chunk), a lane made `MR × CG_VEC`
/// loads a step, each of a different line across the warp: 4096x8x4096 with a row-major W
/// took 0.54 ms in f32 on an H100, 10× cuBLAS (bench/results/h100-2026-12-06am1); as
/// vectors 142 µs (`-06am2`).
pub(super) fn across_fns(ir: &GemmIr, backend: Backend) -> String {
    let esz = ir.ab_dtype.size();
    let cuda = backend != Backend::Opencl;
    // A 4-byte word's elements (little-endian: the first in the low half). OpenCL's halves
    // through `vload_half2` of the word itself, as `cg_unpack4` reads its chunks: PoCL
    // read a `uint` array through a `half*` element by element as zeros past its first word.
    let unpack = match (ir.ab_dtype, cuda) {
        (DType::F32, true) => "f[0] = __uint_as_float(w);",
        (DType::F32, false) => "f[0] = as_float(w);",
        (DType::F16, true) => {
            "f[0] = cg_f16_to_f32((unsigned short)(w & 0xffffu)); f[1] = cg_f16_to_f32((unsigned short)(w >> 16));"
        }
        (DType::F16, false) => "vstore2(vload_half2(0, (const __private half*)&w), 0, f);",
        (DType::Bf16, true) => "f[0] = __uint_as_float(w << 16); f[1] = __uint_as_float(w & 0xffff0000u);",
        (DType::Bf16, false) => "f[0] = as_float(w << 16); f[1] = as_float(w & 0xffff0000u);",
    };
    let (inl, ptr, words, word, elem, unroll) = if cuda {
        (
            "static __device__ __forceinline__",
            "const cg_ab_t*".to_string(),
            CUDA_WORDS.to_string(),
            CUDA_WORD.to_string(),
            "cg_elem(p[0])".to_string(),
            "#pragma unroll\n",
        )
    } else {
        let (g, st) = (backend.global(), backend.storage(ir.ab_dtype));
        (
            "static inline",
            format!("const {g}{st}*"),
            OPENCL_WORDS.replace("@G@", g),
            format!("    return *(const {g}uint*)p;"),
            format!("cg_ld_{}(p, 0)", ir.ab_dtype.name()),
            "",
        )
    };
    fill(
        ACROSS,
        &[
            ("VMAX", (16 / esz).to_string()),
            ("ESZ", esz.to_string()),
            ("INL", inl.to_string()),
            ("PTR", ptr),
            ("WORDS", words),
            ("WORD", word),
            ("UNPACK", unpack.to_string()),
            ("ELEM", elem),
            ("UNROLL", unroll.to_string()),
        ],
    )
}

/// The helpers of [`across_fns`]; `@WORDS@` loads the vector at `p` into the words
/// `w[CG_X_AB / 4]`, `@WORD@` returns the word at `p`.
const ACROSS: &str = r#"#if !CG_X_ROWS
#if MR >= 8 && @VMAX@ >= 8 && CG_X_ALIGN % 8 == 0
#define CG_X_AV 8
#elif MR >= 4 && @VMAX@ >= 4 && CG_X_ALIGN % 4 == 0
#define CG_X_AV 4
#elif MR >= 2 && CG_X_ALIGN % 2 == 0
#define CG_X_AV 2
#else
#define CG_X_AV 1
#endif
#define CG_X_AB (CG_X_AV * @ESZ@)
/* Where element e of a lane's step lies from its first k: word e / CG_P of the step's
   words s elements apart, element e % CG_P in it. */
#define CG_KE(e, s) (((e) / CG_P) * (s) + (e) % CG_P)
/* The word at p (4-byte aligned). */
@INL@ unsigned cg_ld4(@PTR@ p) {
@WORD@
}
/* The CG_P elements of a word, as floats. */
@INL@ void cg_word_unpack(unsigned w, float* f) {
    @UNPACK@
}
/* The CG_X_AV elements of the vector at p (aligned to its size), as floats. */
@INL@ void cg_x_vec(@PTR@ p, float* f) {
#if CG_X_AB >= 4
@WORDS@
@UNROLL@    for (int q = 0; q < CG_X_AB / 4; ++q) cg_word_unpack(w[q], f + q * CG_P);
#else
    f[0] = @ELEM@;
#endif
}
@INL@ void cg_x_across(@PTR@ gx, long ldx, int k, int s, int full, int K, int R, float a[MR][CG_VEC]) {
    const int last = (R - 1) / CG_X_AV * CG_X_AV;
@UNROLL@    for (int e = 0; e < CG_VEC; ++e) {
        const int ke = CG_KE(e, s), kk = k + ke;
        /* From k's row, not kk's: with kk's ptxas spilled 4 bytes of the 1-row walk
           (f32, 4 warps, 4 columns, K in 4). */
        @PTR@ row = gx + (long)k * ldx + (long)ke * ldx;
@UNROLL@        for (int g = 0; g < MR; g += CG_X_AV) {
            float v[CG_X_AV];
            if (full || kk < K) {
                cg_x_vec(row + (g < last ? g : last), v);
            } else {
@UNROLL@                for (int j = 0; j < CG_X_AV; ++j) v[j] = 0.0f;
            }
@UNROLL@            for (int j = 0; j < CG_X_AV; ++j) a[g + j][e] = v[j];
        }
    }
}
#endif
"#;

/// [`ACROSS`]'s vector load in CUDA: through the read-only path, as the chunks.
const CUDA_WORDS: &str = r#"#if CG_X_AB == 16
    const cg_u4 v = cg_ld16(p);
    const unsigned w[4] = {v.x, v.y, v.z, v.w};
#elif CG_X_AB == 8
    unsigned w[2];
    asm("ld.global.nc.v2.u32 {%0, %1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "l"(p));
#else
    const unsigned w[1] = {cg_ld4(p)};
#endif"#;

/// [`ACROSS`]'s word load in CUDA.
const CUDA_WORD: &str = r#"    unsigned w;
    asm("ld.global.nc.u32 %0, [%1];" : "=r"(w) : "l"(p));
    return w;"#;

/// [`ACROSS`]'s vector load in OpenCL C (`@G@` the global qualifier): a whole aligned
/// vector, as `cg_chunk` reads its chunks (`vloadN` promises element alignment only).
const OPENCL_WORDS: &str = r#"#if CG_X_AB == 16
    const uint4 v = *(const @G@uint4*)p;
    const uint w[4] = {v.x, v.y, v.z, v.w};
#elif CG_X_AB == 8
    const uint2 v = *(const @G@uint2*)p;
    const uint w[2] = {v.x, v.y};
#else
    const uint w[1] = {cg_ld4(p)};
#endif"#;

/// The walk of a gemv step where X is stored across and W's rows start on 4-byte
/// boundaries (`CG_IL`): the `32 × CG_VEC` k's of a warp's step as `CG_E` rows of 32
/// words, lane `lane` taking word `lane` of each, so that W's loads are whole 128-byte
/// lines and X's rows at a load's k's are consecutive across the warp (8 lines for 32
/// rows of 32 bytes), where a lane's `CG_VEC` consecutive k's put each lane of a load on
/// a line of its own. Whole steps (`kb + 32 × CG_VEC <= K`), then the step that crosses
/// K, its words from K on not read and its elements from K on zeros.
const WALK_IL: &str = r#"        int kb = part * (32 * CG_VEC);
#pragma unroll 2
        for (; kb <= K - 32 * CG_VEC; kb += KSPLIT * 32 * CG_VEC) {
@STEP_FULL@
        }
        if (kb < K) {
@STEP_TAIL@
        }"#;

/// [`WALK_IL`] in either dialect (`ptr`: W's pointer type; `pragmas`: keep CUDA's unroll
/// pragmas), `@MATH_VEC@` left for the caller.
pub(super) fn il_walk(ptr: &str, pragmas: bool) -> String {
    let step = |full: bool| {
        fill(
            STEP_IL,
            &[("FULL", (full as u32).to_string()), ("WPTR", ptr.to_string())],
        )
    };
    let walk = fill(WALK_IL, &[("STEP_FULL", step(true)), ("STEP_TAIL", step(false))]);
    if pragmas {
        walk
    } else {
        walk.lines()
            .filter(|l| !l.starts_with("#pragma unroll"))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// One step of [`WALK_IL`] (`@FULL@`: 1 for a whole step, 0 for the one crossing K).
const STEP_IL: &str = r#"            const int kl = kb + lane * CG_P;
            float a[MR][CG_VEC];
            cg_x_across(gx, CG_LDX, kl, 32 * CG_P, @FULL@, K, CG_R, a);
            unsigned braw[COLS][CG_E];
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
                const int n = n0 + c < CG_C ? n0 + c : CG_C - 1;
                @WPTR@ wr = gw + (long)n * CG_LDW + kl;
#pragma unroll
                for (int q = 0; q < CG_E; ++q)
                    braw[c][q] = @FULL@ || kl + q * 32 * CG_P < K ? cg_ld4(wr + q * 32 * CG_P) : 0u;
            }
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
                float b[CG_VEC];
#pragma unroll
                for (int q = 0; q < CG_E; ++q) cg_word_unpack(braw[c][q], b + q * CG_P);
                if (!@FULL@) {
#pragma unroll
                    for (int e = 0; e < CG_VEC; ++e)
                        if (kl + CG_KE(e, 32 * CG_P) >= K) b[e] = 0.0f;
                }
#pragma unroll
                for (int i = 0; i < MR; ++i)
#pragma unroll
                    for (int e = 0; e < CG_VEC; ++e) @MATH_VEC@
            }"#;

/// The window walk's rows, taken apart once (`cg_row_at`): W's `COLS` columns and, where
/// X's rows are K-contiguous, its `MR` rows (past CG_C and CG_R the last, as the loads).
const WIN_ROWS: &str = r#"        cg_row wrow[COLS];
#pragma unroll
        for (int c = 0; c < COLS; ++c) wrow[c] = cg_row_at(gw + (long)(n0 + c < CG_C ? n0 + c : CG_C - 1) * CG_LDW);
#if CG_X_ROWS
        cg_row xrow[MR];
#pragma unroll
        for (int d = 0; d < MR; ++d) xrow[d] = cg_row_at(gx + (long)(d < CG_R ? d : CG_R - 1) * CG_LDX);
#endif
"#;

/// One step of [`WALK`] (`@LOAD_X@`: X's rows into `a`, [`x_block`]; `@RAW_T@` a column's
/// chunk as loaded, `@LOAD_B_RAW@` its load, `@LOAD_B@` its unpacking into `b`).
const STEP: &str = r#"            float a[MR][CG_VEC];
@LOAD_X@
            @RAW_T@ braw[COLS];
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
                const int n = n0 + c < CG_C ? n0 + c : CG_C - 1;
                (void)n;
                braw[c] = @LOAD_B_RAW@;
            }
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
                const int n = n0 + c < CG_C ? n0 + c : CG_C - 1;
                (void)n;
                float b[CG_VEC];
                @LOAD_B@
#pragma unroll
                for (int i = 0; i < MR; ++i)
#pragma unroll
                    for (int e = 0; e < CG_VEC; ++e) @MATH_VEC@
            }"#;

const KERNEL: &str = r#"
#define CG_THREADS (WARPS * 32)
#define CG_GROUPS (WARPS / KSPLIT)
#define CG_NB (CG_GROUPS * COLS)
typedef @AB_T@ cg_ab_t;
#define CG_VEC (16 / (int)sizeof(cg_ab_t))
#define CG_P @P@
#define CG_E (CG_VEC / CG_P)
static_assert(MR >= 1 && MR <= 8, "MR: 1 to 8 rows");
static_assert(WARPS % KSPLIT == 0, "KSPLIT must divide WARPS");
static_assert(CG_NB * MR <= CG_THREADS, "one thread per output of the block");
@ROLES@
@HELPERS@
@ACROSS@/* The elements k + e >= K of a row's CG_VEC from k read as zeros (in X and W alike: what
   lies past K, the rest of a padded row or the next row, may be anything, NaN too). The
   walk calls it on the chunk that crosses K only, so the test of k is always true; but
   without it ptxas, bounded by the threads alone, spilled the whole-chunk walk of
   MR = 1, 4 warps, COLS = 4, KSPLIT = 2 on sm_80 (CI's NVRTC check). */
static __device__ __forceinline__ void cg_mask_k(float* f, int k, int K) {
    if (k + CG_VEC > K) {
#pragma unroll
        for (int e = 0; e < CG_VEC; ++e)
            if (k + e >= K) f[e] = 0.0f;
    }
}
/* X has CG_R <= MR rows, W CG_C columns (its K-contiguous rows); C(i, j) = X(i) . W(j),
   stored at (i, j) of the output, or at (j, i) turned around. */
/* The window walk holds two chunks a row in flight: with the threads alone as its bound,
   ptxas capped it at 80 registers and spilled (MR = 8 turned around, f32); unbounded it
   takes up to ~160 and no spill. The whole-chunk walk keeps ptxas's own choice, but at
   MR = 8 (f32: 72 registers and a spill once the walk had its own tail step), where it
   may take 128. */
#if !CG_VEC_OK
#define CG_BOUNDS __launch_bounds__(CG_THREADS, 1)
#elif MR >= 8
#define CG_BOUNDS __launch_bounds__(CG_THREADS, 512 / CG_THREADS)
#else
#define CG_BOUNDS __launch_bounds__(CG_THREADS)
#endif
extern "C" __global__ void CG_BOUNDS @SYM@(int M, int N, int K, @PARAMS@) {
    __shared__ float cg_red[WARPS][MR][COLS];
    @VIEW@
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int group = warp / KSPLIT, part = warp % KSPLIT;
    const int n0 = blockIdx.x * CG_NB + group * COLS;
    const cg_ab_t* __restrict__ gx = CG_XP;
    const cg_ab_t* __restrict__ gw = CG_WP;
    (void)gx; (void)gw;
    float acc[MR][COLS];
#pragma unroll
    for (int i = 0; i < MR; ++i)
#pragma unroll
        for (int c = 0; c < COLS; ++c) acc[i][c] = 0.0f;

    /* Rows past CG_R and columns past CG_C read the last one instead (always in bounds,
       M, N >= 1 at launch): no predicate keeps the loads apart, and those sums are never
       stored. Every column's chunk is in flight before the first multiply. */
#if @IL_IF@
    {
        /* X stored across, W's rows on 4-byte boundaries: a step's k's interleaved over
           the lanes by words. */
@WALK_IL@
    }
#else
    if (CG_VEC_OK) {
        /* Every row of X and W starts on a 16-byte boundary: whole chunks (the one that
           crosses K masked). */
@WALK_VEC@
    } else {
        /* Rows at any element alignment: each lane's CG_VEC elements of a row from the
           one or two aligned chunks that hold them (`cg_win`). Not unrolled: twice the
           chunks a step already, and unrolled ptxas took 102 registers for MR = 1,
           COLS = 4 (63 not) and spilled at MR = 4, COLS = 2, KSPLIT = 2. */
@WALK_WIN@
    }
#endif

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
        if (i < CG_R && j < CG_C) {
            float acc = 0.0f;
#pragma unroll
            for (int p = 0; p < KSPLIT; ++p) acc += cg_red[g * KSPLIT + p][i][c];
@COORDS@
            @STORE@;
        }
    }
}
"#;
