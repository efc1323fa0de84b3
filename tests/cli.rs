//! The `crossgemm` binary on PoCL, each command in its own process with its own cache
//! folder. Without an OpenCL device the tests are skipped, unless
//! `CROSSGEMM_REQUIRE_OPENCL=1`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_crossgemm");

/// Whether an OpenCL device is there (asked of the binary itself).
fn opencl() -> bool {
    let out = Command::new(BIN).args(["devices", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("devices --json is JSON");
    let found = v.as_array().expect("an array").iter().any(|d| d["kind"] == "opencl");
    if !found {
        assert!(
            std::env::var("CROSSGEMM_REQUIRE_OPENCL").as_deref() != Ok("1"),
            "CROSSGEMM_REQUIRE_OPENCL=1 but no OpenCL device was found"
        );
        eprintln!("no OpenCL device: CLI tests skipped");
    }
    found
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("crossgemm-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Runs the binary on the first OpenCL device with `dir` as its cache.
fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(BIN);
    c.args(args)
        .env("CROSSGEMM_CACHE_DIR", dir)
        .env("CROSSGEMM_DEVICE", "opencl")
        .env("CROSSGEMM_TUNE_MAX", "3")
        .env_remove("CROSSGEMM_TUNE")
        .env_remove("CROSSGEMM_TUNE_EXACT");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn tune_json(dir: &Path, shape: &str, env: &[(&str, &str)]) -> Value {
    let text = ok(run(
        dir,
        &[
            "tune",
            "--shape",
            shape,
            "--dtype",
            "f16",
            "--epilogue",
            "bias_relu",
            "--json",
        ],
        env,
    ));
    // Exactly one JSON object, and nothing else (no progress on a pipe).
    assert_eq!(text.trim().lines().count(), 1, "{text}");
    serde_json::from_str(text.trim()).expect("tune --json prints one JSON object")
}

#[test]
fn devices_json_parses() {
    let out = Command::new(BIN).args(["devices", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&ok(out).into_bytes()).unwrap();
    let list = v.as_array().unwrap();
    assert!(list.iter().any(|d| d["id"] == "host"));
    for d in list {
        for k in [
            "id",
            "name",
            "driver",
            "compute_units",
            "smem_per_block",
            "global_mem_bytes",
        ] {
            assert!(!d[k].is_null(), "{k} in {d}");
        }
    }
}

#[test]
fn tunes_once_then_hits_the_cache_in_a_new_process() {
    if !opencl() {
        return;
    }
    let dir = temp_dir("hit");
    let first = tune_json(&dir, "40x24x33", &[]);
    assert_eq!(first["cache_hit"], false, "{first}");
    assert!(first["candidates"].as_u64().unwrap() > 0, "{first}");
    for k in [
        "best", "device", "tune_ms", "best_us", "tflops", "shape", "dtype", "epilogue",
    ] {
        assert!(!first[k].is_null(), "{k} in {first}");
    }
    assert!(first["failed"].is_array());
    assert_eq!(first["shape"], "40x24x33");
    let second = tune_json(&dir, "40x24x33", &[]);
    assert_eq!(second["cache_hit"], true, "{second}");
    assert_eq!(second["best"], first["best"]);
    // The readable summary says so too.
    let text = ok(run(&dir, &["tune", "--shape", "40x24x33"], &[]));
    assert!(text.contains("cache hit"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn export_clear_import_round_trip() {
    if !opencl() {
        return;
    }
    let dir = temp_dir("rt");
    let tuned = tune_json(&dir, "20x20x20", &[]);
    assert_eq!(tuned["cache_hit"], false);
    let ls = ok(run(&dir, &["cache", "ls"], &[]));
    assert!(
        ls.contains("gemm_f16_bias_relu") && ls.contains("pow2:32x32x32"),
        "{ls}"
    );
    let file = dir.with_extension("records.json");
    ok(run(&dir, &["cache", "export", file.to_str().unwrap()], &[]));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(doc["format"], "crossgemm-tuning-records");
    let rec = &doc["records"][0];
    assert_eq!(rec["kernel"], "gemm_f16_bias_relu");
    assert!(rec["compiler"].as_str().unwrap().contains("OpenCL"), "{rec}");
    assert!(rec["target_spec"].is_object(), "{rec}");
    assert!(rec["buckets"]["pow2:32x32x32"]["us"].as_f64().unwrap() > 0.0);

    let cleared = ok(run(&dir, &["cache", "clear", "--binaries"], &[]));
    assert!(cleared.contains(dir.to_str().unwrap()), "{cleared}");
    assert!(ok(run(&dir, &["cache", "ls"], &[])).contains("(no entries)"));
    assert!(!dir.join("bin").exists());
    assert_eq!(
        tune_json(&dir, "20x20x20", &[("CROSSGEMM_TUNE", "cached")])["cache_hit"],
        false
    );
    ok(run(&dir, &["cache", "import", file.to_str().unwrap()], &[]));
    let again = tune_json(&dir, "20x20x20", &[]);
    assert_eq!(again["cache_hit"], true, "{again}");
    assert_eq!(again["best"], tuned["best"]);
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn corrupt_import_is_a_clear_error() {
    let dir = temp_dir("bad");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text, says) in [
        (
            "trunc.json",
            "{\"format\":\"crossgemm-tuning-records\",\"version\":1,\"rec",
            "not valid JSON",
        ),
        (
            "other.json",
            "{\"format\":\"something\",\"version\":1}",
            "not a crossgemm",
        ),
        (
            "future.json",
            "{\"format\":\"crossgemm-tuning-records\",\"version\":99,\"records\":[]}",
            "version",
        ),
    ] {
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        let out = run(&dir, &["cache", "import", file.to_str().unwrap()], &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.starts_with("crossgemm: error: cannot import"), "{err}");
        assert!(err.contains(says) && !err.contains("panicked"), "{err}");
    }
    let missing = run(&dir, &["cache", "import", dir.join("nope.json").to_str().unwrap()], &[]);
    assert_eq!(missing.status.code(), Some(1));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A bucket with no winner starts from the nearest bucket's: `cached` uses it, `full`
/// tries it first.
#[test]
fn nearest_record_start() {
    if !opencl() {
        return;
    }
    let dir = temp_dir("near");
    let near = tune_json(&dir, "32x32x32", &[]);
    let far = tune_json(&dir, "8x8x256", &[]);
    assert_eq!(near["cache_hit"], false);
    assert_eq!(far["cache_hit"], false);
    // 40x30x50 (bucket 64x32x64) is nearer to 32x32x32 than to 8x8x256.
    let cached = tune_json(&dir, "40x30x50", &[("CROSSGEMM_TUNE", "cached")]);
    assert_eq!(cached["source"], "nearest", "{cached}");
    assert_eq!(cached["seeded_from"], "pow2:32x32x32", "{cached}");
    assert_eq!(cached["best"], near["best"]);
    assert_eq!(cached["cache_hit"], false);
    // With no record at all, `cached` is the planner's default.
    let other = temp_dir("near-empty");
    let none = tune_json(&other, "40x30x50", &[("CROSSGEMM_TUNE", "cached")]);
    assert_eq!(none["source"], "default", "{none}");
    // A full tune tries the nearest winner first.
    let full = tune_json(&dir, "40x30x50", &[("CROSSGEMM_TUNE_MAX", "2")]);
    assert_eq!(full["cache_hit"], false);
    assert_eq!(full["seeded_from"], "pow2:32x32x32", "{full}");
    assert_eq!(full["candidates"], 2);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&other);
}
