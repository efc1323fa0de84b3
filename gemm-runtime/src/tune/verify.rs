//! What a candidate is checked against, and the rule for one element.
//!
//! Candidates run on the tuner's own operands ([`super::operands`]). A [`Plan`] fixes,
//! once per tuning run (or variant check), how their outputs are judged:
//!
//! - **full** where the host can afford the whole O(MNK) reference (M·N·K up to
//!   [`FULL_MACS`], M·N up to 2^22): every element of every candidate against it;
//! - **sampled** otherwise: [`sample_points`] (corners, last row and column, and up to
//!   16384 random elements, fewer for long K) against the host reference, plus, by
//!   [`super::candidate`], the whole output against a trusted device result.
//!
//! The element rule ([`Plan::element_ok`]) is the test suite's `assert_close` made
//! scale-aware: two output ulps of the reference, plus the accumulator's summation-order
//! error (`acc_eps·(√K + 1)` for terms of magnitude 1/4, scaled by the actual mean
//! |term| and carried through the kernel's own epilogue). With the tuner's finite
//! operands a non-finite value is only right where the reference is the same infinity
//! (an epilogue that overflows the output type); a NaN never passes, on either side.

use super::operands::{self, Operands};
use super::options::Inject;
use crate::call::Call;
use crate::element::decode;
use crate::error::Result;
use crate::reference::{self, sample_points, HostOperand, SampledRef};
use gemm_core::{DType, GemmIr, Layout};

/// Largest M·N·K whose full host reference a tuning run computes: 2^27 multiply-adds,
/// 0.26-0.41 s on the two cores of the CI machine (measured at 512³, 724²×256,
/// 1024²×128, 2048²×32), once per run; 8192 sampled points cost 2-40 ms there.
pub(crate) const FULL_MACS: u64 = 1 << 27;
/// Largest output whose full host reference a tuning run keeps (24 bytes an element).
const FULL_ELEMS: u64 = 1 << 22;

/// `acc_eps` for tf32 accumulation: 2^-10 (tests/common's `TF32_ACC_EPS`). A kernel may
/// round operands to tf32 differently from the reference (PoCL multiplies in full f32;
/// ties differ), which moves each product by a relative e_a + e_b (|e| <= u = 2^-11, rms
/// u/√3 together); over K independent terms that is σ ≈ 0.58·u·rms|ab|·√K. The
/// tolerance below is `acc_eps·(√K + 1)·4·mean|ab|`; for the tuner's operands (and the
/// suite's) rms|ab| ≈ 1.3·mean|ab|, so 2^-10 gives 8·u·mean|ab|·√K ≈ 10.6σ: no false
/// failure over millions of elements (the largest of 10^7 Gaussian errors is ~5.3σ),
/// while the 2e-3 it replaces allowed ~21σ.
pub(crate) const TF32_ACC_EPS: f64 = 1.0 / 1024.0;
/// `acc_eps` for f32 accumulation (the suite's, calibrated on PoCL and CUDA).
const F32_ACC_EPS: f64 = 1e-5;

/// How a plan judges outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Every element against the host reference.
    Full,
    /// Sampled elements against the host reference; the whole output against a trusted
    /// device result.
    Sampled,
}

/// The device-side comparison of two outputs: `|a - b| <= rel·max(|a|, |b|) + abs`
/// where both are finite; else only identical infinities agree.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Filter {
    pub(crate) rel: f32,
    pub(crate) abs: f32,
}

impl Filter {
    /// The rule the device kernel applies (see `compare.rs`), for the host fallback.
    pub(crate) fn agree(&self, a: f32, b: f32) -> bool {
        if a.is_finite() && b.is_finite() {
            (a - b).abs() <= self.rel * a.abs().max(b.abs()) + self.abs
        } else {
            a == b && !a.is_nan()
        }
    }
}

/// The tuner's operands for one call and what outputs are checked against.
pub(crate) struct Plan {
    pub(crate) ops: Operands,
    pub(crate) mode: Mode,
    pub(crate) ir: &'static GemmIr,
    pub(crate) spec: &'static crate::spec::KernelSpec,
    pub(crate) m: usize,
    pub(crate) n: usize,
    pub(crate) k: usize,
    /// Sampled mode: the points (the same in every checked product); full mode: empty.
    pub(crate) points: Vec<(usize, usize)>,
    /// The products of a batch checked against the reference, each with its reference:
    /// every product at every element, row-major (full mode), or at the points
    /// ([`sampled_products`]: every product while the host's work allows, else the
    /// first, the last and evenly spaced ones between; the whole-output comparison with
    /// the trusted candidate covers the rest).
    checked: Vec<(usize, Vec<SampledRef>)>,
    /// Products the call computes.
    pub(crate) batch: usize,
    /// The device-side comparison's tolerance.
    pub(crate) filter: Filter,
}

/// Whether `m × n × k` gets the full host reference (`limit`: [`FULL_MACS`] unless a
/// test lowers it).
pub(crate) fn full_mode(m: usize, n: usize, k: usize, limit: u64) -> bool {
    let (m, n, k) = (m as u64, n as u64, k as u64);
    m.saturating_mul(n).saturating_mul(k.max(1)) <= limit
        && m.saturating_mul(n) <= FULL_ELEMS
        && (m + n).saturating_mul(k) <= 1 << 24
}

/// Random points to check for a product of depth `k`: ~2^25 host multiply-adds in all.
pub(crate) fn sample_count(k: usize) -> usize {
    ((1usize << 25) / k.max(1)).clamp(512, 16384)
}

/// Host multiply-adds the sampled check of a batch may take: the points of every
/// checked product.
const BATCH_SAMPLE_MACS: usize = 1 << 27;

/// The points per product and the products a sampled check of `batch` products of depth
/// `k` takes: [`sample_count`] points for a single product; for a batch, fewer points (at
/// least 512) so that every product is checked within [`BATCH_SAMPLE_MACS`]; where 512
/// points of every product would exceed it, the first, the last and evenly spaced
/// products between. A fault every candidate shares (a batch stride, say) in a product no
/// one checks against the reference would pass the whole-output comparison: every
/// candidate agrees.
pub(crate) fn sampled_products(k: usize, batch: usize) -> (usize, Vec<usize>) {
    let k = k.max(1);
    let batch = batch.max(1);
    let points = (BATCH_SAMPLE_MACS / (k * batch)).clamp(512, sample_count(k));
    let most = (BATCH_SAMPLE_MACS / (k * points)).max(3);
    let products = if batch <= most {
        (0..batch).collect()
    } else {
        let mut v: Vec<usize> = (0..most).map(|i| i * (batch - 1) / (most - 1)).collect();
        v.dedup();
        v
    };
    (points, products)
}

impl Plan {
    /// Uploads the tuner's operands for `call` and computes the reference: full where
    /// [`full_mode`] says so, else at [`sample_points`] (a test's `inject` may move the
    /// limit or the count). `trust`: the
    /// sampled mode keeps a second output (the trusted one), for the memory check.
    pub(crate) fn new(call: &Call<'_, '_>, inject: &Inject, trust: bool) -> Result<Plan> {
        let (m, n, k) = call.mnk();
        let ir = call.ir();
        let batch = call.problem.batch.max(1);
        // Full mode covers every product of a batch, so its work is the whole batch's.
        let mode = if full_mode(m.saturating_mul(batch), n, k, inject.full_limit()) {
            Mode::Full
        } else {
            Mode::Sampled
        };
        let outputs = if mode == Mode::Sampled && trust { 2 } else { 1 };
        operands::check_device_memory(call, outputs, "checking")?;
        let choices = operands::scalar_choices(call);
        let mut ops = Operands::new(call, choices[0].clone())?;
        let (count, sampled_checked) = sampled_products(k, batch);
        let points = sample_points(m, n, call.spec.ir_hash, inject.sample_count.unwrap_or(count));
        // The first scalar choice whose reference is finite and depends on the product at
        // a quarter of the points or more; else the best of them.
        // (sensitivity, scalars, references at the points)
        type Choice = ((bool, usize), Vec<f32>, Vec<SampledRef>);
        let mut best: Option<Choice> = None;
        for s in choices {
            let host = ops.host_operands(ir, &s, 0);
            let refs = reference::gemm_sampled(ir, &host, k, &points);
            let score = sensitivity(ir, &host, k, &points, &refs);
            let good = score.0 && score.1 * 4 >= points.len();
            if best.as_ref().is_none_or(|(b, _, _)| score > *b) {
                best = Some((score, s, refs));
            }
            if good {
                break;
            }
        }
        let (_, scalars, sampled) = best.expect("at least one scalar choice");
        ops.scalars = scalars;
        let host = ops.host_operands(ir, &ops.scalars, 0);
        let filter = filter_for(ir, &host, k, &points, &sampled);
        drop(host);
        let products: Vec<usize> = match mode {
            Mode::Full => (0..batch).collect(),
            Mode::Sampled => sampled_checked,
        };
        let mut checked = Vec::new();
        for b in products {
            let host = ops.host_operands(ir, &ops.scalars, b);
            checked.push((
                b,
                match mode {
                    Mode::Full => reference::gemm_full(ir, &host, m, n, k)?,
                    Mode::Sampled if b == 0 => sampled.clone(),
                    Mode::Sampled => reference::gemm_sampled(ir, &host, k, &points),
                },
            ));
        }
        let points = if mode == Mode::Full { Vec::new() } else { points };
        Ok(Plan {
            ops,
            mode,
            ir,
            spec: call.spec,
            m,
            n,
            k,
            points,
            checked,
            batch,
            filter,
        })
    }

    /// Product `b`'s host operands (ours, with the chosen scalars).
    pub(crate) fn host(&self, b: usize) -> Vec<HostOperand<'_>> {
        self.ops.host_operands(self.ir, &self.ops.scalars, b)
    }

    /// Elements of one product's output.
    pub(crate) fn product_len(&self) -> usize {
        self.m * self.n
    }

    /// Storage indices of the sampled points in every checked product, in the order
    /// [`Plan::check_points`] takes their values.
    pub(crate) fn point_indices(&self) -> Vec<usize> {
        self.checked
            .iter()
            .flat_map(|(b, _)| {
                self.points
                    .iter()
                    .map(move |&(i, j)| b * self.product_len() + self.index(i, j))
            })
            .collect()
    }

    /// Which products are checked against the reference, for the report.
    pub(crate) fn checked_products(&self) -> String {
        match (self.batch, self.checked.len()) {
            (1, _) => String::new(),
            (b, c) if c == b => format!(" of each of the {b} products"),
            (b, c) if c > 8 => format!(" in {c} of the {b} products, evenly spaced from the first to the last"),
            (b, _) => format!(
                " in products {} of {b}",
                self.checked
                    .iter()
                    .map(|(p, _)| p.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// Storage index of element `(i, j)` of the output.
    pub(crate) fn index(&self, i: usize, j: usize) -> usize {
        match self.ir.out_layout {
            Layout::RowMajor => i * self.n + j,
            Layout::ColMajor => j * self.m + i,
        }
    }

    /// `(i, j)` of storage index `idx`.
    pub(crate) fn coords(&self, idx: usize) -> (usize, usize) {
        match self.ir.out_layout {
            Layout::RowMajor => (idx / self.n, idx % self.n),
            Layout::ColMajor => (idx % self.m, idx / self.m),
        }
    }

    /// Whether `got` is right for element `(i, j)` whose reference is `r`; `Err` says why
    /// not.
    pub(crate) fn element_ok(
        &self,
        host: &[HostOperand<'_>],
        r: &SampledRef,
        got: f32,
        i: usize,
        j: usize,
        stack: &mut Vec<f32>,
    ) -> std::result::Result<(), String> {
        element_ok(self.ir, host, self.k, r, got, i, j, stack)
    }

    /// Checks a whole output (`bytes` in the output's dtype and layout, every product of
    /// the batch) against the full reference of each checked product. Full mode only.
    pub(crate) fn check_full(&self, bytes: &[u8]) -> std::result::Result<(), String> {
        debug_assert_eq!(self.mode, Mode::Full);
        let vals = decode(self.ir.out_dtype, bytes);
        let mut stack = Vec::new();
        let mut bad = Vec::new();
        let mut count = 0usize;
        for (b, refs) in &self.checked {
            let host = self.host(*b);
            let base = b * self.product_len();
            for i in 0..self.m {
                for j in 0..self.n {
                    let got = vals[base + self.index(i, j)];
                    if let Err(why) = self.element_ok(&host, &refs[i * self.n + j], got, i, j, &mut stack) {
                        count += 1;
                        if bad.len() < 3 {
                            bad.push(self.in_product(*b, why));
                        }
                    }
                }
            }
        }
        if count == 0 {
            return Ok(());
        }
        Err(format!(
            "wrong result at {count} of {} elements (every element{} checked against the host reference); first: {}",
            self.m * self.n * self.checked.len(),
            self.checked_products(),
            bad.join("; ")
        ))
    }

    /// `why` of product `b`, naming the product in a batch.
    pub(crate) fn in_product(&self, b: usize, why: String) -> String {
        if self.batch > 1 {
            format!("product {b}: {why}")
        } else {
            why
        }
    }

    /// Checks the values at [`Plan::point_indices`] (in that order: the points of each
    /// checked product). Sampled mode only.
    pub(crate) fn check_points(&self, got: &[f32]) -> std::result::Result<(), String> {
        let mut stack = Vec::new();
        let mut bad = Vec::new();
        let mut count = 0usize;
        for ((b, refs), got) in self.checked.iter().zip(got.chunks(self.points.len().max(1))) {
            let host = self.host(*b);
            for ((&(i, j), r), &g) in self.points.iter().zip(refs).zip(got) {
                if let Err(why) = self.element_ok(&host, r, g, i, j, &mut stack) {
                    count += 1;
                    if bad.len() < 3 {
                        bad.push(self.in_product(*b, why));
                    }
                }
            }
        }
        if count == 0 {
            return Ok(());
        }
        Err(format!(
            "wrong result at {count} of {} sampled elements{}; first: {}",
            self.points.len() * self.checked.len(),
            self.checked_products(),
            bad.join("; ")
        ))
    }

    /// Most disputed elements settled against the host reference per comparison:
    /// ~2^25 multiply-adds.
    pub(crate) fn arbitration_budget(&self) -> usize {
        ((1usize << 25) / self.k.max(1)).clamp(64, 4096)
    }
}

/// The element rule of the module doc.
#[allow(clippy::too_many_arguments)]
pub(crate) fn element_ok(
    ir: &GemmIr,
    host: &[HostOperand<'_>],
    k: usize,
    r: &SampledRef,
    got: f32,
    i: usize,
    j: usize,
    stack: &mut Vec<f32>,
) -> std::result::Result<(), String> {
    // The reference rounded to the output type, as the kernel stores it.
    let want = round_out(ir.out_dtype, r.value);
    if !got.is_finite() || !want.is_finite() {
        if got == want && !want.is_nan() {
            return Ok(());
        }
        return Err(format!("({i},{j}): got {got}, reference {want} (non-finite)"));
    }
    if got == want {
        return Ok(());
    }
    // The tolerance's parts that need no epilogue evaluation: most right answers pass
    // here, so that a whole-output check costs little more than a comparison.
    let e = eps(ir.out_dtype);
    let cheap = 2.0 * e * want.abs() + 4.0 * f32::EPSILON * want.abs() + e * 1e-3;
    if (got - want).abs() <= cheap {
        return Ok(());
    }
    let tol = tolerance(ir, host, k, r, want, i, j, stack);
    if (got - want).abs() <= tol {
        Ok(())
    } else {
        Err(format!("({i},{j}): got {got}, reference {want}, tolerance {tol:.3e}"))
    }
}

/// `v` rounded to `dtype` (nearest even), as a kernel stores it.
fn round_out(dtype: DType, v: f32) -> f32 {
    match dtype {
        DType::F32 => v,
        DType::F16 => half::f16::from_f32(v).to_f32(),
        DType::Bf16 => half::bf16::from_f32(v).to_f32(),
    }
}

fn eps(d: DType) -> f32 {
    match d {
        DType::F32 => f32::EPSILON,
        DType::F16 => 2f32.powi(-10),
        DType::Bf16 => 2f32.powi(-7),
    }
}

fn acc_eps(ir: &GemmIr) -> f64 {
    // A tf32x3 kernel is a tf32 kernel: it is checked on the tuner's own operands, which
    // are not split ones.
    if ir.acc.tf32_products() {
        TF32_ACC_EPS
    } else {
        F32_ACC_EPS
    }
}

/// How far from `want` (the rounded reference of element `(i, j)`) a right answer may be.
#[allow(clippy::too_many_arguments)]
fn tolerance(
    ir: &GemmIr,
    host: &[HostOperand<'_>],
    k: usize,
    r: &SampledRef,
    want: f32,
    i: usize,
    j: usize,
    stack: &mut Vec<f32>,
) -> f32 {
    let e = eps(ir.out_dtype);
    let abs = absolute_part(ir, host, k, r, i, j, stack);
    2.0 * e * want.abs() + 4.0 * f32::EPSILON * want.abs() + abs
}

/// The part of [`tolerance`] that does not scale with |want|: the summation-order spread
/// through the epilogue, the epilogue's own f32 error, and a floor.
fn absolute_part(
    ir: &GemmIr,
    host: &[HostOperand<'_>],
    k: usize,
    r: &SampledRef,
    i: usize,
    j: usize,
    stack: &mut Vec<f32>,
) -> f32 {
    let e = eps(ir.out_dtype);
    let delta = acc_eps(ir) * ((k as f64).sqrt() + 1.0) * 4.0 * (r.abs_sum / k.max(1) as f64);
    let mut through = |d: f64| {
        let v = reference::epilogue(ir, host, (r.acc + d) as f32, i, j, stack);
        (v - r.value).abs()
    };
    let spread = through(delta).max(through(-delta));
    // The epilogue's own f32 evaluation (tanh, exp, erf on the device) errs by a few
    // ulps of its intermediates, which scale with |acc|: gelu(-15) is -1.7e-7 on a
    // device and -0 on the host, both right.
    let own = 4.0 * f32::EPSILON * (r.acc.abs() as f32 + 1.0);
    spread + own + e * 1e-3
}

/// (every reference finite, how many points would notice one average product term more
/// in the accumulator): whether a check at these points tests the product at all.
fn sensitivity(
    ir: &GemmIr,
    host: &[HostOperand<'_>],
    k: usize,
    points: &[(usize, usize)],
    refs: &[SampledRef],
) -> (bool, usize) {
    let mut stack = Vec::new();
    let mut finite = true;
    let mut sensitive = 0;
    for (&(i, j), r) in points.iter().zip(refs) {
        let want = round_out(ir.out_dtype, r.value);
        if !want.is_finite() {
            finite = false;
            continue;
        }
        let term = r.abs_sum / k.max(1) as f64;
        if term == 0.0 {
            continue;
        }
        let moved = round_out(
            ir.out_dtype,
            reference::epilogue(ir, host, (r.acc + term) as f32, i, j, &mut stack),
        );
        let tol = tolerance(ir, host, k, r, want, i, j, &mut stack);
        if (moved - want).abs() > tol {
            sensitive += 1;
        }
    }
    (finite, sensitive)
}

/// The device comparison's tolerance: both outputs may be [`tolerance`] away from the
/// reference, so twice its relative part, and four times the largest absolute part seen
/// at the sampled points (twice for two kernels, twice for the elements not sampled).
/// Elements past it are only disputed: the host reference settles them.
fn filter_for(
    ir: &GemmIr,
    host: &[HostOperand<'_>],
    k: usize,
    points: &[(usize, usize)],
    refs: &[SampledRef],
) -> Filter {
    let e = eps(ir.out_dtype);
    let mut stack = Vec::new();
    let abs = points
        .iter()
        .zip(refs)
        .map(|(&(i, j), r)| absolute_part(ir, host, k, r, i, j, &mut stack))
        .filter(|a| a.is_finite())
        .fold(e * 1e-3, f32::max);
    Filter {
        rel: 2.0 * (2.0 * e + 4.0 * f32::EPSILON),
        abs: 4.0 * abs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::encode;
    use gemm_core::{AccMode, EpOp, Func, Param};

    /// Row-major `a` (m × k) and `b` (k × n) and the scalar `alpha`: the operands of
    /// the test kernels here, whose third parameter is a scalar.
    fn row_major_ops<'a>(a: &'a [f32], b: &'a [f32], m: usize, n: usize, k: usize, alpha: f32) -> [HostOperand<'a>; 3] {
        let matrix = |data, rows, cols| HostOperand::Matrix {
            data,
            rows,
            cols,
            layout: Layout::RowMajor,
        };
        [matrix(a, m, k), matrix(b, k, n), HostOperand::Scalar(alpha)]
    }

    #[test]
    fn samples_cover_edges_and_stay_in_range() {
        let all = sample_points(3, 5, 1, 512);
        assert_eq!(all.len(), 15);
        let (m, n) = (5000, 3);
        let p = sample_points(m, n, 42, 512);
        assert!(p.len() >= 512 + 4);
        assert!(p.iter().all(|&(i, j)| i < m && j < n));
        for corner in [(0, 0), (0, n - 1), (m - 1, 0), (m - 1, n - 1)] {
            assert!(p.contains(&corner));
        }
        assert!(p.iter().filter(|&&(i, _)| i == m - 1).count() >= 32);
        assert_eq!(sample_points(m, n, 42, 512), p, "deterministic");
        assert_eq!(sample_count(4096), 8192);
        assert_eq!(sample_count(1), 16384);
        assert_eq!(sample_count(1 << 20), 512);
        // A single product keeps its points; a batch checks every product with fewer,
        // down to 512 each; past that, evenly spaced products from the first to the last.
        assert_eq!(sampled_products(4096, 1), (8192, vec![0]));
        assert_eq!(sampled_products(128, 32), (16384, (0..32).collect::<Vec<_>>()));
        assert_eq!(sampled_products(2048, 8), (8192, (0..8).collect::<Vec<_>>()));
        let (points, products) = sampled_products(4096, 1024);
        assert_eq!(points, 512);
        assert_eq!(products.len(), 64);
        assert_eq!((products[0], products[63]), (0, 1023));
        assert!(products.windows(2).all(|w| w[0] < w[1]));
        for (k, batch) in [(1, 1), (1 << 20, 7), (4096, 1 << 20), (64, 3)] {
            let (points, products) = sampled_products(k, batch);
            // Within the batch budget, or no more than the three products of before.
            let macs = points * k * products.len();
            assert!(
                macs <= BATCH_SAMPLE_MACS.max(3 * sample_count(k) * k),
                "{k} {batch}: {macs}"
            );
            assert!(products.len() >= batch.min(3) && products[0] == 0 && *products.last().unwrap() == batch - 1);
        }
    }

    #[test]
    fn full_mode_is_for_small_products() {
        assert!(full_mode(512, 512, 512, FULL_MACS));
        assert!(!full_mode(512, 512, 513, FULL_MACS));
        assert!(!full_mode(4096, 4096, 1, FULL_MACS), "16M outputs");
        assert!(!full_mode(1, 1, 1 << 25, FULL_MACS), "long K");
        assert!(!full_mode(64, 64, 64, 1000), "a test's lower limit");
        assert!(!full_mode(usize::MAX, 2, 2, FULL_MACS), "no overflow");
    }

    #[test]
    fn filter_rule() {
        let f = Filter { rel: 0.01, abs: 0.001 };
        assert!(f.agree(1.0, 1.005));
        assert!(!f.agree(1.0, 1.02));
        assert!(f.agree(0.0, 0.0009));
        assert!(f.agree(f32::INFINITY, f32::INFINITY));
        assert!(!f.agree(f32::INFINITY, f32::NEG_INFINITY));
        assert!(!f.agree(f32::INFINITY, 1e30));
        assert!(!f.agree(f32::NAN, f32::NAN));
        assert!(!f.agree(1.0, f32::NAN));
    }

    fn ir(out: DType, acc: AccMode, epilogue: Vec<EpOp>) -> GemmIr {
        GemmIr {
            name: "t".into(),
            params: vec![
                Param::matrix("a", DType::F32, Layout::RowMajor),
                Param::matrix("b", DType::F32, Layout::RowMajor),
                Param::scalar("alpha"),
            ],
            a: 0,
            a_t: false,
            b: 1,
            b_t: false,
            ab_dtype: DType::F32,
            acc,
            out_dtype: out,
            out_layout: Layout::ColMajor,
            epilogue,
        }
    }

    /// Checks `vals` (f32 values in column-major order) at every element of an m×n
    /// output with the element rule.
    fn check(g: &GemmIr, ops: &[HostOperand<'_>], vals: &[f32], m: usize, n: usize, k: usize) -> usize {
        let points: Vec<(usize, usize)> = (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).collect();
        let refs = reference::gemm_sampled(g, ops, k, &points);
        let stored = decode(g.out_dtype, &encode(g.out_dtype, vals));
        let mut stack = Vec::new();
        points
            .iter()
            .zip(&refs)
            .filter(|(&(i, j), r)| element_ok(g, ops, k, r, stored[j * m + i], i, j, &mut stack).is_err())
            .count()
    }

    /// The check passes what a kernel with another summation order produces, and fails
    /// unwritten (NaN), stale (zero) and slightly-off-by-a-term outputs.
    #[test]
    fn verification_tolerance() {
        let (m, n, k) = (4, 3, 200);
        let a: Vec<f32> = (0..m * k)
            .map(|x| ((x * 7919 % 1000) as f32 / 500.0 - 1.0) * 100.0)
            .collect();
        let b: Vec<f32> = (0..k * n).map(|x| (x * 104729 % 1000) as f32 / 500.0 - 1.0).collect();
        let scaled = ir(
            DType::F32,
            AccMode::F32,
            vec![EpOp::Param(2), EpOp::Acc, EpOp::Mul, EpOp::Call(Func::Gelu)],
        );
        for (g, alpha) in [
            (ir(DType::F32, AccMode::F32, vec![EpOp::Acc]), 1.0),
            (ir(DType::F16, AccMode::F32, vec![EpOp::Acc]), 1.0),
            (scaled, 0.01),
        ] {
            let ops = row_major_ops(&a, &b, m, n, k, alpha);
            // A kernel's f32 sum in reverse order, stored in the output type.
            let mut vals = vec![0f32; m * n];
            for i in 0..m {
                for j in 0..n {
                    let acc: f32 = (0..k).rev().map(|kk| a[i * k + kk] * b[kk * n + j]).sum();
                    vals[j * m + i] = reference::epilogue(&g, &ops, acc, i, j, &mut Vec::new());
                }
            }
            assert_eq!(check(&g, &ops, &vals, m, n, k), 0);
            let mut nan = vals.clone();
            nan[5] = f32::NAN;
            assert_eq!(check(&g, &ops, &nan, m, n, k), 1);
            // Stale zeros: wrong nearly everywhere (gelu(0.01 * acc) is near 0 at a few).
            assert!(
                check(&g, &ops, &vec![0.0; m * n], m, n, k) >= m * n - 2,
                "{:?}",
                g.epilogue
            );
            // The largest product term missing from one element.
            let mut off = vals.clone();
            let (i, j) = (2, 1);
            let term = |kk: usize| a[i * k + kk] * b[kk * n + j];
            let big = (0..k).max_by(|&x, &y| term(x).abs().total_cmp(&term(y).abs())).unwrap();
            let acc: f32 = (0..k).filter(|&kk| kk != big).map(term).sum();
            off[j * m + i] = reference::epilogue(&g, &ops, acc, i, j, &mut Vec::new());
            assert_eq!(check(&g, &ops, &off, m, n, k), 1, "{:?}", g.epilogue);
        }
    }

    /// Non-finite values: an infinity the epilogue produces passes only as itself; NaN
    /// never passes, not even against a NaN reference.
    #[test]
    fn non_finite_values() {
        let (m, n, k) = (2, 2, 3);
        let a = vec![1.0f32; m * k];
        let b = vec![1.0f32; k * n];
        let ops = |alpha: f32| row_major_ops(&a, &b, m, n, k, alpha);
        // acc / alpha with alpha = 0: +inf everywhere; 0 * inf: NaN.
        let div = ir(DType::F32, AccMode::F32, vec![EpOp::Acc, EpOp::Param(2), EpOp::Div]);
        let o = ops(0.0);
        assert_eq!(check(&div, &o, &[f32::INFINITY; 4], m, n, k), 0);
        assert_eq!(check(&div, &o, &[f32::NEG_INFINITY; 4], m, n, k), 4);
        assert_eq!(check(&div, &o, &[f32::NAN; 4], m, n, k), 4);
        assert_eq!(check(&div, &o, &[3.0; 4], m, n, k), 4);
        let nan = ir(
            DType::F32,
            AccMode::F32,
            vec![EpOp::Acc, EpOp::Param(2), EpOp::Div, EpOp::Lit(0.0), EpOp::Mul],
        );
        assert_eq!(
            check(&nan, &o, &[f32::NAN; 4], m, n, k),
            4,
            "a NaN reference checks nothing"
        );
        // Finite references: inf and NaN are wrong.
        let plain = ir(DType::F16, AccMode::F32, vec![EpOp::Acc]);
        let o = ops(1.0);
        assert_eq!(check(&plain, &o, &[3.0; 4], m, n, k), 0);
        assert_eq!(check(&plain, &o, &[f32::INFINITY, 3.0, f32::NAN, 3.0], m, n, k), 2);
    }

    /// tf32's acc_eps is 2^-10, and it is what the tolerance uses.
    #[test]
    fn tf32_tolerance_is_the_derived_bound() {
        let g = ir(DType::F32, AccMode::Tf32, vec![EpOp::Acc]);
        assert_eq!(acc_eps(&g), 1.0 / 1024.0);
        let k = 1024;
        let a = vec![0.5f32; k];
        let b = vec![0.5f32; k];
        let ops = row_major_ops(&a, &b, 1, 1, k, 1.0);
        let r = reference::gemm_sampled(&g, &ops, k, &[(0, 0)])[0];
        // Terms of 1/4: delta = 2^-10 * (32 + 1) * 4 * 0.25 = 0.0322.
        let abs = absolute_part(&g, &ops, k, &r, 0, 0, &mut Vec::new());
        assert!((abs - 0.0322).abs() < 1e-3, "{abs}");
        let want = r.value;
        let mut st = Vec::new();
        assert!(element_ok(&g, &ops, k, &r, want + 0.03, 0, 0, &mut st).is_ok());
        assert!(element_ok(&g, &ops, k, &r, want + 0.06, 0, 0, &mut st).is_err());
    }

    /// A scalar that zeroes the product (alpha = 0) leaves nothing to check: the
    /// sensitivity count says so.
    #[test]
    fn sensitivity_sees_a_vacuous_epilogue() {
        let (m, n, k) = (8, 8, 16);
        let a: Vec<f32> = (0..m * k).map(|x| (x as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..k * n).map(|x| (x as f32 * 0.11).cos()).collect();
        let g = ir(DType::F32, AccMode::F32, vec![EpOp::Param(2), EpOp::Acc, EpOp::Mul]);
        let points: Vec<(usize, usize)> = (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).collect();
        for (alpha, want) in [(0.0, 0), (1.0, m * n)] {
            let ops = row_major_ops(&a, &b, m, n, k, alpha);
            let refs = reference::gemm_sampled(&g, &ops, k, &points);
            assert_eq!(sensitivity(&g, &ops, k, &points, &refs), (true, want), "alpha {alpha}");
        }
    }
}
