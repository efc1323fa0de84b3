//! Every epilogue op and argument order against values computed by hand, on the host
//! reference and on every device under test (tests/common: PoCL in CI, CUDA and
//! NVIDIA's OpenCL on the GPU machine).
//!
//! tests/kernels.rs compares the kernels with the host reference, but both come from the
//! macro's IR: a lowering that swapped the operands of `-` or `/`, dropped a unary minus
//! or passed `clamp`'s bounds in the wrong order would make both wrong the same way and
//! pass. Here the expected value of every element is written out in plain f64 Rust in
//! the test itself, from inputs whose product is known by construction:
//!
//! - `acc[i][j]` = [`acc`]`(i, j)`, an odd multiple of 1/8 in [-17/8, 17/8] (never 0, so
//!   it may divide), from A (M×K) and B (K×N, column-major) with K = 4N: B holds a 1
//!   where `p % N == j` and A holds `acc(i, p % N)` scaled by 1/2, 1/4, 1/8, 1/8 across
//!   the four copies. Every value and every partial sum is exact in bf16, f16, tf32 and
//!   f32, so any kernel that sums correctly gets `acc` exactly, whatever its order; K = 40
//!   also spans several k-tiles, so an epilogue applied per k-tile shows.
//! - the epilogue's other inputs ([`bias`], [`scale`], [`res`], the scalars) are short
//!   binary fractions, exact in every dtype.
//!
//! Tolerance per element ([`tol`]): one ulp of the output type relative to |expected|
//! (the kernel rounds an f32 value that may sit a hair on the other side of a rounding
//! midpoint: f16 2^-10, bf16 2^-7; 0 for f32 outputs), plus 32 f32 ulps of
//! max(|expected|, 4) for the epilogue's own f32 arithmetic and library functions (the
//! OpenCL C library allows erf 16 ulp, tanh 5, exp 3; CUDA's erff, tanhf, expf 2; and a
//! composite expression rounds some fifteen times on terms up to ~4). A wrong operand
//! order, a lost minus or a swapped argument is off by at least 1/8 here.

mod common;

use common::*;
use crossgemm::prelude::*;
use crossgemm::Element;
use std::cell::RefCell;
use std::f64::consts::PI;

// The f32 kernels fall back to scalar FMA on the CUDA targets; the macro's build-time
// note about that (a deprecation warning) is expected for every one of them.
#[allow(deprecated)]
mod kernels {
    /// The order-sensitive arithmetic and every function, on `x * w` and a `Row` bias.
    macro_rules! ops {
        ($module:ident, $t:ident) => {
            pub mod $module {
                use crossgemm::prelude::*;
                #[gemm_kernel]
                pub fn add_row(x: Matrix<$t>, w: Matrix<$t, ColMajor>, bias: Row<$t>) -> Matrix<$t> {
                    x * w + bias
                }
                #[gemm_kernel]
                pub fn sub_row(x: Matrix<$t>, w: Matrix<$t, ColMajor>, bias: Row<$t>) -> Matrix<$t> {
                    x * w - bias
                }
                #[gemm_kernel]
                pub fn row_sub(x: Matrix<$t>, w: Matrix<$t, ColMajor>, bias: Row<$t>) -> Matrix<$t> {
                    bias - x * w
                }
                #[gemm_kernel]
                pub fn row_mul(x: Matrix<$t>, w: Matrix<$t, ColMajor>, bias: Row<$t>) -> Matrix<$t> {
                    bias * (x * w)
                }
                #[gemm_kernel]
                pub fn div_row(x: Matrix<$t>, w: Matrix<$t, ColMajor>, bias: Row<$t>) -> Matrix<$t> {
                    x * w / bias
                }
                #[gemm_kernel]
                pub fn row_div(x: Matrix<$t>, w: Matrix<$t, ColMajor>, bias: Row<$t>) -> Matrix<$t> {
                    bias / (x * w)
                }
                #[gemm_kernel]
                pub fn lit_sub(x: Matrix<$t>, w: Matrix<$t, ColMajor>) -> Matrix<$t> {
                    2.0 - x * w
                }
                #[gemm_kernel]
                pub fn sub_lit(x: Matrix<$t>, w: Matrix<$t, ColMajor>) -> Matrix<$t> {
                    x * w - 2.0
                }
                #[gemm_kernel]
                pub fn lit_div(x: Matrix<$t>, w: Matrix<$t, ColMajor>) -> Matrix<$t> {
                    3.0 / (x * w)
                }
                #[gemm_kernel]
                pub fn div_lit(x: Matrix<$t>, w: Matrix<$t, ColMajor>) -> Matrix<$t> {
                    x * w / 4.0
                }
                #[gemm_kernel]
                pub fn lit_mul_int(x: Matrix<$t>, w: Matrix<$t, ColMajor>) -> Matrix<$t> {
                    3 * (x * w) + 1
                }
                #[gemm_kernel]
                pub fn neg(x: Matrix<$t>, w: Matrix<$t, ColMajor>) -> Matrix<$t> {
                    -(x * w)
                }
                #[gemm_kernel]
                pub fn neg_sub(x: Matrix<$t>, w: Matrix<$t, ColMajor>, bias: Row<$t>) -> Matrix<$t> {
                    -(x * w) - bias
                }
                #[gemm_kernel]
                pub fn neg_of_sub(x: Matrix<$t>, w: Matrix<$t, ColMajor>, bias: Row<$t>) -> Matrix<$t> {
                    -(x * w - bias)
                }
                #[gemm_kernel]
                pub fn sub_neg(x: Matrix<$t>, w: Matrix<$t, ColMajor>, bias: Row<$t>) -> Matrix<$t> {
                    bias - -(x * w)
                }
                #[gemm_kernel]
                pub fn neg_lit(x: Matrix<$t>, w: Matrix<$t, ColMajor>) -> Matrix<$t> {
                    -0.5 * (x * w)
                }
                #[gemm_kernel]
                pub fn scalars(x: Matrix<$t>, w: Matrix<$t, ColMajor>, alpha: f32, beta: f32) -> Matrix<$t> {
                    alpha * (x * w) - beta
                }
                #[gemm_kernel]
                pub fn scalar_div(x: Matrix<$t>, w: Matrix<$t, ColMajor>, alpha: f32, beta: f32) -> Matrix<$t> {
                    beta / (x * w) - alpha
                }
                #[gemm_kernel]
                pub fn sub_assoc(x: Matrix<$t>, w: Matrix<$t, ColMajor>, bias: Row<$t>) -> Matrix<$t> {
                    x * w - bias - 1.0
                }
                #[gemm_kernel]
                pub fn div_assoc(x: Matrix<$t>, w: Matrix<$t, ColMajor>, bias: Row<$t>) -> Matrix<$t> {
                    x * w / 2.0 / bias
                }
                #[gemm_kernel]
                pub fn precedence(x: Matrix<$t>, w: Matrix<$t, ColMajor>, bias: Row<$t>) -> Matrix<$t> {
                    x * w - bias * 2.0 / 4.0 + 1.0
                }
                #[gemm_kernel]
                pub fn relu_acc(x: Matrix<$t>, w: Matrix<$t, ColMajor>) -> Matrix<$t> {
                    relu(x * w)
                }
                #[gemm_kernel]
                pub fn gelu_acc(x: Matrix<$t>, w: Matrix<$t, ColMajor>) -> Matrix<$t> {
                    gelu(x * w)
                }
                #[gemm_kernel]
                pub fn gelu_erf_acc(x: Matrix<$t>, w: Matrix<$t, ColMajor>) -> Matrix<$t> {
                    gelu_erf(x * w)
                }
                #[gemm_kernel]
                pub fn silu_acc(x: Matrix<$t>, w: Matrix<$t, ColMajor>) -> Matrix<$t> {
                    silu(x * w)
                }
                #[gemm_kernel]
                pub fn sigmoid_acc(x: Matrix<$t>, w: Matrix<$t, ColMajor>) -> Matrix<$t> {
                    sigmoid(x * w)
                }
                #[gemm_kernel]
                pub fn tanh_acc(x: Matrix<$t>, w: Matrix<$t, ColMajor>) -> Matrix<$t> {
                    tanh(x * w)
                }
                #[gemm_kernel]
                pub fn exp_acc(x: Matrix<$t>, w: Matrix<$t, ColMajor>) -> Matrix<$t> {
                    exp(x * w)
                }
                #[gemm_kernel]
                pub fn abs_acc(x: Matrix<$t>, w: Matrix<$t, ColMajor>) -> Matrix<$t> {
                    abs(x * w)
                }
                #[gemm_kernel]
                pub fn min_lit(x: Matrix<$t>, w: Matrix<$t, ColMajor>) -> Matrix<$t> {
                    min(x * w, 0.5)
                }
                #[gemm_kernel]
                pub fn min_row_first(x: Matrix<$t>, w: Matrix<$t, ColMajor>, bias: Row<$t>) -> Matrix<$t> {
                    min(bias, x * w)
                }
                #[gemm_kernel]
                pub fn max_lit(x: Matrix<$t>, w: Matrix<$t, ColMajor>) -> Matrix<$t> {
                    max(x * w, -0.5)
                }
                #[gemm_kernel]
                pub fn max_row_first(x: Matrix<$t>, w: Matrix<$t, ColMajor>, bias: Row<$t>) -> Matrix<$t> {
                    max(bias, x * w)
                }
                #[gemm_kernel]
                pub fn clamp_lits(x: Matrix<$t>, w: Matrix<$t, ColMajor>) -> Matrix<$t> {
                    clamp(x * w, -0.5, 1.25)
                }
                #[gemm_kernel]
                pub fn clamp_scalars(x: Matrix<$t>, w: Matrix<$t, ColMajor>, lo: f32, hi: f32) -> Matrix<$t> {
                    clamp(x * w, lo, hi)
                }
                #[gemm_kernel]
                pub fn clamp_acc_as_lo(x: Matrix<$t>, w: Matrix<$t, ColMajor>, bias: Row<$t>) -> Matrix<$t> {
                    clamp(0.25, x * w, bias)
                }
                #[gemm_kernel]
                pub fn clamp_acc_as_hi(x: Matrix<$t>, w: Matrix<$t, ColMajor>, bias: Row<$t>) -> Matrix<$t> {
                    clamp(bias, -0.5, x * w)
                }
                #[gemm_kernel]
                pub fn leaky_lit(x: Matrix<$t>, w: Matrix<$t, ColMajor>) -> Matrix<$t> {
                    leaky_relu(x * w, 0.125)
                }
                #[gemm_kernel]
                pub fn leaky_scalar(x: Matrix<$t>, w: Matrix<$t, ColMajor>, alpha: f32) -> Matrix<$t> {
                    leaky_relu(x * w, alpha)
                }
                #[gemm_kernel]
                pub fn leaky_acc_as_slope(x: Matrix<$t>, w: Matrix<$t, ColMajor>, bias: Row<$t>) -> Matrix<$t> {
                    leaky_relu(bias, x * w)
                }
            }
        };
    }

    /// Where each epilogue input is read: `Row`, `Col`, row- and column-major residuals, a
    /// column-major output, a transposed A; and one expression with every function.
    macro_rules! layouts {
        ($module:ident, $t:ident $(, $attr:tt)?) => {
            pub mod $module {
                use crossgemm::prelude::*;
                #[gemm_kernel $($attr)?]
                pub fn sub_row(x: Matrix<$t>, w: Matrix<$t, ColMajor>, bias: Row<$t>) -> Matrix<$t> {
                    x * w - bias
                }
                #[gemm_kernel $($attr)?]
                pub fn col_sub(x: Matrix<$t>, w: Matrix<$t, ColMajor>, scale: Col<$t>) -> Matrix<$t> {
                    scale - x * w
                }
                #[gemm_kernel $($attr)?]
                pub fn div_col(x: Matrix<$t>, w: Matrix<$t, ColMajor>, scale: Col<$t>) -> Matrix<$t> {
                    x * w / scale
                }
                #[gemm_kernel $($attr)?]
                pub fn sub_res(x: Matrix<$t>, w: Matrix<$t, ColMajor>, res: Matrix<$t>) -> Matrix<$t> {
                    x * w - res
                }
                #[gemm_kernel $($attr)?]
                pub fn res_div(x: Matrix<$t>, w: Matrix<$t, ColMajor>, res: Matrix<$t>) -> Matrix<$t> {
                    res / (x * w)
                }
                #[gemm_kernel $($attr)?]
                pub fn res_cm_sub(x: Matrix<$t>, w: Matrix<$t, ColMajor>, res: Matrix<$t, ColMajor>) -> Matrix<$t> {
                    res - x * w
                }
                #[gemm_kernel $($attr)?]
                pub fn out_cm(x: Matrix<$t>, w: Matrix<$t, ColMajor>, bias: Row<$t>, scale: Col<$t>) -> Matrix<$t, ColMajor> {
                    (x * w - bias) * scale
                }
                #[gemm_kernel $($attr)?]
                pub fn t_col_sub(xt: Matrix<$t>, w: Matrix<$t, ColMajor>, scale: Col<$t>) -> Matrix<$t> {
                    scale - xt.t() * w
                }
                #[gemm_kernel $($attr)?]
                pub fn all_ops(
                    x: Matrix<$t>,
                    w: Matrix<$t, ColMajor>,
                    bias: Row<$t>,
                    scale: Col<$t>,
                    res: Matrix<$t>,
                    alpha: f32,
                ) -> Matrix<$t> {
                    clamp(
                        leaky_relu(gelu(x * w) - gelu_erf(bias) + silu(scale) * sigmoid(res), 0.125)
                            + tanh(-(x * w)) / 2.0
                            + exp(min(x * w, 1.0)) * 0.25
                            - abs(max(alpha, x * w)) / relu(scale + 2.0),
                        -1.5,
                        1.75,
                    )
                }
            }
        };
    }

    ops!(ops_f16, f16);
    ops!(ops_f32, f32);
    layouts!(layouts_f16, f16);
    layouts!(layouts_bf16, bf16);
    layouts!(layouts_f32, f32);
    // `layout_ok`: `t_col_sub`'s `.t()` makes A M-major, which tf32 wgmma cannot take.
    layouts!(layouts_tf32, f32, (acc = tf32, layout_ok));
}

use kernels::*;

// --- the inputs, by hand --------------------------------------------------------------

const M: usize = 7;
const N: usize = 10;
/// Four copies of N: A's row `i` holds `acc(i, j)` at `j`, `N + j`, `2N + j`, `3N + j`,
/// scaled by [`SPLIT`].
const K: usize = 4 * N;
/// The four copies' weights: exact binary fractions summing to 1.
const SPLIT: [f64; 4] = [0.5, 0.25, 0.125, 0.125];

const ALPHA: f32 = 1.5;
const BETA: f32 = -0.75;
const LO: f32 = -0.75;
const HI: f32 = 1.5;

/// The product's value at (i, j): an odd multiple of 1/8 in [-17/8, 17/8].
fn acc(i: usize, j: usize) -> f64 {
    let t = (i * N + j) * 5 % 18;
    (2.0 * t as f64 - 17.0) / 8.0
}

/// `Row` values, one per column: -9/8, -7/8, .., 9/8 (never 0).
fn bias(j: usize) -> f64 {
    (j as f64 - 4.5) / 4.0
}

/// `Col` values, one per row: 1/4, -1/2, 3/4, -1, 5/4, -3/2, 7/4.
fn scale(i: usize) -> f64 {
    let s = 0.25 * (i + 1) as f64;
    if i.is_multiple_of(2) {
        s
    } else {
        -s
    }
}

/// The residual: multiples of 1/4 in [-5/4, 5/4], zeros included.
fn res(i: usize, j: usize) -> f64 {
    ((3 * i + 5 * j) % 11) as f64 / 4.0 - 1.25
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// The tanh form of GELU, as the DSL's `gelu` (and cuBLASLt's GELU epilogue) define it.
fn gelu(x: f64) -> f64 {
    0.5 * x * (1.0 + ((2.0 / PI).sqrt() * (x + 0.044715 * x * x * x)).tanh())
}

/// erf by its Maclaurin series, 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n+1)): for the
/// |x| <= 2 used here the largest term is below 3 and 60 terms leave nothing in f64.
fn erf(x: f64) -> f64 {
    let (mut term, mut sum) = (x, x);
    for n in 1..60 {
        term *= -x * x / n as f64;
        sum += term / (2 * n + 1) as f64;
    }
    sum * 2.0 / PI.sqrt()
}

fn gelu_erf(x: f64) -> f64 {
    0.5 * x * (1.0 + erf(x / 2f64.sqrt()))
}

fn silu(x: f64) -> f64 {
    x * sigmoid(x)
}

fn leaky(x: f64, slope: f64) -> f64 {
    if x > 0.0 {
        x
    } else {
        slope * x
    }
}

fn clamp(x: f64, lo: f64, hi: f64) -> f64 {
    x.max(lo).min(hi)
}

/// One ulp of the output type relative to |value| (see the file's documentation).
fn ulp_rel(d: crossgemm::DType) -> f64 {
    use crossgemm::DType;
    match d {
        DType::F16 => 2f64.powi(-10),
        DType::Bf16 => 2f64.powi(-7),
        DType::F32 => 0.0,
    }
}

/// The tolerance of an output element of type `T` expected to be `want`.
fn tol<T: Element>(want: f64) -> f64 {
    ulp_rel(T::DTYPE) * want.abs() + 32.0 * f32::EPSILON as f64 * want.abs().max(4.0)
}

// --- the operands on a device, and the comparison --------------------------------------

/// One dtype's operands on one device, and the failures seen so far.
struct Case<T: Element> {
    what: String,
    x: Matrix<T>,
    /// A stored transposed: K×M row-major, so that `xt.t()` is A.
    xt: Matrix<T>,
    w: Matrix<T, ColMajor>,
    bias: Row<T>,
    scale: Col<T>,
    res: Matrix<T>,
    res_cm: Matrix<T, ColMajor>,
    failures: RefCell<Vec<String>>,
    checked: RefCell<usize>,
}

fn el<T: Element>(v: f64) -> T {
    let e = T::from_f32(v as f32);
    assert_eq!(e.to_f32() as f64, v, "{v} is not exact in {:?}", T::DTYPE);
    e
}

impl<T: Element> Case<T> {
    fn new(dev: &Device, what: &str) -> Case<T> {
        // A (M×K row-major): acc(i, p % N) scaled by the weight of copy p / N.
        let a = |i: usize, p: usize| acc(i, p % N) * SPLIT[p / N];
        let xs: Vec<T> = (0..M * K).map(|e| el(a(e / K, e % K))).collect();
        let xts: Vec<T> = (0..K * M).map(|e| el(a(e % M, e / M))).collect();
        // B (K×N column-major: element (p, j) at j * K + p): 1 where p % N == j.
        let ws: Vec<T> = (0..K * N)
            .map(|e| el(f64::from(u8::from(e % K % N == e / K))))
            .collect();
        let rs: Vec<T> = (0..M * N).map(|e| el(res(e / N, e % N))).collect();
        let rcs: Vec<T> = (0..M * N).map(|e| el(res(e % M, e / M))).collect();
        let c = Case {
            what: format!("{what} on {}", dev.info()),
            x: Matrix::from_host(dev, M, K, &xs).unwrap(),
            xt: Matrix::from_host(dev, K, M, &xts).unwrap(),
            w: Matrix::from_host(dev, K, N, &ws).unwrap(),
            bias: Row::from_host(dev, &(0..N).map(|j| el(bias(j))).collect::<Vec<T>>()).unwrap(),
            scale: Col::from_host(dev, &(0..M).map(|i| el(scale(i))).collect::<Vec<T>>()).unwrap(),
            res: Matrix::from_host(dev, M, N, &rs).unwrap(),
            res_cm: Matrix::from_host(dev, M, N, &rcs).unwrap(),
            failures: RefCell::new(Vec::new()),
            checked: RefCell::new(0),
        };
        // The construction itself: the product of the host values is `acc`, exactly.
        for i in 0..M {
            for j in 0..N {
                let p: f64 = (0..K)
                    .map(|p| xs[i * K + p].to_f32() as f64 * ws[j * K + p].to_f32() as f64)
                    .sum();
                assert_eq!(p, acc(i, j), "A * B at ({i}, {j})");
            }
        }
        c
    }

    /// Compares a kernel's device output and its host reference, both M×N (column-major
    /// when `col_major`), with `want(i, j)`; failures are collected, not raised, so that
    /// one run names every broken op.
    fn check<L: crossgemm::LayoutType>(
        &self,
        name: &str,
        got: Result<Matrix<T, L>, GemmError>,
        reference: Result<Vec<T>, GemmError>,
        col_major: bool,
        want: impl Fn(usize, usize) -> f64,
    ) {
        let got = got.and_then(|m| m.to_host());
        let (got, reference) = match (got, reference) {
            (Ok(g), Ok(r)) => (g, r),
            (g, r) => {
                self.failures.borrow_mut().push(format!(
                    "{name}: kernel {:?}, reference {:?}",
                    g.err().map(|e| e.to_string()),
                    r.err().map(|e| e.to_string())
                ));
                return;
            }
        };
        assert_eq!((got.len(), reference.len()), (M * N, M * N), "{name}: lengths");
        let mut bad = Vec::new();
        for i in 0..M {
            for j in 0..N {
                let w = want(i, j);
                assert!(w.is_finite(), "{name}: expected value at ({i}, {j}) is {w}");
                let idx = if col_major { j * M + i } else { i * N + j };
                let t = tol::<T>(w);
                for (side, v) in [("kernel", got[idx]), ("reference", reference[idx])] {
                    let v = v.to_f32() as f64;
                    // A NaN fails too.
                    let d = (v - w).abs();
                    if d.is_nan() || d > t {
                        bad.push(format!("{side} ({i},{j}) = {v}, by hand {w} (tolerance {t:.1e})"));
                    }
                }
            }
        }
        *self.checked.borrow_mut() += 1;
        if !bad.is_empty() {
            let n = bad.len();
            bad.truncate(4);
            self.failures
                .borrow_mut()
                .push(format!("{name}: {n} wrong elements: {}", bad.join("; ")));
        }
    }

    /// Panics listing every failure; `expected` is how many kernels must have been
    /// checked (a check that silently ran nothing would pass).
    fn finish(self, expected: usize) {
        let f = self.failures.into_inner();
        assert!(
            f.is_empty(),
            "{}: {} kernels wrong:\n{}",
            self.what,
            f.len(),
            f.join("\n")
        );
        assert_eq!(self.checked.into_inner(), expected, "{}: kernels checked", self.what);
    }
}

/// The host (the reference itself) and every device under test.
fn under_test() -> Vec<Device> {
    let mut v = vec![Device::host()];
    v.extend(devices());
    v
}

/// `check!(c, module::kernel(args..), |i, j| expected)`: the kernel on `c`'s device and
/// its host reference, against the expected value of element (i, j).
macro_rules! check {
    ($c:ident, $k:ident :: $f:ident ( $($arg:expr),* $(,)? ), $want:expr) => {
        $c.check(stringify!($f), $k::$f($($arg),*), $k::$f::reference($($arg),*), false, $want)
    };
    (col_major $c:ident, $k:ident :: $f:ident ( $($arg:expr),* $(,)? ), $want:expr) => {
        $c.check(stringify!($f), $k::$f($($arg),*), $k::$f::reference($($arg),*), true, $want)
    };
}

// --- the tests ----------------------------------------------------------------------

/// The kernels of `ops!` for one dtype: 41 of them.
macro_rules! ops_test {
    ($test:ident, $k:ident, $t:ty) => {
        #[test]
        fn $test() {
            let (a, b) = (ALPHA as f64, BETA as f64);
            let (lo, hi) = (LO as f64, HI as f64);
            for dev in under_test() {
                let c = Case::<$t>::new(&dev, stringify!($k));
                let (x, w, r) = (&c.x, &c.w, &c.bias);
                check!(c, $k::add_row(x, w, r), |i, j| acc(i, j) + bias(j));
                check!(c, $k::sub_row(x, w, r), |i, j| acc(i, j) - bias(j));
                check!(c, $k::row_sub(x, w, r), |i, j| bias(j) - acc(i, j));
                check!(c, $k::row_mul(x, w, r), |i, j| bias(j) * acc(i, j));
                check!(c, $k::div_row(x, w, r), |i, j| acc(i, j) / bias(j));
                check!(c, $k::row_div(x, w, r), |i, j| bias(j) / acc(i, j));
                check!(c, $k::lit_sub(x, w), |i, j| 2.0 - acc(i, j));
                check!(c, $k::sub_lit(x, w), |i, j| acc(i, j) - 2.0);
                check!(c, $k::lit_div(x, w), |i, j| 3.0 / acc(i, j));
                check!(c, $k::div_lit(x, w), |i, j| acc(i, j) / 4.0);
                check!(c, $k::lit_mul_int(x, w), |i, j| 3.0 * acc(i, j) + 1.0);
                check!(c, $k::neg(x, w), |i, j| -acc(i, j));
                check!(c, $k::neg_sub(x, w, r), |i, j| -acc(i, j) - bias(j));
                check!(c, $k::neg_of_sub(x, w, r), |i, j| bias(j) - acc(i, j));
                check!(c, $k::sub_neg(x, w, r), |i, j| bias(j) + acc(i, j));
                check!(c, $k::neg_lit(x, w), |i, j| -0.5 * acc(i, j));
                check!(c, $k::scalars(x, w, ALPHA, BETA), |i, j| a * acc(i, j) - b);
                check!(c, $k::scalar_div(x, w, ALPHA, BETA), |i, j| b / acc(i, j) - a);
                check!(c, $k::sub_assoc(x, w, r), |i, j| (acc(i, j) - bias(j)) - 1.0);
                check!(c, $k::div_assoc(x, w, r), |i, j| (acc(i, j) / 2.0) / bias(j));
                check!(c, $k::precedence(x, w, r), |i, j| acc(i, j)
                    - (bias(j) * 2.0) / 4.0
                    + 1.0);
                check!(c, $k::relu_acc(x, w), |i, j| acc(i, j).max(0.0));
                check!(c, $k::gelu_acc(x, w), |i, j| gelu(acc(i, j)));
                check!(c, $k::gelu_erf_acc(x, w), |i, j| gelu_erf(acc(i, j)));
                check!(c, $k::silu_acc(x, w), |i, j| silu(acc(i, j)));
                check!(c, $k::sigmoid_acc(x, w), |i, j| sigmoid(acc(i, j)));
                check!(c, $k::tanh_acc(x, w), |i, j| acc(i, j).tanh());
                check!(c, $k::exp_acc(x, w), |i, j| acc(i, j).exp());
                check!(c, $k::abs_acc(x, w), |i, j| acc(i, j).abs());
                check!(c, $k::min_lit(x, w), |i, j| acc(i, j).min(0.5));
                check!(c, $k::min_row_first(x, w, r), |i, j| bias(j).min(acc(i, j)));
                check!(c, $k::max_lit(x, w), |i, j| acc(i, j).max(-0.5));
                check!(c, $k::max_row_first(x, w, r), |i, j| bias(j).max(acc(i, j)));
                check!(c, $k::clamp_lits(x, w), |i, j| clamp(acc(i, j), -0.5, 1.25));
                check!(c, $k::clamp_scalars(x, w, LO, HI), |i, j| clamp(
                    acc(i, j),
                    lo,
                    hi
                ));
                check!(c, $k::clamp_acc_as_lo(x, w, r), |i, j| clamp(
                    0.25,
                    acc(i, j),
                    bias(j)
                ));
                check!(c, $k::clamp_acc_as_hi(x, w, r), |i, j| clamp(
                    bias(j),
                    -0.5,
                    acc(i, j)
                ));
                check!(c, $k::leaky_lit(x, w), |i, j| leaky(acc(i, j), 0.125));
                check!(c, $k::leaky_scalar(x, w, ALPHA), |i, j| leaky(acc(i, j), a));
                check!(c, $k::leaky_acc_as_slope(x, w, r), |i, j| leaky(
                    bias(j),
                    acc(i, j)
                ));
                c.finish(40);
            }
        }
    };
}

/// The kernels of `layouts!` for one dtype.
macro_rules! layouts_test {
    ($test:ident, $k:ident, $t:ty) => {
        #[test]
        fn $test() {
            for dev in under_test() {
                let c = Case::<$t>::new(&dev, stringify!($k));
                let (x, w) = (&c.x, &c.w);
                check!(c, $k::sub_row(x, w, &c.bias), |i, j| acc(i, j) - bias(j));
                check!(c, $k::col_sub(x, w, &c.scale), |i, j| scale(i) - acc(i, j));
                check!(c, $k::div_col(x, w, &c.scale), |i, j| acc(i, j) / scale(i));
                check!(c, $k::sub_res(x, w, &c.res), |i, j| acc(i, j) - res(i, j));
                check!(c, $k::res_div(x, w, &c.res), |i, j| res(i, j) / acc(i, j));
                check!(c, $k::res_cm_sub(x, w, &c.res_cm), |i, j| res(i, j) - acc(i, j));
                check!(col_major c, $k::out_cm(x, w, &c.bias, &c.scale), |i, j| {
                    (acc(i, j) - bias(j)) * scale(i)
                });
                check!(c, $k::t_col_sub(&c.xt, w, &c.scale), |i, j| scale(i) - acc(i, j));
                check!(c, $k::all_ops(x, w, &c.bias, &c.scale, &c.res, ALPHA), |i, j| {
                    let v = acc(i, j);
                    let inner = gelu(v) - gelu_erf(bias(j)) + silu(scale(i)) * sigmoid(res(i, j));
                    let sum = leaky(inner, 0.125) + (-v).tanh() / 2.0 + v.min(1.0).exp() * 0.25
                        - (ALPHA as f64).max(v).abs() / (scale(i) + 2.0).max(0.0);
                    clamp(sum, -1.5, 1.75)
                });
                c.finish(9);
            }
        }
    };
}

ops_test!(ops_f16_by_hand, ops_f16, f16);
ops_test!(ops_f32_by_hand, ops_f32, f32);
layouts_test!(layouts_f16_by_hand, layouts_f16, f16);
layouts_test!(layouts_bf16_by_hand, layouts_bf16, bf16);
layouts_test!(layouts_f32_by_hand, layouts_f32, f32);
layouts_test!(layouts_tf32_by_hand, layouts_tf32, f32);

/// The hand-written functions themselves, against published values (a wrong `erf`
/// here would make every `gelu_erf` check meaningless).
#[test]
fn hand_functions_match_published_values() {
    let close = |a: f64, b: f64| (a - b).abs() < 1e-15;
    assert!(close(erf(0.5), 0.520_499_877_813_046_5), "{}", erf(0.5));
    assert!(close(erf(1.0), 0.842_700_792_949_714_9), "{}", erf(1.0));
    assert!(close(erf(-1.5), -0.966_105_146_475_310_7), "{}", erf(-1.5));
    assert!(close(erf(2.0), 0.995_322_265_018_952_7), "{}", erf(2.0));
    // GELU at 1: 0.841192 (tanh form), 0.841345 (erf form).
    assert!((gelu(1.0) - 0.841_191_990_608_276_8).abs() < 1e-12, "{}", gelu(1.0));
    assert!(
        (gelu_erf(1.0) - 0.841_344_746_068_542_9).abs() < 1e-12,
        "{}",
        gelu_erf(1.0)
    );
    assert_eq!(
        (clamp(3.0, -1.0, 2.0), clamp(-3.0, -1.0, 2.0), clamp(0.5, -1.0, 2.0)),
        (2.0, -1.0, 0.5)
    );
    assert_eq!((leaky(2.0, 0.1), leaky(-2.0, 0.25)), (2.0, -0.5));
    // The inputs reach every side of the branches the ops have.
    let accs: Vec<f64> = (0..M).flat_map(|i| (0..N).map(move |j| acc(i, j))).collect();
    assert!(accs
        .iter()
        .all(|&v| v != 0.0 && (v * 8.0).fract() == 0.0 && v.abs() <= 17.0 / 8.0));
    for (lo, hi) in [(-0.5, 1.25), (LO as f64, HI as f64)] {
        assert!(accs.iter().any(|&v| v < lo) && accs.iter().any(|&v| v > hi));
        assert!(accs.iter().any(|&v| v > lo && v < hi));
    }
    assert!(accs.iter().any(|&v| v < 0.0) && accs.iter().any(|&v| v > 0.0));
    assert!((0..N).any(|j| bias(j) < 0.0) && (0..N).any(|j| bias(j) > 0.0));
}

/// CI has NVRTC but no GPU: there every op's CUDA spelling is proved to compile through
/// `all_ops` (each function once) for every dtype (the mma.sync path for f16, bf16, tf32;
/// SIMT for f32) and CUDA target, with the plan's first config at this file's shape.
#[cfg(feature = "cuda")]
#[test]
fn all_ops_compile_for_every_cuda_target() {
    use crossgemm::Backend;
    if !nvrtc_or_skip(
        "all_ops_compile_for_every_cuda_target",
        "NVRTC compiles of `all_ops` per dtype and CUDA target",
    ) {
        return;
    }
    let mut compiles = 0;
    for spec in [
        &layouts_f16::all_ops::SPEC,
        &layouts_bf16::all_ops::SPEC,
        &layouts_f32::all_ops::SPEC,
        &layouts_tf32::all_ops::SPEC,
    ] {
        for tk in spec.targets().iter().filter(|t| t.backend == Backend::Cuda) {
            // The first config of every family of the plan: each has its own source.
            for family in &tk.plan().families {
                let cfg = tk
                    .plan()
                    .configs
                    .iter()
                    .find(|c| c.family_id() == *family)
                    .expect("every family of a plan keeps a config");
                crossgemm::check_cuda_compiles(tk, spec.ir(), cfg, (M, N, K))
                    .unwrap_or_else(|e| panic!("{} on {} with {cfg}: {e}", spec.name, tk.target));
                compiles += 1;
            }
        }
    }
    assert!(compiles >= 4, "{compiles} compiles: no CUDA target planned?");
}

#[cfg(not(feature = "cuda"))]
#[test]
fn all_ops_compile_for_every_cuda_target() {
    skip(
        "all_ops_compile_for_every_cuda_target",
        "NVRTC compiles of `all_ops` per dtype and CUDA target",
        "this build has no `cuda` feature",
        "CROSSGEMM_REQUIRE_NVRTC",
    );
}

/// A NaN in the product: kept by arithmetic, and where `relu`, `max`, `min` or `clamp`
/// meet it, the other argument comes out (C's `fmax`/`fmin`, Rust's `f32::max`), on every
/// device and the host reference alike: row 0 of `x` holds a NaN, so every product of
/// that row is NaN; the other rows are finite.
#[test]
fn a_nan_product_meets_the_non_nan_argument() {
    #[gemm_kernel(fma_ok)]
    fn nan_plain(x: Matrix<f32>, w: Matrix<f32, ColMajor>) -> Matrix<f32> {
        x * w + 1.0
    }
    #[gemm_kernel(fma_ok)]
    fn nan_relu(x: Matrix<f32>, w: Matrix<f32, ColMajor>) -> Matrix<f32> {
        relu(x * w)
    }
    #[gemm_kernel(fma_ok)]
    fn nan_max(x: Matrix<f32>, w: Matrix<f32, ColMajor>, bias: Row<f32>) -> Matrix<f32> {
        max(x * w, bias)
    }
    #[gemm_kernel(fma_ok)]
    fn nan_min(x: Matrix<f32>, w: Matrix<f32, ColMajor>, bias: Row<f32>) -> Matrix<f32> {
        min(x * w, bias)
    }
    #[gemm_kernel(fma_ok)]
    fn nan_clamp(x: Matrix<f32>, w: Matrix<f32, ColMajor>) -> Matrix<f32> {
        clamp(x * w, -0.5, 0.5)
    }
    let (m, n, k) = (3, 5, 4);
    for dev in under_test() {
        let mut xv: Vec<f32> = (0..m * k).map(|i| 0.25 * (i % 3) as f32).collect();
        xv[1] = f32::NAN;
        let x = Matrix::<f32>::from_host(&dev, m, k, &xv).unwrap();
        let w = Matrix::<f32, ColMajor>::from_host(&dev, k, n, &vec![0.5; k * n]).unwrap();
        let bv: Vec<f32> = (0..n).map(|j| j as f32 - 2.0).collect();
        let bias = Row::<f32>::from_host(&dev, &bv).unwrap();
        let prod = |i: usize| (0..k).map(|p| 0.5 * xv[i * k + p]).sum::<f32>();
        // (op, kernel's output, reference's, the expected value of (product, bias)).
        type Out = (&'static str, Vec<f32>, Vec<f32>, fn(f32, f32) -> f32);
        let outs: [Out; 5] = [
            (
                "x * w + 1",
                nan_plain(&x, &w).unwrap().to_host().unwrap(),
                nan_plain::reference(&x, &w).unwrap(),
                |p, _| p + 1.0,
            ),
            (
                "relu",
                nan_relu(&x, &w).unwrap().to_host().unwrap(),
                nan_relu::reference(&x, &w).unwrap(),
                |p, _| if p.is_nan() { 0.0 } else { p.max(0.0) },
            ),
            (
                "max",
                nan_max(&x, &w, &bias).unwrap().to_host().unwrap(),
                nan_max::reference(&x, &w, &bias).unwrap(),
                |p, b| if p.is_nan() { b } else { p.max(b) },
            ),
            (
                "min",
                nan_min(&x, &w, &bias).unwrap().to_host().unwrap(),
                nan_min::reference(&x, &w, &bias).unwrap(),
                |p, b| if p.is_nan() { b } else { p.min(b) },
            ),
            (
                "clamp",
                nan_clamp(&x, &w).unwrap().to_host().unwrap(),
                nan_clamp::reference(&x, &w).unwrap(),
                |p, _| if p.is_nan() { -0.5 } else { p.clamp(-0.5, 0.5) },
            ),
        ];
        for (op, got, reference, f) in outs {
            for i in 0..m {
                for j in 0..n {
                    let want = f(prod(i), bv[j]);
                    for (side, v) in [("kernel", got[i * n + j]), ("reference", reference[i * n + j])] {
                        let same = if want.is_nan() { v.is_nan() } else { v == want };
                        assert!(same, "{op} on {} ({side}): ({i},{j}) is {v}, want {want}", dev.info());
                    }
                }
            }
        }
    }
}
