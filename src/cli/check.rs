//! How the bench and `diagnose` judge an output: NaN-poisoned buffers (an element a
//! kernel leaves unwritten cannot pass), one error measure, and the host reference at a
//! sample of the output.

use super::operands::Inputs;
use crossgemm::reference::{HostOperand, Sampled};
use crossgemm::{Device, Element, GemmError, Layout, Matrix};

/// Largest |got - want| / max(|want|, mean |want|): relative where the value is of
/// typical size, and scaled by the typical size where it is near zero (ReLU zeros, or
/// sums that cancel), where a plain relative error would only measure cancellation.
///
/// Any non-finite value on either side is an infinite error: NaN against anything (NaN
/// included: an unwritten element of a NaN-poisoned output must not agree with another),
/// Inf against anything (Inf included: the inputs are in [-1, 1), so an infinity is an
/// overflow, not a value), and outputs of different lengths. The mean is over the
/// finite values, so one infinity cannot turn every other error into 0.
pub(super) fn max_rel_err(got: &[f32], want: &[f32]) -> f64 {
    if got.len() != want.len() {
        return f64::INFINITY;
    }
    let finite = want.iter().filter(|w| w.is_finite());
    let (sum, count) = finite.fold((0.0f64, 0usize), |(s, c), w| (s + w.abs() as f64, c + 1));
    let mean = sum / count.max(1) as f64;
    let floor = if mean > 0.0 { mean } else { 1.0 };
    got.iter()
        .zip(want)
        .map(|(&g, &w)| {
            if !g.is_finite() || !w.is_finite() {
                f64::INFINITY
            } else {
                (g as f64 - w as f64).abs() / (w.abs() as f64).max(floor)
            }
        })
        .fold(0.0, f64::max)
}

/// An m×n output buffer filled with NaN: an element a kernel leaves unwritten then reads
/// as an infinite error instead of passing with an earlier run's (or a zero's) value.
pub(super) fn poisoned<T: Element>(dev: &Device, m: usize, n: usize) -> Result<Matrix<T>, GemmError> {
    Matrix::from_host(dev, m, n, &vec![T::from_f32(f32::NAN); m * n])
}

/// The host reference of a call of a built-in kernel on `inp`'s host values, at a sample
/// of its output: every element up to 65536, else 4096 spread over it with the corners,
/// the last row and the last column (the runtime's one sampler,
/// [`reference::sample_points`]).
pub(super) fn sampled_reference<T: Element>(
    spec: &crossgemm::KernelSpec,
    inp: &Inputs<T>,
    (m, n, k): (usize, usize, usize),
) -> Sampled {
    let widen = |v: &[T]| v.iter().map(|e| e.to_f32()).collect::<Vec<_>>();
    let (xf, wf, bf) = (widen(&inp.xs), widen(&inp.ws), inp.bias_values().map(widen));
    let mut ops = vec![
        HostOperand::Matrix {
            data: &xf,
            rows: m,
            cols: k,
            layout: Layout::RowMajor,
        },
        HostOperand::Matrix {
            data: &wf,
            rows: k,
            cols: n,
            layout: Layout::ColMajor,
        },
    ];
    if let Some(b) = &bf {
        ops.push(HostOperand::Vector(b));
    }
    let count = if m * n <= 65_536 { 65_536 } else { 4096 };
    Sampled::new(spec.ir(), &ops, (m, n, k), 0x2545_F491_4F6C_DD1D, count)
}

/// [`max_rel_err`] of a row-major `? × n` output at the sampled points.
pub(super) fn sampled_error(s: &Sampled, got: &[f32], n: usize) -> f64 {
    max_rel_err(&s.gather(got, n), &s.rounded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Dtype, Epilogue, KernelEntry};

    #[test]
    fn relative_error_is_scaled_near_zero() {
        assert_eq!(max_rel_err(&[1.0, 2.0], &[1.0, 2.0]), 0.0);
        // 0.01 off a value of 1: 1e-2; the same off a zero counts against the mean (0.5).
        let e = max_rel_err(&[1.01, 0.01], &[1.0, 0.0]);
        assert!((e - 0.02).abs() < 1e-6, "{e}");
    }

    /// Every non-finite difference is an infinite error: none is agreement, none is lost
    /// in a mean of Inf.
    #[test]
    fn non_finite_values_are_infinite_errors() {
        let (inf, nan) = (f32::INFINITY, f32::NAN);
        for (got, want) in [
            (vec![nan, 1.0], vec![1.0, 1.0]),
            (vec![1.0, 1.0], vec![nan, 1.0]),
            (vec![nan, 1.0], vec![nan, 1.0]),
            (vec![inf, 1.0], vec![1.0, 1.0]),
            (vec![-inf, 1.0], vec![inf, 1.0]),
            (vec![1.0, 1.0], vec![inf, 1.0]),
            (vec![inf, 1.0], vec![inf, 1.0]),
            (vec![1.0], vec![1.0, 1.0]),
        ] {
            assert_eq!(max_rel_err(&got, &want), f64::INFINITY, "{got:?} against {want:?}");
        }
        // An Inf in the reference no longer scales every error to 0 through the mean.
        assert_eq!(max_rel_err(&[1.0, 5.0], &[inf, 1.0]), f64::INFINITY);
        // The mean is over the finite values: 0.5 off a 1 is 0.5, not 0.
        let e = max_rel_err(&[1.5, 1.0], &[1.0, 1.0]);
        assert!((e - 0.5).abs() < 1e-9, "{e}");
    }

    #[test]
    fn the_sampled_reference_covers_corners_or_every_element() {
        let dev = crossgemm::Device::host();
        let entry = KernelEntry::find(crate::KERNELS, Dtype::F16, Epilogue::BiasRelu).unwrap();
        let small = Inputs::<crossgemm::f16>::new(&dev, (3, 5, 4), true).unwrap();
        assert_eq!(sampled_reference(entry.spec, &small, (3, 5, 4)).points.len(), 15);
        let large = Inputs::<crossgemm::f16>::new(&dev, (300, 300, 4), true).unwrap();
        let s = sampled_reference(entry.spec, &large, (300, 300, 4));
        assert!(s.points.contains(&(299, 299)) && s.points.contains(&(0, 0)));
        assert!(s.points.len() < 300 * 300 && s.points.len() >= 4096);
        // The reference of a correct output has no error; one changed element, at a
        // sampled point, is found.
        let mut got = vec![0f32; 300 * 300];
        for (&(i, j), &v) in s.points.iter().zip(&s.rounded) {
            got[i * 300 + j] = v;
        }
        assert_eq!(sampled_error(&s, &got, 300), 0.0);
        let (i, j) = s.points[7];
        got[i * 300 + j] += 1.0;
        assert!(sampled_error(&s, &got, 300) > 0.1);
    }
}
