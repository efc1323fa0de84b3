//! C text shared by the CUDA and OpenCL generators: element loads and stores, the
//! epilogue functions, and the epilogue itself as one inlined C function.

use crate::ir::{DType, EpOp, Func, GemmIr, Layout, ParamKind};
use crate::target::Backend;
use std::fmt::Write;

/// The spelling differences between CUDA C (NVRTC, header-free) and OpenCL C 1.2.
impl Backend {
    /// Address-space qualifier of kernel pointer parameters.
    pub(crate) const fn global(self) -> &'static str {
        match self {
            Backend::Opencl => "__global ",
            Backend::Cuda | Backend::Host => "",
        }
    }
    /// C storage type of an element.
    pub(crate) const fn storage(self, d: DType) -> &'static str {
        match (self, d) {
            (_, DType::F32) => "float",
            (Backend::Opencl, _) => "ushort",
            (Backend::Cuda | Backend::Host, _) => "unsigned short",
        }
    }
    /// Qualifier of device helper functions.
    pub(crate) const fn inline(self) -> &'static str {
        match self {
            Backend::Opencl => "static inline",
            Backend::Cuda | Backend::Host => "static __device__ __forceinline__",
        }
    }
}

/// Conversions between storage types and float (`cg_ld_<dtype>`, `cg_st_<dtype>`, and
/// `cg_f16_to_f32`/`cg_bf16_to_f32` on raw 16-bit values), plus the epilogue function
/// library (`cg_relu`, ...). No headers: NVRTC and OpenCL both compile it bare.
pub fn helpers(d: Backend) -> String {
    let mut s = String::new();
    let inl = d.inline();
    let g = d.global();
    match d {
        Backend::Cuda | Backend::Host => {
            let _ = write!(
                s,
                r#"{inl} float cg_f16_to_f32(unsigned short h) {{ float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }}
{inl} unsigned short cg_f32_to_f16(float f) {{ unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }}
{inl} float cg_bf16_to_f32(unsigned short h) {{ return __uint_as_float(((unsigned int)h) << 16); }}
{inl} unsigned short cg_f32_to_bf16(float f) {{ unsigned short h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }}
#define CG_EXP expf
#define CG_TANH tanhf
#define CG_ERF erff
#define CG_FMAX fmaxf
#define CG_FMIN fminf
#define CG_FABS fabsf
"#
            );
        }
        Backend::Opencl => {
            let _ = write!(
                s,
                r#"{inl} float cg_bf16_to_f32(ushort h) {{ return as_float(((uint)h) << 16); }}
{inl} ushort cg_f32_to_bf16(float f) {{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even */
    return (ushort)(u >> 16);
}}
#define CG_EXP exp
#define CG_TANH tanh
#define CG_ERF erf
#define CG_FMAX fmax
#define CG_FMIN fmin
#define CG_FABS fabs
"#
            );
        }
    }
    // Loads and stores by element index.
    for dt in [DType::F32, DType::F16, DType::Bf16] {
        let st = d.storage(dt);
        let (ld, stv) = match (d, dt) {
            (_, DType::F32) => ("p[i]".to_string(), "p[i] = v;".to_string()),
            (Backend::Cuda | Backend::Host, DType::F16) => {
                ("cg_f16_to_f32(p[i])".into(), "p[i] = cg_f32_to_f16(v);".into())
            }
            // `half*` is a legal pointer type without cl_khr_fp16; only arithmetic on it is not.
            (Backend::Opencl, DType::F16) => (
                "vload_half(i, (const __global half*)p)".into(),
                "vstore_half_rte(v, i, (__global half*)p);".into(),
            ),
            (_, DType::Bf16) => ("cg_bf16_to_f32(p[i])".into(), "p[i] = cg_f32_to_bf16(v);".into()),
        };
        let n = dt.name();
        let _ = writeln!(s, "{inl} float cg_ld_{n}(const {g}{st}* p, long i) {{ return {ld}; }}");
        let _ = writeln!(s, "{inl} void cg_st_{n}({g}{st}* p, long i, float v) {{ {stv} }}");
    }
    let _ = write!(
        s,
        r#"{inl} float cg_relu(float x) {{ return CG_FMAX(x, 0.0f); }}
{inl} float cg_gelu(float x) {{ return 0.5f * x * (1.0f + CG_TANH(0.7978845608f * (x + 0.044715f * x * x * x))); }}
{inl} float cg_gelu_erf(float x) {{ return 0.5f * x * (1.0f + CG_ERF(x * 0.7071067812f)); }}
{inl} float cg_sigmoid(float x) {{ return 1.0f / (1.0f + CG_EXP(-x)); }}
{inl} float cg_silu(float x) {{ return x / (1.0f + CG_EXP(-x)); }}
{inl} float cg_tanh(float x) {{ return CG_TANH(x); }}
{inl} float cg_exp(float x) {{ return CG_EXP(x); }}
{inl} float cg_abs(float x) {{ return CG_FABS(x); }}
{inl} float cg_min(float a, float b) {{ return CG_FMIN(a, b); }}
{inl} float cg_max(float a, float b) {{ return CG_FMAX(a, b); }}
{inl} float cg_clamp(float x, float lo, float hi) {{ return CG_FMIN(CG_FMAX(x, lo), hi); }}
{inl} float cg_leaky_relu(float x, float s) {{ return x > 0.0f ? x : s * x; }}
"#
    );
    s
}

/// The kernel's parameter list after `int M, int N, int K, `: the output pointer, then
/// every signature parameter `p<i>`, then the views' geometry: `int ldo, long offo` for
/// the output, `int ld<i>, long off<i>` for each matrix parameter and `long off<i>` for
/// each `Row`/`Col`, then the batch strides: `long bso`, and `long bs<i>` for each buffer
/// parameter (0: the same operand for every product of the batch), then `int nbatch`,
/// the products (the grid's `z` for tiled kernels; a persistent kernel walks them). A leading dimension is
/// the elements between consecutive rows (row-major) or columns (column-major) as stored;
/// an offset is the view's first element in its buffer. All are runtime arguments, so one
/// binary serves every stride of an alignment class ([`view_prologue`] applies them).
pub fn kernel_params(ir: &GemmIr, d: Backend) -> String {
    let g = d.global();
    let mut s = format!("{g}{}* __restrict__ out", d.storage(ir.out_dtype));
    for (i, p) in ir.params.iter().enumerate() {
        let ty = match p.kind {
            ParamKind::Matrix { dtype, .. } | ParamKind::Row { dtype } | ParamKind::Col { dtype } => {
                format!("const {g}{}* __restrict__ p{i}", d.storage(dtype))
            }
            ParamKind::Scalar => format!("float p{i}"),
        };
        let _ = write!(s, ", {ty}");
    }
    s.push_str(", int ldo, long offo");
    for (i, p) in ir.params.iter().enumerate() {
        match p.kind {
            ParamKind::Matrix { .. } => {
                let _ = write!(s, ", int ld{i}, long off{i}");
            }
            ParamKind::Row { .. } | ParamKind::Col { .. } => {
                let _ = write!(s, ", long off{i}");
            }
            ParamKind::Scalar => {}
        }
    }
    s.push_str(", long bso");
    for i in buffers(ir) {
        let _ = write!(s, ", long bs{i}");
    }
    s.push_str(", int nbatch");
    if d == Backend::Opencl {
        s = s.replace("__restrict__", "restrict");
    }
    s
}

/// The signature indices of the buffer (non-scalar) parameters.
fn buffers(ir: &GemmIr) -> impl Iterator<Item = usize> + '_ {
    ir.params
        .iter()
        .enumerate()
        .filter(|(_, p)| !matches!(p.kind, ParamKind::Scalar))
        .map(|(i, _)| i)
}

/// A persistent kernel's view prologue and per-item rebase (`[prologue, rebase]`): the
/// prologue moves the pointers to the views' first elements and keeps them as the
/// product-0 bases (`cg_*0`) with `long cg_bz = 0`; the rebase, run at each work item
/// once `cg_bz` holds the item's product, points every buffer at that product.
pub fn persistent_view_prologue(ir: &GemmIr, d: Backend) -> [String; 2] {
    let g = d.global();
    let mut pro = format!("out += offo; {g}{}* const cg_out0 = out;", d.storage(ir.out_dtype));
    let mut rebase = String::from("out = cg_out0 + cg_bz * bso;");
    for i in buffers(ir) {
        let st = match ir.params[i].kind {
            ParamKind::Matrix { dtype, .. } | ParamKind::Row { dtype } | ParamKind::Col { dtype } => d.storage(dtype),
            ParamKind::Scalar => unreachable!("buffers only"),
        };
        let _ = write!(pro, " p{i} += off{i}; const {g}{st}* const cg_p{i}0 = p{i};");
        let _ = write!(rebase, " p{i} = cg_p{i}0 + cg_bz * bs{i};");
    }
    pro.push_str(" long cg_bz = 0; (void)nbatch;");
    [pro, rebase]
}

/// The first statements of every kernel body: each buffer pointer moved to its view's
/// first element in the product of the batch this block computes (the grid's `z`), so
/// the body indexes from 0 with the leading dimensions.
pub fn view_prologue(ir: &GemmIr, d: Backend) -> String {
    let z = match d {
        Backend::Opencl => "get_group_id(2)",
        Backend::Cuda | Backend::Host => "blockIdx.z",
    };
    let mut s = format!("const long cg_bz = (long){z}; out += offo + cg_bz * bso;");
    for i in buffers(ir) {
        let _ = write!(s, " p{i} += off{i} + cg_bz * bs{i};");
    }
    s
}

/// The arguments that forward the epilogue's parameters from the kernel into
/// `cg_epilogue` (after `acc, i, j, M, N`): each pointer, and a matrix's leading dimension
/// after it.
pub fn epilogue_args(ir: &GemmIr) -> String {
    ir.epilogue_params()
        .iter()
        .map(|&p| match ir.params[p as usize].kind {
            ParamKind::Matrix { .. } => format!(", p{p}, ld{p}"),
            _ => format!(", p{p}"),
        })
        .collect()
}

/// `cg_epilogue(float acc, int i, int j, int M, int N, ...)`: the user's epilogue as one C
/// function evaluated in f32, with the value of each parameter at output element (i, j).
pub fn epilogue_fn(ir: &GemmIr, d: Backend) -> String {
    let g = d.global();
    let used = ir.epilogue_params();
    let mut params = String::new();
    for &p in &used {
        let ty = match ir.params[p as usize].kind {
            ParamKind::Matrix { dtype, .. } => format!("const {g}{}* p{p}, int ld{p}", d.storage(dtype)),
            ParamKind::Row { dtype } | ParamKind::Col { dtype } => format!("const {g}{}* p{p}", d.storage(dtype)),
            ParamKind::Scalar => format!("float p{p}"),
        };
        let _ = write!(params, ", {ty}");
    }
    let mut body = String::new();
    for &p in &used {
        let kind = ir.params[p as usize].kind;
        let val = match kind {
            ParamKind::Matrix { dtype, layout } => {
                let idx = match layout {
                    Layout::RowMajor => format!("(long)i * ld{p} + j"),
                    Layout::ColMajor => format!("(long)j * ld{p} + i"),
                };
                format!("cg_ld_{}(p{p}, {idx})", dtype.name())
            }
            ParamKind::Row { dtype } => format!("cg_ld_{}(p{p}, j)", dtype.name()),
            ParamKind::Col { dtype } => format!("cg_ld_{}(p{p}, i)", dtype.name()),
            ParamKind::Scalar => format!("p{p}"),
        };
        let _ = writeln!(body, "    const float v{p} = {val};");
    }
    let _ = writeln!(body, "    return {};", epilogue_expr(ir));
    format!(
        "{} float cg_epilogue(float acc, int i, int j, int M, int N{params}) {{\n    (void)i; (void)j; (void)M; (void)N;\n{body}}}\n",
        d.inline()
    )
}

/// The postfix epilogue as one C expression over `acc`, `v<p>` and literals.
pub fn epilogue_expr(ir: &GemmIr) -> String {
    let mut st: Vec<String> = Vec::new();
    for op in &ir.epilogue {
        let e = match *op {
            EpOp::Acc => "acc".to_string(),
            EpOp::Param(p) => format!("v{p}"),
            EpOp::Lit(v) => c_float(v),
            EpOp::Neg => format!("(-{})", st.pop().expect("checked IR")),
            EpOp::Add | EpOp::Sub | EpOp::Mul | EpOp::Div => {
                let b = st.pop().expect("checked IR");
                let a = st.pop().expect("checked IR");
                let o = match op {
                    EpOp::Add => '+',
                    EpOp::Sub => '-',
                    EpOp::Mul => '*',
                    _ => '/',
                };
                format!("({a} {o} {b})")
            }
            EpOp::Call(f) => {
                let args = st.split_off(st.len() - f.arity());
                format!("cg_{}({})", func_c_name(f), args.join(", "))
            }
        };
        st.push(e);
    }
    st.pop().unwrap_or_else(|| "acc".into())
}

fn func_c_name(f: Func) -> &'static str {
    f.name()
}

/// A float literal that C parses back to the same f32.
fn c_float(v: f32) -> String {
    if v.is_nan() {
        "(0.0f/0.0f)".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "(1.0f/0.0f)".into()
        } else {
            "(-1.0f/0.0f)".into()
        }
    } else {
        format!("{v:?}f")
    }
}

/// `cg_st_<dtype>(out, index, v)` for output element (i, j), `ldo` apart.
pub fn store_out(ir: &GemmIr, i: &str, j: &str, v: &str) -> String {
    let idx = match ir.out_layout {
        Layout::RowMajor => format!("(long)({i}) * ldo + ({j})"),
        Layout::ColMajor => format!("(long)({j}) * ldo + ({i})"),
    };
    format!("cg_st_{}(out, {idx}, {v})", ir.out_dtype.name())
}

/// [`Variant::NoStore`](super::Variant::NoStore)'s stand-in for the store statement
/// `store`: the same store under a condition that never holds and that the compiler
/// cannot decide, so what it stores is still computed; CUDA and OpenCL C alike. `K < 0`
/// rather than `M < 0`: stores sit inside `i < M` guards, from which a compiler that
/// knows `i >= 0` could prove `M > 0` and delete the store with everything feeding it.
pub(crate) fn never_store(store: &str) -> String {
    format!("if (K < 0) {{ {store}; }}")
}

/// The output store of diagnosis variant `variant` for accumulator `acc` at output
/// (`i`, `j`), as every family but wgmma writes it: through the fused epilogue
/// (`cg_epilogue`), raw for [`Variant::NoEpilogue`](super::Variant::NoEpilogue), raw and
/// never run ([`never_store`]) for [`Variant::NoStore`](super::Variant::NoStore).
pub(crate) fn variant_store(ir: &GemmIr, variant: super::Variant, i: &str, j: &str, acc: &str) -> String {
    use super::Variant;
    match variant {
        Variant::NoEpilogue => store_out(ir, i, j, acc),
        Variant::NoStore => never_store(&store_out(ir, i, j, acc)),
        _ => store_out(
            ir,
            i,
            j,
            &format!("cg_epilogue({acc}, {i}, {j}, M, N{})", epilogue_args(ir)),
        ),
    }
}
