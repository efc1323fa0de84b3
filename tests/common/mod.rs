//! Shared helpers of the integration tests: devices under test, the REQUIRE switches
//! that turn a skip into a failure, random operands, and the comparison against the host
//! reference with dtype- and K-aware tolerances.
//!
//! The switches (each `1` to require, `0` or unset not to; any other value fails, so that
//! a misspelt switch cannot let a skip through):
//! - `CROSSGEMM_REQUIRE_OPENCL`: no OpenCL device is a failure (CI, PoCL);
//! - `CROSSGEMM_REQUIRE_CUDA`: no CUDA device is a failure (the GPU machine, where a
//!   CUDA that fails to load would otherwise leave only the OpenCL runs);
//! - `CROSSGEMM_REQUIRE_NVRTC`: no libnvrtc is a failure for the NVRTC compile checks
//!   (CI installs it from PyPI);
//! - `CROSSGEMM_REQUIRE_NVDISASM`: no nvdisasm is a failure for tests/prebuilt.rs's check
//!   of the prebuilt CUBINs' SASS (CI installs it from PyPI).
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

/// Whether the REQUIRE switch `var` is on: `1` yes; unset, empty or `0` no; anything else
/// panics naming the variable.
pub fn required(var: &str) -> bool {
    match std::env::var(var) {
        Err(std::env::VarError::NotPresent) => false,
        Ok(v) if v.trim().is_empty() || v.trim() == "0" => false,
        Ok(v) if v.trim() == "1" => true,
        Ok(v) => panic!("{var}={v:?}: expected 1 (require) or 0/unset (allow skipping)"),
        Err(e) => panic!("{var}: {e}"),
    }
}

/// Reports a skip loudly on stderr: which test, what it skips, why, and the switch
/// that would make it a failure. Panics instead when that switch is on.
pub fn skip(test: &str, what: &str, why: &str, switch: &str) {
    if required(switch) {
        panic!("{test}: {switch}=1 but {why}: {what} cannot run");
    }
    loud(&format!(
        "SKIPPED {test}: {what}: {why} (set {switch}=1 to make this a failure)"
    ));
}

/// One line on the process's real stderr: the test harness captures `eprintln!` of a
/// passing test (a skip would never show in a CI log), not a direct write.
pub fn loud(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// The reason no CUDA device was found, as far as the tests can tell.
fn no_cuda_reason() -> String {
    #[cfg(feature = "cuda")]
    {
        let nvrtc = if crossgemm::nvrtc_available() {
            "libnvrtc loads"
        } else {
            "libnvrtc not found (LD_LIBRARY_PATH?)"
        };
        match Device::open("cuda") {
            Ok(d) => format!(
                "{} opens, yet was not among the devices under test (CROSSGEMM_TEST_DEVICES?)",
                d.info()
            ),
            Err(e) => {
                format!("no CUDA device ({nvrtc}; libcuda.so.1 and a visible GPU are needed too: `nvidia-smi`): {e}")
            }
        }
    }
    #[cfg(not(feature = "cuda"))]
    {
        "this build has no `cuda` feature".to_string()
    }
}

/// Devices to test on: every non-host device found, or those named in
/// `CROSSGEMM_TEST_DEVICES` (comma-separated ids). `CROSSGEMM_REQUIRE_OPENCL=1` makes
/// finding no OpenCL device a failure, `CROSSGEMM_REQUIRE_CUDA=1` no CUDA device; without
/// them a missing kind is reported on stderr and its runs are skipped.
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
            .filter(|d| d.info().kind != Backend::Host)
            .collect(),
    };
    let ids = || found.iter().map(|d| d.info().id.clone()).collect::<Vec<_>>().join(", ");
    let has = |kind: Backend| found.iter().any(|d| d.info().kind == kind);
    if required("CROSSGEMM_REQUIRE_OPENCL") {
        assert!(
            has(Backend::Opencl),
            "CROSSGEMM_REQUIRE_OPENCL=1 but no OpenCL device is under test (found: [{}]; is PoCL installed? `clinfo -l`)",
            ids()
        );
    }
    if required("CROSSGEMM_REQUIRE_CUDA") {
        assert!(
            has(Backend::Cuda),
            "CROSSGEMM_REQUIRE_CUDA=1 but no CUDA device is under test (found: [{}]): {}",
            ids(),
            no_cuda_reason()
        );
    }
    if found.is_empty() {
        loud("SKIPPED: no GPU or OpenCL device found: every device run of this test is skipped (set CROSSGEMM_REQUIRE_OPENCL=1 or CROSSGEMM_REQUIRE_CUDA=1 to fail instead)");
    }
    found
}

/// Whether libnvrtc is there for the NVRTC compile checks of `test`; without it the
/// skip is reported ([`skip`]), or is a failure under `CROSSGEMM_REQUIRE_NVRTC=1`.
#[cfg(feature = "cuda")]
pub fn nvrtc_or_skip(test: &str, what: &str) -> bool {
    if crossgemm::nvrtc_available() {
        return true;
    }
    skip(
        test,
        what,
        "libnvrtc.so.13 was not found (is its folder on LD_LIBRARY_PATH?)",
        "CROSSGEMM_REQUIRE_NVRTC",
    );
    false
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
pub fn eps(d: crossgemm::DType) -> f32 {
    use crossgemm::DType;
    match d {
        DType::F32 => f32::EPSILON,
        DType::F16 => 2f32.powi(-10),
        DType::Bf16 => 2f32.powi(-7),
    }
}

/// `acc_eps` of [`assert_close`] for a kernel whose operands may be rounded to tf32
/// differently from the reference: 2^-10.
///
/// The reference rounds each f32 operand to tf32 (nearest, 10 explicit mantissa bits:
/// relative error |e| <= u = 2^-11, rms ~ u/sqrt(6) over a binade), a kernel may not (the
/// OpenCL kernels multiply in full f32) or may differ in ties. A product then differs by
/// a relative e_a + e_b (rms u/sqrt(3)); with operands uniform in [-1, 1) (rms |ab| = 1/3)
/// the K independent terms differ by sigma = (u/sqrt(3)) (1/3) sqrt(K) ~ 0.19 u sqrt(K)
/// (measured on PoCL: 0.18 u sqrt(K), over shapes up to 300x200x1000 and 100x100x4000).
/// The largest of ~10^5 such Gaussian errors is ~4.5 sigma ~ 0.85 u sqrt(K) (worst seen:
/// 0.91 u sqrt(K)). The bound 2u sqrt(K) = 2^-10 sqrt(K) is ~11 sigma, 2.2x the worst
/// seen; the 2e-3 it replaces (4.1 u sqrt(K), 23 sigma) let through twice as much. A
/// kernel that rounds exactly as the reference does (the CUDA mma.sync path: cvt.rna)
/// differs only by f32 summation order, i.e. `1e-5` would do there.
pub const TF32_ACC_EPS: f32 = 1.0 / 1024.0;

/// Compares a kernel's output with the reference (already rounded to the output type).
///
/// Tolerance per element: two output ulps of |ref| (the kernel and the reference round
/// slightly different f32 values), plus the summation-order error of K products of
/// magnitude ≤ 1 in f32 (`acc_eps * sqrt(K)` relative to the typical |acc| ~ sqrt(K)),
/// with `acc_eps` = 1e-5 for f32 accumulation and [`TF32_ACC_EPS`] (2^-10, derived there)
/// when tf32 rounding of the operands is allowed to differ between kernel and reference.
pub fn assert_close<T: Element>(got: &[T], want: &[T], k: usize, tf32: bool, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let e = eps(T::DTYPE);
    let acc_eps = if tf32 { TF32_ACC_EPS } else { 1e-5 };
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

/// The first OpenCL device `spec` has a target for (its `opencl_cpu` target: PoCL in CI),
/// or a loud skip of `test` (a failure under `CROSSGEMM_REQUIRE_OPENCL=1`).
pub fn opencl_device_for(test: &str, spec: &crossgemm::KernelSpec) -> Option<Device> {
    let d = Device::list()
        .into_iter()
        .find(|d| d.info().kind == Backend::Opencl && spec.target_for(d).is_ok());
    if d.is_none() {
        skip(
            test,
            "its kernel",
            "no OpenCL device this kernel has a target for",
            "CROSSGEMM_REQUIRE_OPENCL",
        );
    }
    d
}

/// An empty cache folder of this process for `name`, made the process's cache folder:
/// the tuner, the tables and the compiled-kernel cache then see nothing from elsewhere.
pub fn isolated_cache(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("crossgemm-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    crossgemm::set_cache_dir(Some(dir.clone()));
    dir
}

/// Deterministic operand values in [-1, 1] (a ramp modulo 61, shifted by `salt` per
/// operand): the same in every run and process, for tests that compare runs.
pub fn ramp(len: usize, salt: usize) -> Vec<f32> {
    (0..len)
        .map(|i| (((i * 37 + salt * 11) % 61) as f32 - 30.0) / 30.0)
        .collect()
}

/// Whether `CROSSGEMM_TEST_CONFIGS` narrows the every-config tests (which then may find
/// no config of a kind on a device).
pub fn configs_narrowed() -> bool {
    configs_filter().is_some()
}

/// Asserts that `dev`'s target plans `configs` (of the family `what`) exactly where
/// `planned` says: some where it is true, none where it is false (any number when
/// `CROSSGEMM_TEST_CONFIGS` narrows them).
pub fn assert_planned(configs: &[crossgemm::TileConfig], dev: &Device, planned: bool, what: &str) {
    assert!(
        configs.is_empty() != planned || configs_narrowed(),
        "{what} configs on {}: {}",
        dev.info(),
        configs.len()
    );
}

/// `CROSSGEMM_TEST_CONFIGS`, where set.
fn configs_filter() -> Option<String> {
    std::env::var("CROSSGEMM_TEST_CONFIGS").ok()
}

/// The planned configs of `spec`'s target for `dev` that `keep` takes, and whose
/// description contains `CROSSGEMM_TEST_CONFIGS` where that is set (e.g. `cluster 2x2`:
/// what a compute-sanitizer run of the every-config tests needs, which at every config
/// would take too long).
fn planned_configs(
    spec: &'static crossgemm::KernelSpec,
    dev: &Device,
    keep: impl Fn(&crossgemm::TileConfig) -> bool,
) -> Vec<crossgemm::TileConfig> {
    all_planned(spec, dev, |c| keep(c) && kept_by_filter(c))
}

/// The planned configs of `spec`'s target for `dev` that `keep` takes, whatever
/// `CROSSGEMM_TEST_CONFIGS` says.
fn all_planned(
    spec: &'static crossgemm::KernelSpec,
    dev: &Device,
    keep: impl Fn(&crossgemm::TileConfig) -> bool,
) -> Vec<crossgemm::TileConfig> {
    let tk = spec.target_for(dev).unwrap();
    tk.plan().configs.iter().copied().filter(keep).collect()
}

/// Whether `CROSSGEMM_TEST_CONFIGS`, where set, keeps `config` (its description contains
/// the variable's text): for tests that run configs of their own rather than planned ones.
pub fn kept_by_filter(config: &crossgemm::TileConfig) -> bool {
    let Some(filter) = configs_filter() else {
        return true;
    };
    let kept = config.to_string().contains(&filter);
    if kept {
        KEPT.with(|k| k.set(k.get() + 1));
    }
    kept
}

thread_local! {
    /// Configs `CROSSGEMM_TEST_CONFIGS` kept on this thread (a test's) since its
    /// [`narrowed_run_check`].
    static KEPT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Fails the test it is made in, when dropped at its end, if `CROSSGEMM_TEST_CONFIGS`
/// narrowed the run, the run named the test (a filter argument that is part of its name)
/// and the variable kept none of the configs the test looked at: such a run (a
/// sanitizer's, say, after a config's description changed) checked nothing. A narrowed
/// run of a whole test binary reaches tests of other families, which pass as before.
#[must_use = "the check runs when it is dropped, at the end of the test"]
pub struct NarrowedRunCheck(());

/// [`NarrowedRunCheck`], from here on.
pub fn narrowed_run_check() -> NarrowedRunCheck {
    KEPT.with(|k| k.set(0));
    NarrowedRunCheck(())
}

impl Drop for NarrowedRunCheck {
    fn drop(&mut self) {
        let Some(filter) = configs_filter() else {
            return;
        };
        // libtest runs each test on a thread named after it.
        let test = std::thread::current().name().unwrap_or_default().to_string();
        if !std::thread::panicking() && KEPT.with(|k| k.get()) == 0 && named_by_run(&test) {
            panic!("{test}: CROSSGEMM_TEST_CONFIGS={filter:?} keeps none of its configs: nothing was checked");
        }
    }
}

/// Whether the test binary's filter arguments name `test` (one is part of its name).
fn named_by_run(test: &str) -> bool {
    // libtest's options that take a value as the next argument.
    const VALUED: [&str; 6] = ["--test-threads", "--logfile", "--skip", "--format", "--color", "-Z"];
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if VALUED.contains(&a.as_str()) {
            args.next();
        } else if !a.starts_with('-') && test.contains(&a) {
            return true;
        }
    }
    false
}

/// Whether `spec`'s target for `dev` plans wgmma configs that fit it, whatever
/// `CROSSGEMM_TEST_CONFIGS` says: whether tests of hand-made wgmma configs apply to `dev`.
pub fn plans_wgmma(spec: &'static crossgemm::KernelSpec, dev: &Device, dtype: crossgemm::DType) -> bool {
    !all_planned(spec, dev, |c| {
        matches!(c, crossgemm::TileConfig::Wgmma(_)) && fits(c, dev, dtype)
    })
    .is_empty()
}

/// Whether `config` fits `dev` (threads and shared memory per block).
fn fits(config: &crossgemm::TileConfig, dev: &Device, dtype: crossgemm::DType) -> bool {
    let res = config.resources(dtype);
    res.threads <= dev.info().max_threads_per_block && res.smem_bytes <= dev.info().smem_per_block
}

/// The planned configs of `spec`'s target for `dev` of kernel family `family`.
pub fn family_configs(
    spec: &'static crossgemm::KernelSpec,
    dev: &Device,
    family: crossgemm::FamilyId,
) -> Vec<crossgemm::TileConfig> {
    planned_configs(spec, dev, |c| c.family_id() == family)
}

/// The planned wgmma configs of `spec`'s target for `dev` in the turned-around form
/// (`tune(turned = 1)` plans them; none on targets without wgmma).
pub fn turned_configs(spec: &'static crossgemm::KernelSpec, dev: &Device) -> Vec<crossgemm::TileConfig> {
    planned_configs(spec, dev, |c| {
        matches!(c, crossgemm::TileConfig::Wgmma(_)) && c.turned()
    })
}

/// The first of `configs` of each family and form (plain, or turned around), in their
/// order: one per source and `SWAP` branch, what the diagnosis-variant checks build.
pub fn first_per_family_and_form(configs: &[crossgemm::TileConfig]) -> Vec<crossgemm::TileConfig> {
    let mut seen = std::collections::BTreeSet::new();
    configs
        .iter()
        .copied()
        .filter(|c| seen.insert((c.family_id(), c.turned())))
        .collect()
}

/// The planned configs of `spec`'s target for `dev` that fit it (threads and shared
/// memory per block): what the every-config tests run.
pub fn fitting_configs(
    spec: &'static crossgemm::KernelSpec,
    dev: &Device,
    dtype: crossgemm::DType,
) -> Vec<crossgemm::TileConfig> {
    planned_configs(spec, dev, |c| fits(c, dev, dtype))
}
