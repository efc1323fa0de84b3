//! Shared helpers of the integration tests: devices under test, random operands, and
//! the comparison against the host reference with dtype- and K-aware tolerances.
#![allow(dead_code)]

use crossgemm::prelude::*;
use crossgemm::{Element, LayoutType};
use rand::{rngs::StdRng, Rng, SeedableRng};

/// The shapes every kernel is checked on: degenerate ones, and ones that are not
/// multiples of any tile.
pub const SHAPES: &[(usize, usize, usize)] = &[
    (1, 1, 1),
    (1, 67, 45),
    (53, 1, 45),
    (40, 37, 1),
    (17, 33, 65),
    (129, 257, 31),
    (64, 64, 64),
    (300, 200, 1000),
];

/// A smaller set for the per-epilogue-op kernels (the op is what they test).
pub const SMALL_SHAPES: &[(usize, usize, usize)] = &[(1, 1, 1), (1, 19, 23), (21, 1, 9), (17, 33, 65), (66, 130, 1)];

/// Devices to test on: every non-host device found, or those named in
/// `CROSSGEMM_TEST_DEVICES` (comma-separated ids). With `CROSSGEMM_REQUIRE_OPENCL=1`, finding
/// no OpenCL device is a failure instead of a skip.
///
/// Plain launches here use the planner's default config (`CROSSGEMM_TUNE=off` unless
/// the environment says otherwise): tuning every shape of the suite would take minutes
/// on PoCL; tests/tune.rs tests the tuner. Compiled kernels are cached under the build
/// folder's `tmp/` unless `CROSSGEMM_CACHE_DIR` is set.
pub fn devices() -> Vec<Device> {
    static TUNE_OFF: std::sync::Once = std::sync::Once::new();
    TUNE_OFF.call_once(|| {
        if std::env::var_os("CROSSGEMM_TUNE").is_none() {
            std::env::set_var("CROSSGEMM_TUNE", "off");
        }
        // Compiled test kernels go to the build folder, not the user's cache folder
        // (where a `cargo test` would otherwise leave PoCL binaries behind).
        if std::env::var_os("CROSSGEMM_CACHE_DIR").is_none() {
            std::env::set_var(
                "CROSSGEMM_CACHE_DIR",
                std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("crossgemm-cache"),
            );
        }
    });
    let found: Vec<Device> = match std::env::var("CROSSGEMM_TEST_DEVICES") {
        Ok(list) if !list.trim().is_empty() => list
            .split(',')
            .map(|id| Device::open(id.trim()).expect("CROSSGEMM_TEST_DEVICES names a device"))
            .collect(),
        _ => Device::list()
            .into_iter()
            .filter(|d| d.info().kind != DeviceKind::Host)
            .collect(),
    };
    if std::env::var("CROSSGEMM_REQUIRE_OPENCL").as_deref() == Ok("1") {
        assert!(
            found.iter().any(|d| d.info().kind == DeviceKind::Opencl),
            "CROSSGEMM_REQUIRE_OPENCL=1 but no OpenCL device was found (is PoCL installed? `clinfo -l`)"
        );
    }
    if found.is_empty() {
        eprintln!(
            "no GPU or OpenCL device found: device tests skipped (set CROSSGEMM_REQUIRE_OPENCL=1 to fail instead)"
        );
    }
    found
}

/// Seeded generator, so a failure reproduces.
pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// Uniform values in [-1, 1): never all zeros, which would hide unwritten outputs.
pub fn values<T: Element>(rng: &mut StdRng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::from_f32(rng.gen_range(-1.0f32..1.0))).collect()
}

pub fn mat<T: Element, L: LayoutType>(dev: &Device, rng: &mut StdRng, rows: usize, cols: usize) -> Matrix<T, L> {
    Matrix::from_host(dev, rows, cols, &values::<T>(rng, rows * cols)).unwrap()
}

pub fn row<T: Element>(dev: &Device, rng: &mut StdRng, n: usize) -> Row<T> {
    Row::from_host(dev, &values::<T>(rng, n)).unwrap()
}

pub fn col<T: Element>(dev: &Device, rng: &mut StdRng, m: usize) -> Col<T> {
    Col::from_host(dev, &values::<T>(rng, m)).unwrap()
}

/// Machine epsilon of an output type.
pub fn eps(d: crossgemm::gemm_core::DType) -> f32 {
    use crossgemm::gemm_core::DType;
    match d {
        DType::F32 => f32::EPSILON,
        DType::F16 => 2f32.powi(-10),
        DType::Bf16 => 2f32.powi(-7),
    }
}

/// Compares a kernel's output with the reference (already rounded to the output type).
///
/// Tolerance per element: two output ulps of |ref| (the kernel and the reference round
/// slightly different f32 values), plus the summation-order error of K products of
/// magnitude ≤ 1 in f32 (`acc_eps * sqrt(K)` relative to the typical |acc| ~ sqrt(K)),
/// with `acc_eps` = 1e-5 for f32 accumulation and 2e-3 when tf32 rounding of the
/// operands is allowed to differ between kernel and reference.
pub fn assert_close<T: Element>(got: &[T], want: &[T], k: usize, tf32: bool, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let e = eps(T::DTYPE);
    let acc_eps = if tf32 { 2e-3 } else { 1e-5 };
    let scale = (k as f32).sqrt() + 1.0;
    let mut worst = (0.0f32, 0usize);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let (g, w) = (g.to_f32(), w.to_f32());
        assert!(!g.is_nan() || w.is_nan(), "{what}: NaN at {i} (reference {w})");
        if g == w {
            continue;
        }
        let tol = 2.0 * e * w.abs() + acc_eps * scale + e * 1e-3;
        let err = (g - w).abs();
        assert!(
            err <= tol,
            "{what}: element {i}: got {g}, reference {w} (|diff| {err:e} > tol {tol:e})"
        );
        if err > worst.0 {
            worst = (err, i);
        }
    }
}
