//! The compiled-binary cache on PoCL (or `CROSSGEMM_BINCACHE_TEST_DEVICE`): a new process
//! with a warm cache compiles nothing, and a corrupt binary is rebuilt with a warning and
//! a correct result. Skipped without an OpenCL device unless `CROSSGEMM_REQUIRE_OPENCL=1`.
//!
//! Each scenario runs in a child: this test binary re-run on `child_run` with
//! `CROSSGEMM_BINCACHE_CHILD` set, so that every run starts as a fresh process.

mod common;

use common::ramp;
use crossgemm::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

// No config table (`records = none`): what is tested is the tuner and the cache alone,
// whatever PoCL's device name and the shipped records say.
#[gemm_kernel(records = none)]
fn bc_gemm(a: Matrix<f16>, b: Matrix<f16, ColMajor>) -> Matrix<f32> {
    a * b
}

const SHAPE: (usize, usize, usize) = (19, 23, 17);

fn device() -> Option<Device> {
    if let Ok(id) = std::env::var("CROSSGEMM_BINCACHE_TEST_DEVICE") {
        return Some(Device::open(id.trim()).expect("CROSSGEMM_BINCACHE_TEST_DEVICE names a device"));
    }
    let d = Device::list().into_iter().find(|d| d.info().kind == Backend::Opencl);
    if d.is_none() {
        assert!(
            std::env::var("CROSSGEMM_REQUIRE_OPENCL").as_deref() != Ok("1"),
            "CROSSGEMM_REQUIRE_OPENCL=1 but no OpenCL device was found"
        );
        eprintln!("no OpenCL device: binary cache tests skipped");
    }
    d
}

/// In a child: one call, checked against the reference; prints the compile counters.
#[test]
fn child_run() {
    if std::env::var_os("CROSSGEMM_BINCACHE_CHILD").is_none() {
        return;
    }
    let dev = device().expect("the parent found a device");
    let (m, n, k) = SHAPE;
    let v = |len: usize, salt: usize| -> Vec<f16> { ramp(len, salt).into_iter().map(f16::from_f32).collect() };
    let a = Matrix::<f16>::from_host(&dev, m, k, &v(m * k, 1)).unwrap();
    let b = Matrix::<f16, ColMajor>::from_host(&dev, k, n, &v(k * n, 2)).unwrap();
    let mut out = Matrix::<f32>::zeros(&dev, m, n).unwrap();
    bc_gemm_into(&a, &b, &mut out).unwrap();
    let got = out.to_host().unwrap();
    let want = bc_gemm::reference(&a, &b).unwrap();
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-4 * (1.0 + w.abs()),
            "element {i}: got {g}, reference {w}"
        );
    }
    let s = crossgemm::compile_stats();
    println!(
        "BINCACHE-STATS {} {} {} {}",
        s.compiles, s.binary_hits, s.binary_stores, s.binary_rejected
    );
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("crossgemm-bincache-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `child_run` in a new process with the cache in `dir`; returns its output and
/// `(compiles, hits, stores, rejected)`.
fn run_child(dev: &Device, dir: &Path, extra: &[(&str, &str)]) -> (Output, [u64; 4]) {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["child_run", "--exact", "--nocapture", "--test-threads=1"]);
    for v in ["CROSSGEMM_ALWAYS_COMPILE", "CROSSGEMM_LOG", "CROSSGEMM_DUMP"] {
        c.env_remove(v);
    }
    // Tuning off: one config, one build per process.
    c.env("CROSSGEMM_BINCACHE_CHILD", "1")
        .env("CROSSGEMM_BINCACHE_TEST_DEVICE", &dev.info().id)
        .env("CROSSGEMM_CACHE_DIR", dir)
        .env("CROSSGEMM_TUNE", "off");
    for (k, v) in extra {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed:\n--- stdout\n{text}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .find_map(|l| l.split_once("BINCACHE-STATS ").map(|(_, s)| s.trim().to_string()))
        .unwrap_or_else(|| panic!("no stats line in:\n{text}"));
    let v: Vec<u64> = line.split(' ').map(|x| x.parse().unwrap()).collect();
    (out, [v[0], v[1], v[2], v[3]])
}

fn bin_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir.join("bin"))
        .map(|r| r.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

#[test]
fn warm_cache_compiles_nothing_and_corruption_recompiles() {
    if std::env::var_os("CROSSGEMM_BINCACHE_CHILD").is_some() {
        return;
    }
    let Some(dev) = device() else { return };
    let dir = temp_dir("warm");

    // Cold: one real compile, stored.
    let (_, [compiles, hits, stores, _]) = run_child(&dev, &dir, &[]);
    assert!(compiles >= 1 && hits == 0 && stores >= 1, "{compiles} {hits} {stores}");
    let files = bin_files(&dir);
    assert_eq!(files.len(), stores as usize, "{files:?}");

    // Warm, new process: nothing compiled, every kernel from the cache.
    let (out, [compiles, hits, _, rejected]) = run_child(&dev, &dir, &[]);
    assert_eq!((compiles, rejected), (0, 0));
    assert!(hits >= 1);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("warning"));

    // CROSSGEMM_ALWAYS_COMPILE=1 bypasses it.
    let (_, [compiles, hits, stores, _]) = run_child(&dev, &dir, &[("CROSSGEMM_ALWAYS_COMPILE", "1")]);
    assert!(compiles >= 1 && hits == 0 && stores == 0);

    // Corrupt every cached binary (flip bytes in the payload): a warning, a rebuild, a
    // correct result (the child checks it), and a repaired file.
    for f in &files {
        let mut bytes = std::fs::read(f).unwrap();
        let n = bytes.len();
        for b in &mut bytes[n - n / 4..] {
            *b ^= 0x5a;
        }
        std::fs::write(f, bytes).unwrap();
    }
    let (out, [compiles, hits, stores, rejected]) = run_child(&dev, &dir, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(compiles >= 1 && hits == 0 && stores >= 1 && rejected >= 1);
    assert!(err.contains("warning: binary cache"), "{err}");
    assert_eq!(err.matches("warning: binary cache").count(), files.len(), "{err}");

    // Repaired: warm again.
    let (_, [compiles, hits, _, _]) = run_child(&dev, &dir, &[]);
    assert_eq!(compiles, 0);
    assert!(hits >= 1);

    // Garbage in place of every file: still no crash. (A well-formed file whose binary
    // the driver refuses is covered by the OpenCL backend's unit tests.)
    for f in &files {
        std::fs::write(f, b"not a binary").unwrap();
    }
    let (_, [compiles, _, _, rejected]) = run_child(&dev, &dir, &[]);
    assert!(compiles >= 1 && rejected >= 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unwritable_cache_dir_just_compiles() {
    if std::env::var_os("CROSSGEMM_BINCACHE_CHILD").is_some() {
        return;
    }
    let Some(dev) = device() else { return };
    let dir = temp_dir("ro");
    // A regular file where the cache folder should be: nothing can be stored below it.
    let file = dir.join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    let (out, [compiles, hits, stores, _]) = run_child(&dev, &file, &[]);
    assert!(compiles >= 1 && hits == 0 && stores == 0);
    assert!(out.status.success());
    let _ = std::fs::remove_dir_all(&dir);
}
