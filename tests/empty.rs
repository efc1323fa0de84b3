//! Products with an empty side. M = 0 or N = 0: an empty output, nothing launched, nothing
//! to tune (a clear error from `tune`); K = 0: every sum is zero and the output is the
//! epilogue of zero. Through the plain call, the host reference, the tuner and
//! `run_with` of a config of each family's kinds (K split or whole; each block tile
//! shape's first: a K = 0 walk is the same zero-trip loop in every tile of a kind), in
//! f32 and f16, on every device under test and the host.

mod common;

use common::*;
use crossgemm::prelude::*;
use crossgemm::Element;

#[gemm_kernel(fma_ok)]
fn e_f32(a: Matrix<f32>, b: Matrix<f32>, bias: Row<f32>) -> Matrix<f32> {
    a * b + bias
}

#[gemm_kernel]
fn e_f16(a: Matrix<f16>, b: Matrix<f16, ColMajor>, bias: Row<f16>) -> Matrix<f16> {
    relu(a * b + bias)
}

const SHAPES: [(usize, usize, usize); 5] = [(0, 5, 3), (4, 0, 3), (0, 0, 0), (4, 5, 0), (1, 1, 0)];

/// The bias every output element equals where K = 0 (`relu` keeps it).
const BIAS: f32 = 0.5;

fn all_devices() -> Vec<Device> {
    let mut v = devices();
    v.extend(Device::list().into_iter().filter(|d| d.info().kind == Backend::Host));
    v
}

/// The first planned config (that fits `dev`) of every family, K split or whole, and
/// block tile shape: each kind's code path once, without compiling the whole plan.
fn one_of_each_kind(
    spec: &'static crossgemm::KernelSpec,
    dev: &Device,
    dtype: crossgemm::DType,
) -> Vec<crossgemm::TileConfig> {
    if dev.info().kind == Backend::Host {
        return Vec::new();
    }
    let mut seen = std::collections::HashSet::new();
    fitting_configs(spec, dev, dtype)
        .into_iter()
        .filter(|c| seen.insert((c.family_id(), c.k_split() > 1, c.block_mn())))
        .collect()
}

/// `check_empty!(kernel, T, B's layout)`: every shape of [`SHAPES`] through the kernel on
/// every device and the host, its output always [`BIAS`] (in `T`).
macro_rules! check_empty {
    ($kernel:ident, $t:ty, $lb:ty) => {{
        let bias_t = <$t as Element>::from_f32(BIAS);
        for dev in all_devices() {
            for (m, n, k) in SHAPES {
                let what = format!("{} {m}x{n}x{k} on {}", stringify!($kernel), dev.info());
                let a = Matrix::<$t>::zeros(&dev, m, k).unwrap();
                let b = Matrix::<$t, $lb>::zeros(&dev, k, n).unwrap();
                let bias = Row::<$t>::from_host(&dev, &vec![bias_t; n]).unwrap();
                let want = vec![bias_t; m * n];
                // The reference downloads its operands: empty buffers included.
                assert_eq!($kernel::reference(&a, &b, &bias).unwrap(), want, "{what}: reference");
                let y = $kernel(&a, &b, &bias).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!((y.rows(), y.cols()), (m, n), "{what}");
                assert_eq!(y.to_host().unwrap(), want, "{what}: call");
                let mut ran = 0;
                for cfg in one_of_each_kind(&$kernel::SPEC, &dev, <$t as Element>::DTYPE) {
                    // Every element written: the output starts as something else.
                    let nine = <$t as Element>::from_f32(9.0);
                    let mut out = Matrix::<$t>::from_host(&dev, m, n, &vec![nine; m * n]).unwrap();
                    let accepted = cfg
                        .family()
                        .accepts(&cfg, $kernel::SPEC.ir(), crossgemm::Problem::new(m, n, k));
                    match $kernel::run_with(&cfg, &a, &b, &bias, &mut out) {
                        Ok(()) => {
                            assert_eq!(out.to_host().unwrap(), want, "{what}: config {cfg}");
                            ran += 1;
                        }
                        Err(e) => assert!(
                            accepted.is_err() && e.to_string().contains("cannot run"),
                            "{what}: config {cfg}: {e}"
                        ),
                    }
                }
                if dev.info().kind == Backend::Host {
                    continue; // the host device runs the reference: nothing to tune there
                }
                let mut out = Matrix::<$t>::zeros(&dev, m, n).unwrap();
                let tuned = $kernel::tune(&a, &b, &bias, &mut out);
                if m == 0 || n == 0 {
                    let e = tuned.unwrap_err().to_string();
                    assert!(e.contains("nothing to tune"), "{what}: {e}");
                } else {
                    tuned.unwrap_or_else(|e| panic!("{what}: tune: {e}"));
                    assert!(ran > 0, "{what}: no config ran");
                }
            }
        }
    }};
}

#[test]
fn empty_sides_in_f32() {
    check_empty!(e_f32, f32, RowMajor);
}

#[test]
fn empty_sides_in_f16() {
    check_empty!(e_f16, f16, ColMajor);
}
