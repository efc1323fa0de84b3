//! The GEMM intermediate representation: plain owned data, no syn.
//!
//! A kernel computes `out[i][j] = epilogue(acc[i][j], params...)` where
//! `acc = sum_k A[i][k] * B[k][j]` in the accumulator type. The epilogue is kept in
//! postfix form ([`EpOp`]) so that it serialises flatly and evaluates with a stack,
//! both in generated C and in the host reference.

use serde::{Deserialize, Serialize};

/// Element type of an operand in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// IEEE binary16.
    F16,
    /// bfloat16 (8-bit exponent, 7-bit mantissa).
    Bf16,
    /// IEEE binary32.
    F32,
}

impl DType {
    /// Bytes per element.
    pub const fn size(self) -> u32 {
        match self {
            DType::F16 | DType::Bf16 => 2,
            DType::F32 => 4,
        }
    }
    /// The DSL / Rust spelling (`f16`, `bf16`, `f32`).
    pub const fn name(self) -> &'static str {
        match self {
            DType::F16 => "f16",
            DType::Bf16 => "bf16",
            DType::F32 => "f32",
        }
    }
    /// Parses the DSL spelling.
    pub fn from_name(s: &str) -> Option<DType> {
        Some(match s {
            "f16" => DType::F16,
            "bf16" => DType::Bf16,
            "f32" => DType::F32,
            _ => return None,
        })
    }
}

/// Storage order of a matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// Element (r, c) at `r * cols + c`.
    #[default]
    RowMajor,
    /// Element (r, c) at `c * rows + r`.
    ColMajor,
}

impl Layout {
    /// The other layout: what a `.t()` turns a matrix's layout into.
    pub const fn flip(self) -> Layout {
        match self {
            Layout::RowMajor => Layout::ColMajor,
            Layout::ColMajor => Layout::RowMajor,
        }
    }
    /// Rust type name in the DSL.
    pub const fn name(self) -> &'static str {
        match self {
            Layout::RowMajor => "RowMajor",
            Layout::ColMajor => "ColMajor",
        }
    }
}

/// How the product is accumulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum AccMode {
    /// f32 accumulation of exact products (f16/bf16 products are exact in f32).
    #[default]
    F32,
    /// f32 operands rounded to tf32 (10-bit mantissa) before the product, f32 accumulation.
    /// Only meaningful for f32 operands; opt-in because it loses precision.
    Tf32,
    /// f32 operands, each split into a tf32 part and the tf32 of what that leaves
    /// (`a = hi + lo`), and the product taken as three tf32 products, `lo·hi + hi·lo +
    /// hi·hi` (the `lo·lo` term, about 2^-22 of the product, dropped): close to f32
    /// accuracy at tensor-core rates (CUTLASS's 3xTF32). The runtime writes the split
    /// operands side by side along K into scratch and runs the kernel, a tf32 kernel, on
    /// a product of 3K (`crate::split3`). Only for f32 operands.
    Tf32x3,
}

impl AccMode {
    /// Whether the kernel's products are tf32 products (its operands rounded to tf32 on
    /// the way into the tensor cores): [`AccMode::Tf32`], and [`AccMode::Tf32x3`], whose
    /// kernel is a tf32 kernel over split operands.
    pub fn tf32_products(self) -> bool {
        matches!(self, AccMode::Tf32 | AccMode::Tf32x3)
    }

    /// The name `#[gemm_kernel(acc = ..)]` gives this mode.
    pub fn name(self) -> &'static str {
        match self {
            AccMode::F32 => "f32",
            AccMode::Tf32 => "tf32",
            AccMode::Tf32x3 => "tf32x3",
        }
    }
}

/// What kind of value a kernel parameter is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ParamKind {
    /// A 2-D matrix in device memory.
    Matrix { dtype: DType, layout: Layout },
    /// A length-N vector broadcast along M (one value per output column).
    Row { dtype: DType },
    /// A length-M vector broadcast along N (one value per output row).
    Col { dtype: DType },
    /// An `f32` passed by value.
    Scalar,
}

/// One parameter of the user's kernel, in signature order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Param {
    /// The Rust identifier.
    pub name: String,
    /// Its type.
    pub kind: ParamKind,
}

impl Param {
    /// A `Matrix<dtype, layout>` parameter.
    pub fn matrix(name: &str, dtype: DType, layout: Layout) -> Param {
        Param {
            name: name.into(),
            kind: ParamKind::Matrix { dtype, layout },
        }
    }
    /// A `Row<dtype>` parameter (one value per output column).
    pub fn row(name: &str, dtype: DType) -> Param {
        Param {
            name: name.into(),
            kind: ParamKind::Row { dtype },
        }
    }
    /// A `Col<dtype>` parameter (one value per output row).
    pub fn col(name: &str, dtype: DType) -> Param {
        Param {
            name: name.into(),
            kind: ParamKind::Col { dtype },
        }
    }
    /// An `f32` scalar parameter.
    pub fn scalar(name: &str) -> Param {
        Param {
            name: name.into(),
            kind: ParamKind::Scalar,
        }
    }
}

/// Elementwise functions the epilogue may call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Func {
    /// `max(x, 0)`. A NaN gives 0: `max`, `min` and `clamp` return the other argument
    /// for a NaN (IEEE maxNum and minNum, as C's `fmax`/`fmin`) on every device and the
    /// host reference, where PyTorch's `relu` keeps the NaN.
    Relu,
    /// GELU, tanh approximation (PyTorch `approximate="tanh"`, cuBLASLt's GELU epilogue).
    Gelu,
    /// GELU, exact erf form.
    GeluErf,
    /// `x * sigmoid(x)`.
    Silu,
    /// `1 / (1 + exp(-x))`.
    Sigmoid,
    /// Hyperbolic tangent.
    Tanh,
    /// `e^x`.
    Exp,
    /// `|x|`.
    Abs,
    /// Smaller of two (the other for a NaN, as [`Func::Relu`] says).
    Min,
    /// Larger of two (the other for a NaN).
    Max,
    /// `clamp(x, lo, hi)`.
    Clamp,
    /// `leaky_relu(x, slope)`: `x` if positive, else `slope * x`.
    LeakyRelu,
}

impl Func {
    /// Every function, for error messages and tests.
    pub const ALL: [Func; 12] = [
        Func::Relu,
        Func::Gelu,
        Func::GeluErf,
        Func::Silu,
        Func::Sigmoid,
        Func::Tanh,
        Func::Exp,
        Func::Abs,
        Func::Min,
        Func::Max,
        Func::Clamp,
        Func::LeakyRelu,
    ];
    /// DSL name.
    pub const fn name(self) -> &'static str {
        match self {
            Func::Relu => "relu",
            Func::Gelu => "gelu",
            Func::GeluErf => "gelu_erf",
            Func::Silu => "silu",
            Func::Sigmoid => "sigmoid",
            Func::Tanh => "tanh",
            Func::Exp => "exp",
            Func::Abs => "abs",
            Func::Min => "min",
            Func::Max => "max",
            Func::Clamp => "clamp",
            Func::LeakyRelu => "leaky_relu",
        }
    }
    /// Number of arguments.
    pub const fn arity(self) -> usize {
        match self {
            Func::Min | Func::Max | Func::LeakyRelu => 2,
            Func::Clamp => 3,
            _ => 1,
        }
    }
    /// Looks a DSL name up.
    pub fn from_name(s: &str) -> Option<Func> {
        Func::ALL.into_iter().find(|f| f.name() == s)
    }
    /// Applies the function on the host, in f32: the reference semantics that the
    /// generated C must match.
    pub fn eval(self, a: &[f32]) -> f32 {
        let x = a[0];
        match self {
            Func::Relu => x.max(0.0),
            Func::Gelu => {
                let c = 0.797_884_6_f32; // sqrt(2/pi)
                0.5 * x * (1.0 + (c * (x + 0.044715 * x * x * x)).tanh())
            }
            Func::GeluErf => 0.5 * x * (1.0 + erf(x / std::f32::consts::SQRT_2)),
            Func::Silu => x / (1.0 + (-x).exp()),
            Func::Sigmoid => 1.0 / (1.0 + (-x).exp()),
            Func::Tanh => x.tanh(),
            Func::Exp => x.exp(),
            Func::Abs => x.abs(),
            Func::Min => x.min(a[1]),
            Func::Max => x.max(a[1]),
            Func::Clamp => x.max(a[1]).min(a[2]),
            Func::LeakyRelu => {
                if x > 0.0 {
                    x
                } else {
                    a[1] * x
                }
            }
        }
    }
}

/// erf, computed in f64 and rounded to f32 (std has none; Abramowitz–Stegun 7.1.26 is
/// too coarse to serve as a reference).
fn erf(x: f32) -> f32 {
    let x = x as f64;
    let t = x.abs();
    let r = if t < 2.5 {
        // Maclaurin series: converges fast for |x| < 2.5 in f64.
        let mut sum = t;
        let mut term = t;
        let x2 = t * t;
        let mut n = 0.0;
        loop {
            n += 1.0;
            term *= -x2 / n;
            let add = term / (2.0 * n + 1.0);
            sum += add;
            if add.abs() <= 1e-17 * sum.abs() || n > 200.0 {
                break;
            }
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    } else {
        // Continued fraction for erfc, accurate for t >= 2.5.
        let mut f = 0.0;
        for k in (1..60).rev() {
            f = (k as f64 / 2.0) / (t + f);
        }
        1.0 - (-t * t).exp() / std::f64::consts::PI.sqrt() / (t + f)
    };
    (if x < 0.0 { -r } else { r }) as f32
}

/// One step of the postfix epilogue program.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EpOp {
    /// Push the accumulator value at (i, j).
    Acc,
    /// Push parameter `n` (signature index) at (i, j): a matrix element, a row/col
    /// broadcast element or a scalar.
    Param(u32),
    /// Push a literal.
    Lit(f32),
    /// Negate the top.
    Neg,
    /// Pop b, a; push a + b.
    Add,
    /// Pop b, a; push a - b.
    Sub,
    /// Pop b, a; push a * b.
    Mul,
    /// Pop b, a; push a / b.
    Div,
    /// Pop `arity` arguments (first pushed = first argument); push the result.
    Call(Func),
}

/// A fully checked GEMM kernel description.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GemmIr {
    /// The user's fn name; kernel symbols derive from it.
    pub name: String,
    /// Every parameter, in signature order (the kernel ABI passes them in this order).
    pub params: Vec<Param>,
    /// Signature index of the left factor A (logically M×K).
    pub a: u32,
    /// Whether A is used transposed (`a.t()`): then the parameter is K×M.
    pub a_t: bool,
    /// Signature index of the right factor B (logically K×N).
    pub b: u32,
    /// Whether B is used transposed.
    pub b_t: bool,
    /// dtype of A and B (they must agree).
    pub ab_dtype: DType,
    /// Accumulation mode.
    pub acc: AccMode,
    /// Output element type.
    pub out_dtype: DType,
    /// Output layout.
    pub out_layout: Layout,
    /// The epilogue program; `[Acc]` for a plain product.
    pub epilogue: Vec<EpOp>,
}

impl GemmIr {
    /// The plain product `a * b` of two `dtype` matrices in the given layouts, into a
    /// row-major `dtype` result: a starting point for IRs built by hand (tests, tools).
    pub fn matmul(name: &str, dtype: DType, acc: AccMode, a_layout: Layout, b_layout: Layout) -> GemmIr {
        GemmIr {
            name: name.into(),
            params: vec![Param::matrix("a", dtype, a_layout), Param::matrix("b", dtype, b_layout)],
            a: 0,
            a_t: false,
            b: 1,
            b_t: false,
            ab_dtype: dtype,
            acc,
            out_dtype: dtype,
            out_layout: Layout::RowMajor,
            epilogue: vec![EpOp::Acc],
        }
    }

    /// `self` with a fused epilogue: `program` over the accumulator and `params`, which
    /// follow A and B (so `EpOp::Param(2)` is the first of them). For IRs built by hand.
    pub fn with_epilogue(mut self, params: impl IntoIterator<Item = Param>, program: Vec<EpOp>) -> GemmIr {
        self.params.extend(params);
        self.epilogue = program;
        self
    }

    /// `self` storing its result as `dtype` in `layout`.
    pub fn with_out(mut self, dtype: DType, layout: Layout) -> GemmIr {
        self.out_dtype = dtype;
        self.out_layout = layout;
        self
    }

    /// Storage layout of the logical M×K operand A as the kernel sees it.
    pub fn a_layout(&self) -> Layout {
        let l = self.matrix_layout(self.a);
        if self.a_t {
            l.flip()
        } else {
            l
        }
    }
    /// Storage layout of the logical K×N operand B as the kernel sees it.
    pub fn b_layout(&self) -> Layout {
        let l = self.matrix_layout(self.b);
        if self.b_t {
            l.flip()
        } else {
            l
        }
    }
    fn matrix_layout(&self, idx: u32) -> Layout {
        match self.params[idx as usize].kind {
            ParamKind::Matrix { layout, .. } => layout,
            _ => Layout::RowMajor,
        }
    }
    /// The same kernel turned around: `Cᵀ = Bᵀ · Aᵀ` on the same parameters and memory.
    ///
    /// A kernel generated from it computes the transpose of this one's output when it
    /// is launched on the same buffers with M and N exchanged: its A is this one's B read
    /// transposed, its B this one's A, every matrix parameter is the same memory seen in
    /// the other layout (a row-major `M×N` matrix is a column-major `N×M` one, with the
    /// same leading dimension), each `Row` (one value per column of C) is a `Col` of the
    /// transpose and each `Col` a `Row`, and the output's layout flips. Signature order,
    /// and so the kernel ABI, is unchanged; the epilogue program too, since it reads each
    /// parameter at the element it computes. Why: a product with few rows computed this
    /// way puts them on the wide side of the tensor-core instruction
    /// (`family::wgmma`'s `turned` form). Applying it twice gives `self` back.
    pub fn transposed(&self) -> GemmIr {
        let params = self
            .params
            .iter()
            .map(|p| Param {
                name: p.name.clone(),
                kind: match p.kind {
                    ParamKind::Matrix { dtype, layout } => ParamKind::Matrix {
                        dtype,
                        layout: layout.flip(),
                    },
                    ParamKind::Row { dtype } => ParamKind::Col { dtype },
                    ParamKind::Col { dtype } => ParamKind::Row { dtype },
                    ParamKind::Scalar => ParamKind::Scalar,
                },
            })
            .collect();
        // The matrices' layouts flipped already: `.t()` flags stay with their operand.
        GemmIr {
            params,
            a: self.b,
            a_t: self.b_t,
            b: self.a,
            b_t: self.a_t,
            out_layout: self.out_layout.flip(),
            ..self.clone()
        }
    }
    /// Parameters the epilogue reads (signature order, A and B excluded unless the
    /// epilogue names them too).
    pub fn epilogue_params(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .epilogue
            .iter()
            .filter_map(|op| match op {
                EpOp::Param(p) => Some(*p),
                _ => None,
            })
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
    /// A stable 64-bit FNV-1a hash of the IR's JSON form: names kernels and keys caches.
    pub fn hash(&self) -> u64 {
        fnv1a(serde_json::to_string(self).expect("IR serialises").as_bytes())
    }
    /// Kernel symbol: `cg_<name>_<hash>` (valid in C).
    pub fn symbol(&self) -> String {
        format!("cg_{}_{:08x}", self.name, self.hash() as u32)
    }
    /// A short human description of the epilogue, e.g. `relu(acc + bias)`.
    pub fn epilogue_text(&self) -> String {
        let mut st: Vec<String> = Vec::new();
        for op in &self.epilogue {
            let s = match *op {
                EpOp::Acc => "acc".to_string(),
                EpOp::Param(p) => self.params[p as usize].name.clone(),
                EpOp::Lit(v) => format!("{v:?}"),
                EpOp::Neg => format!("-{}", st.pop().unwrap_or_default()),
                EpOp::Add | EpOp::Sub | EpOp::Mul | EpOp::Div => {
                    let b = st.pop().unwrap_or_default();
                    let a = st.pop().unwrap_or_default();
                    let o = match op {
                        EpOp::Add => "+",
                        EpOp::Sub => "-",
                        EpOp::Mul => "*",
                        _ => "/",
                    };
                    format!("({a} {o} {b})")
                }
                EpOp::Call(f) => {
                    let args = st.split_off(st.len().saturating_sub(f.arity()));
                    format!("{}({})", f.name(), args.join(", "))
                }
            };
            st.push(s);
        }
        st.pop().unwrap_or_default()
    }
}

/// 64-bit FNV-1a: tiny, stable across Rust versions (unlike `DefaultHasher`).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_matches_known_values() {
        for (x, want) in [
            (0.0f32, 0.0f32),
            (0.5, 0.520_499_9),
            (1.0, 0.842_700_8),
            (2.0, 0.995_322_3),
            (3.0, 0.999_977_9),
            (-1.0, -0.842_700_8),
        ] {
            assert!((erf(x) - want).abs() < 1e-6, "erf({x}) = {} want {want}", erf(x));
        }
    }

    /// Turned around, A is B read transposed and B is A, each in the other layout (a
    /// `.t()` stays with its operand), rows and columns of the epilogue exchange, the
    /// output's layout flips, and twice is the identity.
    #[test]
    fn transposed_exchanges_the_operands_and_flips_every_layout() {
        let mut ir = GemmIr::matmul("k", DType::F16, AccMode::F32, Layout::RowMajor, Layout::ColMajor);
        ir.params.push(Param::row("bias", DType::F16));
        ir.params.push(Param::col("scale", DType::F32));
        ir.params.push(Param::matrix("res", DType::F16, Layout::ColMajor));
        ir.params.push(Param::scalar("alpha"));
        ir.epilogue = vec![EpOp::Acc, EpOp::Param(2), EpOp::Add, EpOp::Param(3), EpOp::Mul];
        for (a_t, b_t) in [(false, false), (true, false), (false, true), (true, true)] {
            let ir = GemmIr { a_t, b_t, ..ir.clone() };
            let t = ir.transposed();
            assert_eq!((t.a, t.b), (ir.b, ir.a));
            assert_eq!(t.a_layout(), ir.b_layout().flip(), "{a_t} {b_t}");
            assert_eq!(t.b_layout(), ir.a_layout().flip(), "{a_t} {b_t}");
            assert_eq!(t.out_layout, Layout::ColMajor);
            assert_eq!(t.params[2].kind, ParamKind::Col { dtype: DType::F16 });
            assert_eq!(t.params[3].kind, ParamKind::Row { dtype: DType::F32 });
            assert_eq!(
                t.params[4].kind,
                ParamKind::Matrix {
                    dtype: DType::F16,
                    layout: Layout::RowMajor
                }
            );
            assert_eq!(t.params[5].kind, ParamKind::Scalar);
            assert_eq!(t.epilogue, ir.epilogue);
            assert_eq!(t.epilogue_text(), ir.epilogue_text());
            assert_eq!(t.transposed(), ir);
        }
        // One parameter on both sides, `x * x.t()`: turned around it is `x * x.t()` again
        // (the product is symmetric), read through the flipped parameter.
        let mut gram = GemmIr::matmul("g", DType::F16, AccMode::F32, Layout::RowMajor, Layout::RowMajor);
        gram.params.truncate(1);
        (gram.b, gram.b_t) = (0, true);
        let t = gram.transposed();
        assert_eq!((t.a, t.b, t.a_t, t.b_t), (0, 0, true, false));
        assert_eq!((t.a_layout(), t.b_layout()), (gram.a_layout(), gram.b_layout()));
        assert_eq!(t.transposed(), gram);
    }

    #[test]
    fn func_names_round_trip() {
        for f in Func::ALL {
            assert_eq!(Func::from_name(f.name()), Some(f));
        }
    }
}
