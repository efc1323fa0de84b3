//! The host reference: what every generated kernel must compute, evaluated on the CPU
//! with f64 accumulation. Tests and the tuner check kernels against it.

use gemm_core::{AccMode, EpOp, GemmIr, Layout};

/// One operand of the host reference, widened to f32.
#[derive(Clone, Copy, Debug)]
pub enum HostOperand<'a> {
    /// A matrix as stored (`rows × cols` in `layout`).
    Matrix {
        /// Elements in storage order.
        data: &'a [f32],
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
        /// Storage order.
        layout: Layout,
    },
    /// A `Row` (length N) or `Col` (length M) vector.
    Vector(&'a [f32]),
    /// A scalar.
    Scalar(f32),
}

/// Rounds to tf32 the way `cvt.rna.tf32.f32` does: nearest, ties away from zero.
pub fn round_tf32(x: f32) -> f32 {
    if !x.is_finite() {
        return x;
    }
    f32::from_bits((x.to_bits().wrapping_add(0x1000)) & 0xffff_e000)
}

fn at(op: &HostOperand<'_>, r: usize, c: usize) -> f32 {
    match *op {
        HostOperand::Matrix {
            data,
            rows,
            cols,
            layout,
        } => match layout {
            Layout::RowMajor => data[r * cols + c],
            Layout::ColMajor => data[c * rows + r],
        },
        HostOperand::Vector(v) => v[0],
        HostOperand::Scalar(s) => s,
    }
}

/// Evaluates the epilogue for one element. `args` are the kernel's parameters in
/// signature order; `stack` is scratch space reused across elements.
pub fn epilogue(ir: &GemmIr, args: &[HostOperand<'_>], acc: f32, i: usize, j: usize, stack: &mut Vec<f32>) -> f32 {
    stack.clear();
    for op in &ir.epilogue {
        match *op {
            EpOp::Acc => stack.push(acc),
            EpOp::Param(p) => {
                let v = match (&ir.params[p as usize].kind, args[p as usize]) {
                    (gemm_core::ParamKind::Row { .. }, HostOperand::Vector(v)) => v[j],
                    (gemm_core::ParamKind::Col { .. }, HostOperand::Vector(v)) => v[i],
                    (_, op) => at(&op, i, j),
                };
                stack.push(v);
            }
            EpOp::Lit(v) => stack.push(v),
            EpOp::Neg => {
                let a = stack.pop().expect("checked IR");
                stack.push(-a);
            }
            EpOp::Add | EpOp::Sub | EpOp::Mul | EpOp::Div => {
                let b = stack.pop().expect("checked IR");
                let a = stack.pop().expect("checked IR");
                stack.push(match op {
                    EpOp::Add => a + b,
                    EpOp::Sub => a - b,
                    EpOp::Mul => a * b,
                    _ => a / b,
                });
            }
            EpOp::Call(f) => {
                let at = stack.len() - f.arity();
                let v = f.eval(&stack[at..]);
                stack.truncate(at);
                stack.push(v);
            }
        }
    }
    stack.pop().unwrap_or(acc)
}

/// The reference result, `m × n` in the IR's output layout, before rounding to the
/// output dtype. Products are summed in f64 (under `acc = tf32` the operands rounded to
/// tf32 first, as the tensor cores do; under `acc = tf32x3` not, as its split products
/// approach the exact ones); the epilogue runs in f32, as in the kernels.
pub fn gemm(ir: &GemmIr, args: &[HostOperand<'_>], m: usize, n: usize, k: usize) -> Vec<f32> {
    let tf32 = ir.acc == AccMode::Tf32;
    let conv = |x: f32| if tf32 { round_tf32(x) } else { x } as f64;
    // Gather A row-major and B column-major so that each dot product is contiguous.
    let a_op = args[ir.a as usize];
    let b_op = args[ir.b as usize];
    let a_at = |i: usize, kk: usize| if ir.a_t { at(&a_op, kk, i) } else { at(&a_op, i, kk) };
    let b_at = |kk: usize, j: usize| if ir.b_t { at(&b_op, j, kk) } else { at(&b_op, kk, j) };
    let mut a = vec![0f64; m * k];
    for i in 0..m {
        for kk in 0..k {
            a[i * k + kk] = conv(a_at(i, kk));
        }
    }
    let mut b = vec![0f64; n * k];
    for j in 0..n {
        for kk in 0..k {
            b[j * k + kk] = conv(b_at(kk, j));
        }
    }
    let mut out = vec![0f32; m * n];
    let mut stack = Vec::with_capacity(16);
    for i in 0..m {
        let ar = &a[i * k..(i + 1) * k];
        for j in 0..n {
            let br = &b[j * k..(j + 1) * k];
            let acc: f64 = ar.iter().zip(br).map(|(x, y)| x * y).sum();
            let v = epilogue(ir, args, acc as f32, i, j, &mut stack);
            let idx = match ir.out_layout {
                Layout::RowMajor => i * n + j,
                Layout::ColMajor => j * m + i,
            };
            out[idx] = v;
        }
    }
    out
}

/// One element of the reference, for checking a kernel on a sample of its output.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampledRef {
    /// The product before the epilogue (f64 sum, as in [`gemm`]).
    pub acc: f64,
    /// `sum |a_ik * b_kj|`: how large the terms were, which bounds how much a different
    /// f32 summation order may move the accumulator.
    pub abs_sum: f64,
    /// The reference value: the epilogue applied to `acc` (before output rounding).
    pub value: f32,
}

/// [`gemm`] at the points `(i, j)` only: `points.len()` dot products of length K, so a
/// tuner can check every candidate of a large problem without an O(MNK) host product.
/// What the kernel computes, which for `acc = tf32x3` is a tf32 product (of the split
/// copies at a launch; of the tuner's own operands when the tuner checks it): its
/// operands rounded to tf32.
pub fn gemm_sampled(ir: &GemmIr, args: &[HostOperand<'_>], k: usize, points: &[(usize, usize)]) -> Vec<SampledRef> {
    sampled_products(ir, args, k, points, ir.acc.tf32_products())
}

/// [`gemm_sampled`] with the operands rounded to tf32 where `tf32` says.
fn sampled_products(
    ir: &GemmIr,
    args: &[HostOperand<'_>],
    k: usize,
    points: &[(usize, usize)],
    tf32: bool,
) -> Vec<SampledRef> {
    let conv = |x: f32| if tf32 { round_tf32(x) } else { x } as f64;
    let a_op = args[ir.a as usize];
    let b_op = args[ir.b as usize];
    let a_at = |i: usize, kk: usize| if ir.a_t { at(&a_op, kk, i) } else { at(&a_op, i, kk) };
    let b_at = |kk: usize, j: usize| if ir.b_t { at(&b_op, j, kk) } else { at(&b_op, kk, j) };
    let mut stack = Vec::with_capacity(16);
    points
        .iter()
        .map(|&(i, j)| {
            let (mut acc, mut abs_sum) = (0f64, 0f64);
            for kk in 0..k {
                let p = conv(a_at(i, kk)) * conv(b_at(kk, j));
                acc += p;
                abs_sum += p.abs();
            }
            let value = epilogue(ir, args, acc as f32, i, j, &mut stack);
            SampledRef { acc, abs_sum, value }
        })
        .collect()
}

/// The four corners, `edge` points evenly spaced along the last row and the last column
/// (where ragged-tile bugs show), and `count` pseudo-random elements; every element of
/// an output of at most `count` elements. The one sampler of the tuner and the measuring
/// tools.
pub fn sample_points(m: usize, n: usize, seed: u64, count: usize) -> Vec<(usize, usize)> {
    if m * n <= count {
        return (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).collect();
    }
    let mut p = vec![(0, 0), (0, n - 1), (m - 1, 0), (m - 1, n - 1)];
    let edge = 32;
    p.extend((0..edge).map(|t| (m - 1, t * (n - 1) / (edge - 1))));
    p.extend((0..edge).map(|t| (t * (m - 1) / (edge - 1), n - 1)));
    let mut s = seed | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    p.extend((0..count).map(|_| ((next() % m as u64) as usize, (next() % n as u64) as usize)));
    p
}

/// The reference at a sample of an M×N output ([`sample_points`]): what large outputs
/// are checked against without an O(MNK) host product (`crossgemm bench`, `diagnose`).
#[derive(Clone, Debug, PartialEq)]
pub struct Sampled {
    /// The elements, `(row, column)`.
    pub points: Vec<(usize, usize)>,
    /// The reference at each point.
    pub refs: Vec<SampledRef>,
    /// Each reference value rounded to the kernel's output type, as it would store it.
    pub rounded: Vec<f32>,
}

impl Sampled {
    /// The reference of `ir` over `args` at `count` sampled points of its `m × n` output
    /// (every element when there are at most `count`).
    pub fn new(
        ir: &GemmIr,
        args: &[HostOperand<'_>],
        (m, n, k): (usize, usize, usize),
        seed: u64,
        count: usize,
    ) -> Sampled {
        let points = sample_points(m, n, seed, count);
        // The call's reference, rounded as [`gemm`] rounds (under `acc = tf32x3` the exact
        // product), where [`gemm_sampled`] gives the kernel's.
        let refs = sampled_products(ir, args, k, &points, ir.acc == AccMode::Tf32);
        let rounded = refs
            .iter()
            .map(|r| crate::element::decode(ir.out_dtype, &crate::element::encode(ir.out_dtype, &[r.value]))[0])
            .collect();
        Sampled { points, refs, rounded }
    }

    /// The values of a row-major `? × n` output at the sampled points.
    pub fn gather(&self, got: &[f32], n: usize) -> Vec<f32> {
        self.points.iter().map(|&(i, j)| got[i * n + j]).collect()
    }
}

/// [`gemm_sampled`] at every element, computed on all cores: `m * n` references in
/// row-major order (element `(i, j)` at `i * n + j`, whatever the output layout), for
/// checking a kernel's whole output where an O(MNK) host product is affordable. The
/// operands are gathered first (A by rows, B by columns, tf32-rounded where the IR says
/// so); every host allocation is fallible and an error names its size.
pub fn gemm_full(
    ir: &GemmIr,
    args: &[HostOperand<'_>],
    m: usize,
    n: usize,
    k: usize,
) -> crate::error::Result<Vec<SampledRef>> {
    let tf32 = ir.acc.tf32_products();
    let conv = |x: f32| if tf32 { round_tf32(x) } else { x };
    let a_op = args[ir.a as usize];
    let b_op = args[ir.b as usize];
    let a_at = |i: usize, kk: usize| if ir.a_t { at(&a_op, kk, i) } else { at(&a_op, i, kk) };
    let b_at = |kk: usize, j: usize| if ir.b_t { at(&b_op, j, kk) } else { at(&b_op, kk, j) };
    let mut a = try_vec::<f32>(m.saturating_mul(k), "the host reference's copy of A")?;
    for i in 0..m {
        a.extend((0..k).map(|kk| conv(a_at(i, kk))));
    }
    let mut b = try_vec::<f32>(n.saturating_mul(k), "the host reference's copy of B")?;
    for j in 0..n {
        b.extend((0..k).map(|kk| conv(b_at(kk, j))));
    }
    let zero = SampledRef {
        acc: 0.0,
        abs_sum: 0.0,
        value: 0.0,
    };
    let mut out = try_vec::<SampledRef>(m.saturating_mul(n), "the host reference")?;
    out.resize(m * n, zero);
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get()).clamp(1, 16);
    let rows_per = m.div_ceil(threads).max(1);
    std::thread::scope(|s| {
        for (c, chunk) in out.chunks_mut(rows_per * n.max(1)).enumerate() {
            let (a, b) = (&a, &b);
            s.spawn(move || {
                let mut stack = Vec::with_capacity(16);
                for (r, row) in chunk.chunks_mut(n.max(1)).enumerate() {
                    let i = c * rows_per + r;
                    let ar = &a[i * k..(i + 1) * k];
                    for (j, slot) in row.iter_mut().enumerate() {
                        let br = &b[j * k..(j + 1) * k];
                        let (mut acc, mut abs_sum) = (0f64, 0f64);
                        for (&x, &y) in ar.iter().zip(br) {
                            let p = x as f64 * y as f64;
                            acc += p;
                            abs_sum += p.abs();
                        }
                        let value = epilogue(ir, args, acc as f32, i, j, &mut stack);
                        *slot = SampledRef { acc, abs_sum, value };
                    }
                }
            });
        }
    });
    Ok(out)
}

/// An empty vector with room for `len` elements, or an error naming the bytes.
pub(crate) fn try_vec<T>(len: usize, what: &str) -> crate::error::Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        crate::error::GemmError::Unsupported(format!(
            "{what} needs {} bytes of host memory ({len} elements), which could not be allocated",
            len.saturating_mul(std::mem::size_of::<T>())
        ))
    })?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::{DType, Func, Param};

    /// The same memory seen as the transpose: each matrix's extents exchanged and its
    /// layout flipped (vectors and scalars as they are).
    fn transposed<'a>(args: &[HostOperand<'a>]) -> Vec<HostOperand<'a>> {
        args.iter()
            .map(|op| match *op {
                HostOperand::Matrix {
                    data,
                    rows,
                    cols,
                    layout,
                } => HostOperand::Matrix {
                    data,
                    rows: cols,
                    cols: rows,
                    layout: layout.flip(),
                },
                other => other,
            })
            .collect()
    }

    proptest::proptest! {
        /// [`GemmIr::transposed`] computes the same output memory, bit for bit, from the
        /// same operand memory with M and N exchanged: what the wgmma family's turned
        /// form rests on. Every layout, `.t()`, and a `Row`, a `Col`, a matrix and a
        /// scalar in the epilogue.
        #[test]
        fn the_transposed_kernel_writes_the_same_memory(
            (m, n, k) in (1usize..9, 1usize..9, 1usize..9),
            a_row in proptest::bool::ANY,
            b_row in proptest::bool::ANY,
            (a_t, b_t) in (proptest::bool::ANY, proptest::bool::ANY),
            res_row in proptest::bool::ANY,
            out_row in proptest::bool::ANY,
            seed in 0u32..1000,
        ) {
            let lay = |row| if row { Layout::RowMajor } else { Layout::ColMajor };
            let ir = GemmIr {
                name: "t".into(),
                params: vec![
                    Param::matrix("a", DType::F32, lay(a_row)),
                    Param::matrix("b", DType::F32, lay(b_row)),
                    Param::row("bias", DType::F32),
                    Param::col("scale", DType::F32),
                    Param::matrix("res", DType::F32, lay(res_row)),
                    Param::scalar("alpha"),
                ],
                a: 0,
                a_t,
                b: 1,
                b_t,
                ab_dtype: DType::F32,
                acc: AccMode::F32,
                out_dtype: DType::F32,
                out_layout: lay(out_row),
                // relu((acc + bias) * scale) - alpha * res
                epilogue: vec![
                    EpOp::Acc,
                    EpOp::Param(2),
                    EpOp::Add,
                    EpOp::Param(3),
                    EpOp::Mul,
                    EpOp::Call(Func::Relu),
                    EpOp::Param(5),
                    EpOp::Param(4),
                    EpOp::Mul,
                    EpOp::Sub,
                ],
            };
            let val = |i: usize| ((i as u32 * 7919 + seed) % 61) as f32 / 8.0 - 3.5;
            let data = |len: usize, at: usize| -> Vec<f32> { (0..len).map(|i| val(i * 5 + at)).collect() };
            let (a, b, bias, scale, res) = (data(m * k, 1), data(k * n, 2), data(n, 3), data(m, 4), data(m * n, 5));
            // A is m x k as used, so stored k x m under `.t()`.
            let (ar, ac) = if a_t { (k, m) } else { (m, k) };
            let (br, bc) = if b_t { (n, k) } else { (k, n) };
            let args = [
                HostOperand::Matrix { data: &a, rows: ar, cols: ac, layout: lay(a_row) },
                HostOperand::Matrix { data: &b, rows: br, cols: bc, layout: lay(b_row) },
                HostOperand::Vector(&bias),
                HostOperand::Vector(&scale),
                HostOperand::Matrix { data: &res, rows: m, cols: n, layout: lay(res_row) },
                HostOperand::Scalar(0.75),
            ];
            let plain = gemm(&ir, &args, m, n, k);
            let turned = gemm(&ir.transposed(), &transposed(&args), n, m, k);
            proptest::prop_assert_eq!(
                plain.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                turned.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
        }
    }

    /// The reference against the textbook triple loop on a small bias+relu kernel with
    /// a transposed, column-major B.
    #[test]
    fn matches_a_naive_triple_loop() {
        let (m, n, k) = (5, 7, 3);
        let ir = GemmIr {
            name: "t".into(),
            params: vec![
                Param::matrix("a", DType::F32, Layout::RowMajor),
                Param::matrix("b", DType::F32, Layout::ColMajor),
                Param::row("bias", DType::F32),
                Param::col("s", DType::F32),
            ],
            a: 0,
            a_t: false,
            b: 1,
            b_t: true,
            ab_dtype: DType::F32,
            acc: AccMode::F32,
            out_dtype: DType::F32,
            out_layout: Layout::RowMajor,
            epilogue: vec![
                EpOp::Acc,
                EpOp::Param(2),
                EpOp::Add,
                EpOp::Call(Func::Relu),
                EpOp::Param(3),
                EpOp::Mul,
            ],
        };
        let a: Vec<f32> = (0..m * k).map(|x| (x as f32 * 0.37).sin()).collect();
        // b is stored n x k column-major and used transposed: logical B[kk][j] = b(j, kk).
        let b: Vec<f32> = (0..n * k).map(|x| (x as f32 * 0.11).cos()).collect();
        let bias: Vec<f32> = (0..n).map(|x| x as f32 * 0.1 - 0.3).collect();
        let s: Vec<f32> = (0..m).map(|x| 1.0 + x as f32).collect();
        let args = [
            HostOperand::Matrix {
                data: &a,
                rows: m,
                cols: k,
                layout: Layout::RowMajor,
            },
            HostOperand::Matrix {
                data: &b,
                rows: n,
                cols: k,
                layout: Layout::ColMajor,
            },
            HostOperand::Vector(&bias),
            HostOperand::Vector(&s),
        ];
        let got = gemm(&ir, &args, m, n, k);
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0.0f64;
                for kk in 0..k {
                    acc += a[i * k + kk] as f64 * b[kk * n + j] as f64;
                }
                let want = (acc as f32 + bias[j]).max(0.0) * s[i];
                assert!(
                    (got[i * n + j] - want).abs() < 1e-6,
                    "({i},{j}) {} vs {want}",
                    got[i * n + j]
                );
            }
        }
    }

    /// The sampled reference agrees with the full one wherever it is asked.
    #[test]
    fn sampled_matches_full() {
        let (m, n, k) = (6, 4, 9);
        let ir = GemmIr {
            name: "t".into(),
            params: vec![
                Param::matrix("a", DType::F32, Layout::ColMajor),
                Param::matrix("b", DType::F32, Layout::RowMajor),
                Param::col("bias", DType::F32),
            ],
            a: 0,
            a_t: false,
            b: 1,
            b_t: false,
            ab_dtype: DType::F32,
            acc: AccMode::F32,
            out_dtype: DType::F32,
            out_layout: Layout::ColMajor,
            epilogue: vec![EpOp::Acc, EpOp::Param(2), EpOp::Sub, EpOp::Call(Func::Relu)],
        };
        let a: Vec<f32> = (0..m * k).map(|x| (x as f32 * 0.7).sin()).collect();
        let b: Vec<f32> = (0..k * n).map(|x| (x as f32 * 0.3).cos()).collect();
        let bias: Vec<f32> = (0..m).map(|x| x as f32 * 0.05).collect();
        let args = [
            HostOperand::Matrix {
                data: &a,
                rows: m,
                cols: k,
                layout: Layout::ColMajor,
            },
            HostOperand::Matrix {
                data: &b,
                rows: k,
                cols: n,
                layout: Layout::RowMajor,
            },
            HostOperand::Vector(&bias),
        ];
        let full = gemm(&ir, &args, m, n, k);
        let points: Vec<(usize, usize)> = (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).collect();
        let sampled = gemm_sampled(&ir, &args, k, &points);
        for (&(i, j), s) in points.iter().zip(&sampled) {
            assert_eq!(s.value, full[j * m + i], "({i},{j})");
            assert!(s.abs_sum >= s.acc.abs());
        }
    }

    /// The full reference is the sampled one at every element, in row-major order, for
    /// either output layout and a transposed A.
    #[test]
    fn full_matches_sampled() {
        let (m, n, k) = (7, 5, 33);
        for (out_layout, a_t) in [(Layout::RowMajor, false), (Layout::ColMajor, true)] {
            let ir = GemmIr {
                name: "t".into(),
                params: vec![
                    Param::matrix("a", DType::F32, Layout::RowMajor),
                    Param::matrix("b", DType::F32, Layout::ColMajor),
                    Param::row("bias", DType::F32),
                ],
                a: 0,
                a_t,
                b: 1,
                b_t: false,
                ab_dtype: DType::F32,
                acc: AccMode::Tf32,
                out_dtype: DType::F32,
                out_layout,
                epilogue: vec![EpOp::Acc, EpOp::Param(2), EpOp::Add, EpOp::Call(Func::Gelu)],
            };
            let a: Vec<f32> = (0..m * k).map(|x| (x as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..k * n).map(|x| (x as f32 * 0.11).cos()).collect();
            let bias: Vec<f32> = (0..n).map(|x| x as f32 * 0.1 - 0.3).collect();
            let (ar, ac) = if a_t { (k, m) } else { (m, k) };
            let args = [
                HostOperand::Matrix {
                    data: &a,
                    rows: ar,
                    cols: ac,
                    layout: Layout::RowMajor,
                },
                HostOperand::Matrix {
                    data: &b,
                    rows: k,
                    cols: n,
                    layout: Layout::ColMajor,
                },
                HostOperand::Vector(&bias),
            ];
            let full = gemm_full(&ir, &args, m, n, k).unwrap();
            let points: Vec<(usize, usize)> = (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).collect();
            assert_eq!(full, gemm_sampled(&ir, &args, k, &points), "{out_layout:?}");
        }
        assert!(try_vec::<u64>(usize::MAX / 4, "x")
            .unwrap_err()
            .to_string()
            .contains("bytes"));
    }

    #[test]
    fn tf32_rounding_keeps_ten_mantissa_bits() {
        assert_eq!(round_tf32(1.0), 1.0);
        let x = 1.0 + f32::EPSILON * 3.0;
        assert_eq!(round_tf32(x), 1.0);
        assert_eq!(round_tf32(1.0 + 2f32.powi(-10)), 1.0 + 2f32.powi(-10));
    }
}
