//! The wgmma family's fused epilogue: the user's expression as one inlined function of
//! the accumulator and the parameter *values* (`cgw_epi`), the vector and column
//! parameters staged once per tile in shared memory, and the store paths.
//!
//! What the IR says about each parameter the epilogue reads decides how its values reach
//! `cgw_epi`, never the expression itself (any expression of the DSL is generated as it
//! is, by the prelude's `epilogue_expr`):
//! - `Row<T>` (one value per column) and `Col<T>` (one per row): at the start of every
//!   tile the consumer warpgroup copies the tile's `BN` (or its own `BM / CONSUMERS`)
//!   values with 4-byte `cp.async` into its parameter area (`CG_PAREA` = 1 KiB, zeros past
//!   N or M), where they land while the mainloop runs; the epilogue reads a column pair
//!   with one 4-byte (8-byte for f32) shared load. The area is the unused padding of the
//!   warpgroup's `CG_EPI_SMEM` staging buffers (16 of every 144 bytes of a staging row,
//!   `CGW_PA` maps an area offset there), so it costs no shared memory; parameters that do
//!   not fit (several f32 vectors with BN = 256), and every parameter of a config without
//!   the staged epilogue, read global memory element by element instead.
//! - `Matrix` (a residual): row-major ones by pairs (one 4- or 8-byte load per two
//!   adjacent elements) where its leading dimension is even and the base aligned, else element loads.
//! - scalars: the kernel argument itself.
//!
//! `CG_FAST_MATH` (default 1) replaces the prelude's `gelu`, `sigmoid` and `silu`, whose
//! libdevice `tanhf` and IEEE division cost 2 MUFU operations and about 20 other
//! instructions a value (and `tanhf` branches on |x|, so its cost depends on the data):
//! - `gelu` for 16-bit outputs (`CG_GELU_TANH` = 1): `0.5 x (1 + tanh.approx.f32(u))`, one
//!   MUFU operation; the H200 run 5 found 0 elements off the tests' per-element tolerance
//!   over 180 checks (f16, bf16 and f32 outputs, K up to 1024; bench/wgmma-probe.md);
//! - `gelu` for f32 outputs (`CG_GELU_TANH` = 0): `x / (1 + exp(-2u))`, the tanh form
//!   rewritten exactly (`0.5 (1 + tanh(u)) = sigmoid(2u)`, no cancellation of `1 +
//!   tanh(u)` for negative x) with one `ex2.approx` and one `rcp.approx`: a few f32 ulps;
//! - `sigmoid`, `silu`: `expf` and `rcp.approx` instead of the IEEE division.

use crate::codegen::prelude::{epilogue_expr, store_out};
use crate::codegen::Variant;
use crate::ir::{DType, GemmIr, Layout, ParamKind};
use std::fmt::Write;

use super::emit::fill;

/// The fast activations and the helpers the prefetch uses; defined after the prelude's
/// helpers, so their `#define`s redirect every later use. `CG_GELU_TANH` defaults to 1
/// for 16-bit outputs (measured within the tests' tolerances, bench/wgmma-probe.md run
/// 5) and to 0 for f32 outputs, whose tolerance is 2^13 times tighter.
pub(super) fn fast_math(ir: &GemmIr) -> String {
    FAST_MATH.replace("@GELU_TANH@", if ir.out_dtype == DType::F32 { "0" } else { "1" })
}

const FAST_MATH: &str = r#"
#ifndef CG_FAST_MATH
#define CG_FAST_MATH 1
#endif
#ifndef CG_GELU_TANH
#define CG_GELU_TANH @GELU_TANH@
#endif
#if CG_FAST_MATH
static __device__ __forceinline__ float cgw_ex2(float x) { float y; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }
static __device__ __forceinline__ float cgw_rcp(float x) { float y; asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }
static __device__ __forceinline__ float cgw_sigmoid(float x) { return cgw_rcp(1.0f + expf(-x)); }
static __device__ __forceinline__ float cgw_silu(float x) { return x * cgw_rcp(1.0f + expf(-x)); }
/* GELU, tanh form: 0.5 x (1 + tanh(u)) = x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3);
   exp(-2u) = 2^(-x (2.3022082 + 0.10294324 x^2)). */
static __device__ __forceinline__ float cgw_gelu(float x) {
#if CG_GELU_TANH
    float t;
    const float u = 0.7978845608f * x * (1.0f + 0.044715f * x * x);
    asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(u));
    const float h = 0.5f * x;
    return h * t + h;
#else
    return x * cgw_rcp(1.0f + cgw_ex2(x * (-2.302208198f - 0.1029432409f * x * x)));
#endif
}
#define cg_gelu cgw_gelu
#define cg_sigmoid cgw_sigmoid
#define cg_silu cgw_silu
#endif
static __device__ __forceinline__ void cgw_cp4(unsigned dst, const void* src, unsigned bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" :: "r"(dst), "l"(src), "r"(bytes) : "memory");
}
static __device__ __forceinline__ void cgw_sts32(unsigned dst, unsigned v) {
    asm volatile("st.shared.u32 [%0], %1;\n" :: "r"(dst), "r"(v) : "memory");
}
/* The named barrier of consumer warpgroup c's 128 threads (ids 1 to 3; 0 is
   __syncthreads; ping-pong's turns use CONSUMERS + 1 on: 3 and 4, or 4 to 6). */
static __device__ __forceinline__ void cgw_wg_sync(int c) {
    asm volatile("bar.sync %0, 128;\n" :: "r"(1 + c) : "memory");
}
"#;

/// Parameters the epilogue reads, in signature order, with their kinds.
fn used(ir: &GemmIr) -> Vec<(u32, ParamKind)> {
    ir.epilogue_params()
        .into_iter()
        .map(|p| (p, ir.params[p as usize].kind))
        .collect()
}

/// `cgw_epi(float acc, float v<p>..)`: the epilogue expression over the values of the
/// parameters it reads; plus the parameter area's layout: `CGW_OFF_<p>` (byte offset),
/// `CGW_PF_<p>` (1 when the vector fits `CG_PAREA` and is prefetched) per `Row`/`Col`
/// parameter, and `CGW_PF_ANY`.
pub(super) fn epi_fn(ir: &GemmIr) -> String {
    let mut s = String::new();
    let args: String = used(ir).iter().map(|(p, _)| format!(", float v{p}")).collect();
    let _ = writeln!(
        s,
        "static __device__ __forceinline__ float cgw_epi(float acc{args}) {{\n    return {};\n}}",
        epilogue_expr(ir)
    );
    let mut end = "0".to_string();
    let mut any = Vec::new();
    for (p, kind) in used(ir) {
        let len = match kind {
            ParamKind::Row { dtype } => format!("BN * {}", dtype.size()),
            ParamKind::Col { dtype } => format!("CG_WG_M * {}", dtype.size()),
            _ => continue,
        };
        let _ = writeln!(s, "#define CGW_OFF_{p} ({end})");
        let _ = writeln!(s, "#define CGW_PF_{p} (CGW_OFF_{p} + {len} <= CG_PAREA)");
        end = format!("CGW_OFF_{p} + (CGW_PF_{p} ? {len} : 0)");
        any.push(format!("CGW_PF_{p}"));
    }
    let any = if any.is_empty() {
        "0".to_string()
    } else {
        any.join(" || ")
    };
    let _ = writeln!(s, "#define CGW_PF_ANY ({any})");
    s
}

fn raw_to_f32(dtype: DType, v: &str) -> String {
    match dtype {
        DType::F16 => format!("cg_f16_to_f32((unsigned short)({v}))"),
        DType::Bf16 => format!("cg_bf16_to_f32((unsigned short)({v}))"),
        DType::F32 => format!("__uint_as_float({v})"),
    }
}

/// The consumer's prefetch at the start of every tile (`@PREFETCH@`): a barrier of the
/// warpgroup (every warp is done reading the last tile's values), then `cp.async` of each
/// prefetched vector into the area (element loads and shared stores where a 16-bit
/// vector's base is not 4-byte aligned), one commit group.
pub(super) fn prefetch(ir: &GemmIr, variant: Variant) -> String {
    if variant.skips_epilogue() {
        return String::new();
    }
    let mut s = String::from("#if CGW_PF_ANY\n            cgw_wg_sync(c);\n");
    for (p, kind) in used(ir) {
        let (dtype, base, ext, count) = match kind {
            ParamKind::Row { dtype } => (dtype, "n0", "N", "BN"),
            ParamKind::Col { dtype } => (dtype, "m0 + CG_WG_ROW0", "M", "CG_WG_M"),
            _ => continue,
        };
        let _ = writeln!(s, "#if CGW_PF_{p}");
        if dtype == DType::F32 {
            let _ = writeln!(
                s,
                "            for (int u = tid; u < {count}; u += 128) {{
                const int e = {base} + u;
                cgw_cp4(pbuf_s + CGW_PA(CGW_OFF_{p} + 4 * u), e < {ext} ? (const void*)(p{p} + e) : (const void*)p{p}, e < {ext} ? 4u : 0u);
            }}"
            );
        } else {
            let _ = writeln!(
                s,
                "            {{
                const bool al = ((unsigned long long)p{p} & 3) == 0;
                for (int u = tid; u < {count} / 2; u += 128) {{
                    const int e = {base} + 2 * u, left = {ext} - e;
                    const unsigned dst = pbuf_s + CGW_PA(CGW_OFF_{p} + 4 * u);
                    if (al && left != 1) {{
                        /* A whole pair, or none (zero-filled) past the end. */
                        cgw_cp4(dst, left >= 2 ? (const void*)(p{p} + e) : (const void*)p{p}, left >= 2 ? 4u : 0u);
                    }} else {{
                        /* The last element of an odd extent (a 4-byte copy would read past
                           the vector) or an unaligned base: element loads. */
                        const unsigned lo = left >= 1 ? p{p}[e] : 0u, hi = left >= 2 ? p{p}[e + 1] : 0u;
                        cgw_sts32(dst, lo | (hi << 16));
                    }}
                }}
            }}"
            );
        }
        let _ = writeln!(s, "#endif");
    }
    s.push_str("            asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");\n#endif\n");
    s
}

/// Declarations before the slab loop (`@SETUP@`): the wait for this tile's prefetch and
/// the alignment flags of pair-loaded matrices.
fn setup(ir: &GemmIr) -> String {
    let mut s = String::from(
        "#if CGW_PF_ANY
            asm volatile(\"cp.async.wait_group 0;\\n\" ::: \"memory\");
            cgw_wg_sync(c);
#endif
",
    );
    for (p, kind) in used(ir) {
        if let ParamKind::Matrix {
            dtype,
            layout: Layout::RowMajor,
        } = kind
        {
            let _ = writeln!(
                s,
                "            const bool mat_ok{p} = (ld{p} & 1) == 0 && ((unsigned long long)p{p} & {}) == 0;",
                2 * dtype.size() - 1
            );
        }
    }
    s
}

/// Per-slab values of the column parameters (`@SLAB@`): `cv<p>[h]` for rows
/// `wrow + lane / 4 + 8 h`.
fn slab(ir: &GemmIr) -> String {
    let mut s = String::new();
    for (p, kind) in used(ir) {
        let ParamKind::Col { dtype } = kind else { continue };
        let n = dtype.name();
        let smem = match dtype {
            DType::F32 => "*(const unsigned*)(pbuf + CGW_PA(CGW_OFF_{p} + 4 * il))".replace("{p}", &p.to_string()),
            _ => "*(const unsigned short*)(pbuf + CGW_PA(CGW_OFF_{p} + 2 * il))".replace("{p}", &p.to_string()),
        };
        let _ = writeln!(
            s,
            "                float cv{p}[2];
#pragma unroll
                for (int h = 0; h < 2; ++h) {{
#if CGW_PF_{p}
                    const int il = mi * 64 + warp * 16 + (lane >> 2) + 8 * h;
                    cv{p}[h] = {};
#else
                    const int i = wrow + (lane >> 2) + 8 * h;
                    cv{p}[h] = i < M ? cg_ld_{n}(p{p}, i) : 0.0f;
#endif
                }}",
            raw_to_f32(dtype, &smem)
        );
    }
    s
}

/// Per-chunk values of the prefetched row parameters (`@CHUNK@`): `rb<p>[g]` holds
/// columns `q * CG_CW + 8 g + 2 (lane & 3)` and the next, read once for both row halves
/// (and every slab) of the chunk, with one 4-byte (f32: 8-byte) shared load a pair.
fn chunk(ir: &GemmIr) -> String {
    let mut s = String::new();
    for (p, kind) in used(ir) {
        let ParamKind::Row { dtype } = kind else { continue };
        let (load, x, y) = match dtype {
            DType::F32 => (
                format!("const cg_f2 w = *(const cg_f2*)(pbuf + CGW_PA(CGW_OFF_{p} + 4 * jl));"),
                "w.x".to_string(),
                "w.y".to_string(),
            ),
            _ => (
                format!("const unsigned w = *(const unsigned*)(pbuf + CGW_PA(CGW_OFF_{p} + 2 * jl));"),
                raw_to_f32(dtype, "w"),
                raw_to_f32(dtype, "w >> 16"),
            ),
        };
        let _ = writeln!(
            s,
            "#if CGW_PF_{p}
                    float rb{p}[CG_CW / 8][2];
#pragma unroll
                    for (int g = 0; g < CG_CW / 8; ++g) {{
                        const int jl = q * CG_CW + 8 * g + 2 * (lane & 3);
                        if (q * CG_CW + 8 * g < BN) {{
                            {load}
                            rb{p}[g][0] = {x};
                            rb{p}[g][1] = {y};
                        }} else {{
                            rb{p}[g][0] = rb{p}[g][1] = 0.0f;
                        }}
                    }}
#endif"
        );
    }
    s
}

/// The two values `v0`, `v1` of output elements (i, j) and (i, j + 1) (`@PAIR@`;
/// `checked`: inside the edge path, where `two` says whether (i, j + 1) exists).
fn pair(ir: &GemmIr, variant: Variant, checked: bool) -> String {
    let second = |e: String| if checked { format!("two ? {e} : 0.0f") } else { e };
    if variant == Variant::NoEpilogue {
        return format!(
            "const float v0 = acc[mi][r];\n                            const float v1 = {};",
            second("acc[mi][r + 1]".into())
        );
    }
    let ind = "                            ";
    let mut s = String::new();
    let (mut a0, mut a1) = (String::new(), String::new());
    for (p, kind) in used(ir) {
        match kind {
            ParamKind::Scalar => {
                let _ = write!(a0, ", p{p}");
                let _ = write!(a1, ", p{p}");
                continue;
            }
            ParamKind::Col { .. } => {
                let _ = write!(a0, ", cv{p}[(r >> 1) & 1]");
                let _ = write!(a1, ", cv{p}[(r >> 1) & 1]");
                continue;
            }
            ParamKind::Row { dtype } => {
                let n = dtype.name();
                let _ = write!(
                    s,
                    "#if CGW_PF_{p}\n{ind}const float a{p}_0 = rb{p}[(r - r_lo) >> 2][0], a{p}_1 = rb{p}[(r - r_lo) >> 2][1];\n#else\n{ind}const float a{p}_0 = cg_ld_{n}(p{p}, j), a{p}_1 = {};\n#endif\n{ind}",
                    second(format!("cg_ld_{n}(p{p}, j + 1)"))
                );
            }
            ParamKind::Matrix { dtype, layout } => {
                let n = dtype.name();
                let (i0, i1) = match layout {
                    Layout::RowMajor => (format!("(long)i * ld{p} + j"), format!("(long)i * ld{p} + j + 1")),
                    Layout::ColMajor => (format!("(long)j * ld{p} + i"), format!("(long)(j + 1) * ld{p} + i")),
                };
                if layout == Layout::RowMajor && !checked {
                    let (load, x, y) = match dtype {
                        DType::F32 => (
                            format!("const cg_f2 w{p} = *(const cg_f2*)(p{p} + {i0});"),
                            format!("w{p}.x"),
                            format!("w{p}.y"),
                        ),
                        _ => (
                            format!("const unsigned w{p} = *(const unsigned*)(p{p} + {i0});"),
                            raw_to_f32(dtype, &format!("w{p}")),
                            raw_to_f32(dtype, &format!("w{p} >> 16")),
                        ),
                    };
                    let _ = write!(
                        s,
                        "float a{p}_0, a{p}_1;\n{ind}if (mat_ok{p}) {{ {load} a{p}_0 = {x}; a{p}_1 = {y}; }}\n{ind}else {{ a{p}_0 = cg_ld_{n}(p{p}, {i0}); a{p}_1 = cg_ld_{n}(p{p}, {i1}); }}\n{ind}"
                    );
                } else {
                    let _ = write!(
                        s,
                        "const float a{p}_0 = cg_ld_{n}(p{p}, {i0}), a{p}_1 = {};\n{ind}",
                        second(format!("cg_ld_{n}(p{p}, {i1})"))
                    );
                }
            }
        }
        let _ = write!(a0, ", a{p}_0");
        let _ = write!(a1, ", a{p}_1");
    }
    let _ = write!(
        s,
        "const float v0 = cgw_epi(acc[mi][r]{a0});\n{ind}const float v1 = {};",
        second(format!("cgw_epi(acc[mi][r + 1]{a1})"))
    );
    s
}

/// The consumer's epilogue for one tile (`@EPILOGUE@`): every accumulator through
/// `cgw_epi` (raw for [`Variant::NoEpilogue`]) into the output.
///
/// The work is cut into chunks of 16 rows (one warp's) by `CG_CW` columns. A chunk
/// wholly inside the output takes the fast path: no bounds checks and, with
/// `CG_EPI_SMEM` (row-major outputs whose rows are 16-byte multiples and a 16-byte
/// aligned `out`), a trip through the warp's own staging buffer in shared memory so that
/// the global stores are 16 bytes wide and each row's 128 bytes go out together; without
/// it, two adjacent elements per store. Chunks on the M or N edge store element by
/// element with checks.
pub(super) fn epilogue(ir: &GemmIr, variant: Variant) -> String {
    if variant == Variant::NoStore {
        return NO_STORE.replace(
            "@STORE@",
            &crate::codegen::prelude::never_store(&store_out(ir, "m0", "n0 + tid", "cg_s")),
        );
    }
    let row_major = ir.out_layout == Layout::RowMajor;
    let fast_store = if row_major {
        "cg_st2(out + (long)i * ldo + j, v0, v1);".to_string()
    } else {
        format!(
            "{}; {};",
            store_out(ir, "i", "j", "v0"),
            store_out(ir, "i", "j + 1", "v1")
        )
    };
    let checked_store = if row_major {
        format!(
            "if (two && pair_ok) cg_st2(out + (long)i * ldo + j, v0, v1);
                                else {{ {}; if (two) {}; }}",
            store_out(ir, "i", "j", "v0"),
            store_out(ir, "i", "j + 1", "v1")
        )
    } else {
        format!(
            "{}; if (two) {};",
            store_out(ir, "i", "j", "v0"),
            store_out(ir, "i", "j + 1", "v1")
        )
    };
    let staged = if row_major {
        EPI_STAGED.to_string()
    } else {
        String::new()
    };
    let (setup, slab, chunk) = if variant == Variant::NoEpilogue {
        (String::new(), String::new(), String::new())
    } else {
        (setup(ir), slab(ir), chunk(ir))
    };
    let s = fill(
        EPI_TEMPLATE,
        &[
            ("TMA", EPI_TMA.to_string()),
            ("STAGED", staged),
            ("SETUP", setup),
            ("SLAB", slab),
            ("CHUNK", chunk),
            ("FAST_STORE", fast_store),
            ("CHECKED_STORE", checked_store),
            ("ROW_MAJOR", (row_major as u32).to_string()),
        ],
    );
    fill(
        &s,
        &[
            ("PAIR", pair(ir, variant, false)),
            ("PAIR_CHECKED", pair(ir, variant, true)),
        ],
    )
}

/// [`Variant::NoStore`]'s epilogue: the accumulators summed into one value that a store
/// that never runs writes, so no wgmma result is dead.
const NO_STORE: &str = r#"            /* Diagnosis variant no_store: nothing is written. */
            {
                float cg_s = 0.0f;
#pragma unroll
                for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                    for (int r = 0; r < BN / 2; ++r) cg_s += acc[mi][r];
                @STORE@
            }
"#;

/// Register r of slab mi of a consumer thread holds row
/// `16 * warp + lane / 4 + 8 * ((r >> 1) & 1)` and column
/// `8 * (r >> 2) + 2 * (lane & 3) + (r & 1)` of the slab: pairs (r, r + 1) are adjacent
/// columns, and columns `[q * CG_CW, (q + 1) * CG_CW)` are registers
/// `[q * CG_CW / 2, (q + 1) * CG_CW / 2)`.
const EPI_TEMPLATE: &str = r#"#if CG_EPI_TMA
@TMA@#else
            const bool pair_ok = (ldo & 1) == 0 && ((unsigned long long)out & (2 * CG_OSZ - 1)) == 0;
#if CG_EPI_SMEM && @ROW_MAJOR@
            const bool vec_ok = (ldo * CG_OSZ) % 16 == 0 && ((unsigned long long)out & 15) == 0;
#else
            const bool vec_ok = @ROW_MAJOR@ ? pair_ok : true;
#endif
@SETUP@#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi) {
                const int wrow = m0 + CG_WG_ROW0 + mi * 64 + warp * 16;
@SLAB@#pragma unroll
                for (int q = 0; q < (BN + CG_CW - 1) / CG_CW; ++q) {
                    const int r_lo = q * CG_CW / 2;
                    const int r_hi = ((q + 1) * CG_CW < BN ? (q + 1) * CG_CW : BN) / 2;
@CHUNK@                    if (vec_ok && (q + 1) * CG_CW <= BN && wrow + 16 <= M && n0 + (q + 1) * CG_CW <= N) {
@STAGED@#if !(CG_EPI_SMEM && @ROW_MAJOR@)
#pragma unroll
                        for (int p = 0; p < CG_CW / 4; ++p) {
                            const int r = r_lo + 2 * p;
                            if (r >= r_hi) break;
                            const int i = wrow + (lane >> 2) + 8 * ((r >> 1) & 1);
                            const int j = n0 + 8 * (r >> 2) + 2 * (lane & 3);
                            @PAIR@
                            @FAST_STORE@
                        }
#endif
                    } else {
#pragma unroll
                        for (int p = 0; p < CG_CW / 4; ++p) {
                            const int r = r_lo + 2 * p;
                            if (r >= r_hi) break;
                            const int i = wrow + (lane >> 2) + 8 * ((r >> 1) & 1);
                            const int j = n0 + 8 * (r >> 2) + 2 * (lane & 3);
                            if (i < M && j < N) {
                                const bool two = j + 1 < N;
                                @PAIR_CHECKED@
                                @CHECKED_STORE@
                            }
                        }
                    }
                }
            }
#endif
"#;

/// The TMA-store epilogue of [`EPI_TEMPLATE`] (`CG_EPI_TMA`): the consumer's rows of the
/// tile through `cgw_epi` into its staged tile, as TMA's 128-byte swizzle lays out boxes
/// of `CG_CW` columns by `CG_WG_M` rows (16-byte unit u of row rr at rr * 128 + ((u ^ (rr
/// & 7)) << 4): a warp's pair stores hit 32 different banks), then one thread stores the
/// boxes, which TMA clips at M and N. Before the staged tile is written again, the thread
/// that stored the last one waits until its stores have read it.
const EPI_TMA: &str = r#"            {
            const bool inside = m0 + CG_WG_ROW0 + CG_WG_M <= M && n0 + BN <= N;
            if (tid == 0) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
            cgw_wg_sync(c);
@SETUP@#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi) {
                const int wrow = m0 + CG_WG_ROW0 + mi * 64 + warp * 16;
                (void)wrow;
@SLAB@#pragma unroll
                for (int q = 0; q < BN / CG_CW; ++q) {
                    const int r_lo = q * CG_CW / 2;
@CHUNK@#pragma unroll
                    for (int p = 0; p < CG_CW / 4; ++p) {
                        const int r = r_lo + 2 * p;
                        const int rr = mi * 64 + warp * 16 + (lane >> 2) + 8 * ((r >> 1) & 1);
                        const int i = m0 + CG_WG_ROW0 + rr;
                        const int j = n0 + 8 * (r >> 2) + 2 * (lane & 3);
                        const unsigned byte = (8 * ((r - r_lo) >> 2) + 2 * (lane & 3)) * CG_OSZ;
                        const unsigned dst = cg_tstg + q * (CG_WG_M * 128) + rr * 128 + ((((byte >> 4) ^ (unsigned)(rr & 7))) << 4) + (byte & 15);
                        if (inside) {
                            @PAIR@
                            cg_sts2(dst, v0, v1);
                        } else if (i < M && j < N) {
                            const bool two = j + 1 < N;
                            @PAIR_CHECKED@
                            cg_sts2(dst, v0, v1);
                        }
                    }
                }
            }
            /* The generic proxy's writes, seen by TMA's (the async proxy) before it reads. */
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            cgw_wg_sync(c);
            if (tid == 0) {
#pragma unroll
                for (int q = 0; q < BN / CG_CW; ++q)
                    if (n0 + q * CG_CW < N) CG_TMA_C(cg_tstg + q * (CG_WG_M * 128), n0 + q * CG_CW, m0 + CG_WG_ROW0);
                asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
            }
            }
"#;

/// The staged fast path of [`EPI_TEMPLATE`] (row-major outputs): the warp writes its 16 x
/// CG_CW chunk (128 bytes a row) to its buffer, rows CG_STG_PITCH = 144 bytes apart (no
/// bank conflicts for either access), then copies it out 16 bytes a lane, 8 lanes a row.
/// 16-bit outputs write the chunk with `stmatrix` (`CG_STSM`, on by default but for three
/// consumers with BN over 128, `store_fns`): one instruction a 16 x 16 block, four 8 x 8
/// matrices whose rows the accumulator's pairs already are (thread `lane` holds row
/// `lane / 4`, columns `2 (lane % 4)` and the next), in place of four 4-byte stores; with
/// `CG_STSM` 0, the 4-byte stores.
const EPI_STAGED: &str = r#"#if CG_EPI_SMEM
#if CG_STSM
                        /* Block pp of 16 columns: matrices (its first 8 columns, rows 0-7), (the
                           same, rows 8-15), (its last 8 columns, rows 0-7), (rows 8-15), whose
                           row addresses lanes 0-7, 8-15, 16-23 and 24-31 give. */
#pragma unroll
                        for (int pp = 0; pp < CG_CW / 16; ++pp) {
                            unsigned w[4];
#pragma unroll
                            for (int e = 0; e < 4; ++e) {
                                const int r = r_lo + 8 * pp + 2 * e;
                                const int i = wrow + (lane >> 2) + 8 * ((r >> 1) & 1);
                                const int j = n0 + 8 * (r >> 2) + 2 * (lane & 3);
                                @PAIR@
                                w[e] = cg_pack2(v0, v1);
                            }
                            const int mx = lane >> 3;
                            const unsigned a = cg_smem_u32(stg) + ((lane & 7) + 8 * (mx & 1)) * CG_STG_PITCH + (16 * pp + 8 * (mx >> 1)) * CG_OSZ;
                            asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
                                         :: "r"(a), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]) : "memory");
                        }
#else
#pragma unroll
                        for (int p = 0; p < CG_CW / 4; ++p) {
                            const int r = r_lo + 2 * p;
                            if (r >= r_hi) break;
                            const int i = wrow + (lane >> 2) + 8 * ((r >> 1) & 1);
                            const int j = n0 + 8 * (r >> 2) + 2 * (lane & 3);
                            @PAIR@
                            cg_st2(reinterpret_cast<cg_out_t*>(stg + ((lane >> 2) + 8 * ((r >> 1) & 1)) * CG_STG_PITCH +
                                                               (8 * ((r - r_lo) >> 2) + 2 * (lane & 3)) * CG_OSZ),
                                   v0, v1);
                        }
#endif
                        __syncwarp();
#pragma unroll
                        for (int t = 0; t < 4; ++t) {
                            const int row = t * 4 + (lane >> 3), c16 = lane & 7;
                            const cg_u4 v = *reinterpret_cast<const cg_u4*>(stg + row * CG_STG_PITCH + c16 * 16);
                            *reinterpret_cast<cg_u4*>(out + (long)(wrow + row) * ldo + n0 + q * CG_CW + c16 * (16 / CG_OSZ)) = v;
                        }
                        __syncwarp();
#endif
"#;
