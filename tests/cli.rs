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

/// The binary on the first OpenCL device with `dir` as its cache, 3 candidates a tune.
fn command(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    command_of(Path::new(BIN), dir, args, env)
}

/// [`command`] with the executable at `bin` (a copy of the binary).
fn command_of(bin: &Path, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut c = Command::new(bin);
    c.args(args)
        .env("CROSSGEMM_CACHE_DIR", dir)
        .env("CROSSGEMM_DEVICE", "opencl")
        .env("CROSSGEMM_TUNE_MAX", "3")
        .env_remove("CROSSGEMM_TUNE")
        .env_remove("NV_SANITIZER_INJECTION_TRANSPORT_TYPE")
        .env_remove("CROSSGEMM_TUNE_EXACT")
        .env_remove("CROSSGEMM_TUNE_BUDGET_MS")
        .env_remove("CROSSGEMM_COMMIT");
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

/// Runs [`command`].
fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    command(dir, args, env).output().unwrap()
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

/// `tune --config` times exactly the configs given (the winner of the tune before among
/// them or not), neither reading nor writing the cache's winners; a config that breaks its
/// family's rules is an error naming the rule, malformed JSON a usage error.
#[test]
fn tune_times_exactly_the_given_configs() {
    if !opencl() {
        return;
    }
    let dir = temp_dir("given");
    let tune = |extra: &[&str]| {
        let mut args = vec!["tune", "--shape", "40x24x33", "--epilogue", "bias_relu", "--json"];
        args.extend(extra);
        run(&dir, &args, &[])
    };
    let tuned: Value = serde_json::from_str(ok(tune(&["--thorough"])).trim()).unwrap();
    let cache_files = || -> Vec<(PathBuf, Vec<u8>)> {
        let mut v: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
            .collect();
        v.sort();
        v
    };
    let before = cache_files();
    assert_eq!(before.len(), 1, "one tuning-cache file: {before:?}");
    // The winner and a loser of that tune, as the cache stores them: the JSON `--config`
    // reads (as `tune --json`'s `best_config` prints it).
    let file: Value = serde_json::from_slice(&before[0].1).unwrap();
    let winner = &file["winners"][tuned["shape_key"].as_str().unwrap()];
    let best = winner["config"].clone();
    assert_eq!(best, tuned["best_config"]);
    let other = winner["timings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["config"].clone())
        .find(|c| *c != best)
        .unwrap_or_else(|| panic!("a thorough tune of 3 candidates times a loser: {winner}"));
    let (b, o) = (best.to_string(), other.to_string());
    let given = |configs: &[&str]| {
        let args: Vec<&str> = configs.iter().flat_map(|c| ["--config", c]).collect();
        tune(&args)
    };
    let j: Value = serde_json::from_str(ok(given(&[&o, &b, &o])).trim()).unwrap();
    assert_eq!(j["cache_hit"], false, "{j}");
    assert_eq!(j["candidates"], 2, "duplicates count once: {j}");
    assert_eq!(j["cache_file"], Value::Null, "{j}");
    let timed: Vec<&str> = j["timings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["config"].as_str().unwrap())
        .collect();
    assert_eq!(timed.len(), 2, "{j}");
    assert!(timed.contains(&tuned["best"].as_str().unwrap()), "{j}");
    assert_eq!(cache_files(), before, "the cache's winners and failures are untouched");
    // A plain tune afterwards still hits the cache with the first winner.
    let again = tune_json(&dir, "40x24x33", &[]);
    assert_eq!(
        (&again["cache_hit"], &again["best"]),
        (&Value::Bool(true), &tuned["best"])
    );

    // A work-group tile that is no multiple of its threads breaks a rule of every target.
    let mut broken = best.clone();
    broken["mwg"] = Value::from(best["mdimc"].as_u64().unwrap() * 3 + 1);
    let out = given(&[&b, &broken.to_string()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("1 of the 2 given configs") && err.contains("rule of the `simt` family"),
        "{err}"
    );
    // Nor does a tune under CROSSGEMM_TUNE=cached or off, which only looks up.
    for mode in ["cached", "off"] {
        let args = ["tune", "--shape", "40x24x33", "--config", &b];
        let out = run(&dir, &args, &[("CROSSGEMM_TUNE", mode)]);
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("CROSSGEMM_TUNE={mode} tunes nothing")), "{err}");
    }
    // `bench --first-call` tunes nothing, so it has no use for configs to time; and
    // `--max` would be ignored (every given config is timed).
    for args in [
        &["bench", "--shape", "40x24x33", "--first-call", "--config", &b][..],
        &["tune", "--shape", "40x24x33", "--max", "1", "--config", &b],
        &["bench", "--shape", "40x24x33", "--max", "1", "--config", &b],
    ] {
        let out = run(&dir, args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("cannot be used with"), "{args:?}: {err}");
    }
    let out = given(&[r#"{"family":"simt","mwg":32}"#]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not a tile config") && err.contains("missing field"),
        "{err}"
    );
    // A misspelt field is refused, not ignored (serde alone would time the config
    // without it).
    let typo = b.replacen("\"vw\"", "\"vwidth\"", 1);
    assert_ne!(typo, b, "the loser's JSON has a `vw` field");
    let out = given(&[&typo]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown field `vwidth` for a `simt` config"), "{err}");
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
        ls.contains("gemm_f16_bias_relu") && ls.contains("pow2/u:32x32x32"),
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
    assert!(rec["buckets"]["pow2/u:32x32x32"]["us"].as_f64().unwrap() > 0.0);

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
    // With no record at all, `cached` is the planner's default, or without a cache the
    // config table's nearest entry (the shipped records/pocl-cpu.json has this kernel).
    let other = temp_dir("near-empty");
    let none = tune_json(
        &other,
        "40x30x50",
        &[("CROSSGEMM_TUNE", "cached"), ("CROSSGEMM_IGNORE_TABLES", "1")],
    );
    assert_eq!(none["source"], "default", "{none}");
    let table = tune_json(&other, "40x30x50", &[("CROSSGEMM_TUNE", "cached")]);
    assert!(
        table["source"] == "table" || table["source"] == "table_nearest",
        "{table}"
    );
    assert!(
        table["seeded_from"]
            .as_str()
            .is_some_and(|s| s.starts_with("table pow2") && s.contains("records/pocl-cpu.json")),
        "{table}"
    );
    // A full tune tries the nearest winner first.
    let full = tune_json(&dir, "40x30x50", &[("CROSSGEMM_TUNE_MAX", "2")]);
    assert_eq!(full["cache_hit"], false);
    assert_eq!(full["seeded_from"], "pow2:32x32x32", "{full}");
    assert_eq!(full["candidates"], 2);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&other);
}

/// Without a candidate count, a small problem times the first candidate that passes and
/// says what it skipped; `--thorough` lists them all, and `--budget-ms` stops the search
/// after the first that passes.
#[test]
fn tune_scales_its_search_and_keeps_its_budget() {
    if !opencl() {
        return;
    }
    let dir = temp_dir("scope");
    let tune = |extra: &[&str]| -> Value {
        let mut args = vec!["tune", "--shape", "40x24x33", "--json", "--force"];
        args.extend_from_slice(extra);
        let mut c = command(&dir, &args, &[]);
        c.env_remove("CROSSGEMM_TUNE_MAX");
        serde_json::from_str(ok(c.output().unwrap()).trim()).unwrap()
    };
    let small = tune(&[]);
    assert_eq!(small["timed"], 1, "{small}");
    assert!(
        small["scope"]
            .as_str()
            .unwrap()
            .contains("the first candidate that passes"),
        "{small}"
    );
    let listed = small["candidates"].as_u64().unwrap();
    assert!(listed > 1, "{small}");
    assert_eq!(small["skipped"].as_array().unwrap().len() as u64, listed - 1, "{small}");
    assert_eq!(small["budget_spent"], false);
    assert_eq!(small["tied"][0], small["best"], "the winner heads its tie: {small}");

    let budget = tune(&["--thorough", "--budget-ms", "0.001"]);
    assert!(budget["scope"].as_str().unwrap().starts_with("thorough"), "{budget}");
    assert_eq!(budget["timed"], 1, "{budget}");
    // The timed candidates' medians, fastest first; the winner is among the fastest.
    let timings = budget["timings"].as_array().unwrap();
    assert_eq!(timings.len(), 1, "{budget}");
    assert_eq!(timings[0]["config"], budget["best"], "{budget}");
    assert!(timings[0]["us"].as_f64().unwrap() > 0.0, "{budget}");
    assert_eq!(budget["budget_spent"], true, "{budget}");
    assert!(!budget["skipped"].as_array().unwrap().is_empty(), "{budget}");

    let out = run(&dir, &["tune", "--shape", "40x24x33", "--budget-ms", "0"], &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not a number of milliseconds > 0"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_writes_json_markdown_and_svg_then_merges_triton() {
    if !opencl() {
        return;
    }
    let dir = temp_dir("bench");
    let res = dir.join("res");
    let res_s = res.to_str().unwrap();
    ok(run(
        &dir,
        &[
            "bench",
            "--shape",
            "33x17x9",
            "--shape",
            "1x40x8",
            "--dtypes",
            "f16,f32",
            "--epilogues",
            "none,bias_relu",
            "--runs",
            "10",
            "--warmup",
            "1",
            "--max",
            "2",
            "--out",
            res_s,
            "--name",
            "t",
        ],
        // As if under compute-sanitizer: the report must say so (its notes).
        &[("NV_SANITIZER_INJECTION_TRANSPORT_TYPE", "uds")],
    ));
    let rep: Value = serde_json::from_str(&std::fs::read_to_string(res.join("t.json")).unwrap()).unwrap();
    assert_eq!(rep["format"], "crossgemm-bench");
    assert!(
        rep["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("ran under compute-sanitizer")),
        "{}",
        rep["notes"]
    );
    assert!(
        rep["device_id"].as_str().unwrap().starts_with("opencl"),
        "{}",
        rep["device_id"]
    );
    assert!(rep["copy_gbps"].as_f64().unwrap() > 0.0);
    assert!(rep["launch_overhead"]["bare_us"].as_f64().unwrap() > 0.0);
    let rows = rep["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 8, "2 shapes x 2 dtypes x 2 epilogues");
    for r in rows {
        assert!(r["ours_us"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["ours_tflops"].as_f64().unwrap() > 0.0, "{r}");
        // No cuBLAS on PoCL: checked against the host reference, vendor columns null.
        assert_eq!(r["err_vs"], "reference", "{r}");
        assert!(r["max_rel_err"].as_f64().unwrap() < 1e-2, "{r}");
        assert!(r["err_limit"].as_f64().unwrap() > 0.0, "{r}");
        assert_eq!(r["wrong"], false, "{r}");
        assert!(
            r["cublaslt_max_rel_err"].is_null() && r["cublas_max_rel_err"].is_null(),
            "{r}"
        );
        assert!(r["cublas_us"].is_null() && r["speedup_vs_cublas"].is_null(), "{r}");
        assert!(!r["config"].as_str().unwrap().is_empty(), "{r}");
        assert_eq!(r["group"], "cli");
    }
    let md = std::fs::read_to_string(res.join("t.md")).unwrap();
    assert!(md.contains("| 33x17x9 |") && md.contains("## f32"), "{md}");
    let svg = std::fs::read_to_string(res.join("t.svg")).unwrap();
    assert!(svg.contains("<svg"), "{}", &svg[..svg.len().min(200)]);

    // A Triton file (JSON lines) folded into the report, without measuring again.
    let tri = dir.join("triton.jsonl");
    std::fs::write(
        &tri,
        "{\"m\": 33, \"n\": 17, \"k\": 9, \"dtype\": \"f16\", \"epilogue\": \"none\", \"triton_us\": 1000.0}\n",
    )
    .unwrap();
    let out = run(
        &dir,
        &[
            "bench",
            "--report-only",
            "--input",
            res.join("t.json").to_str().unwrap(),
            "--merge",
            tri.to_str().unwrap(),
            "--out",
            res_s,
            "--name",
            "merged",
        ],
        &[],
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("merged 1 Triton time"));
    ok(out);
    let m: Value = serde_json::from_str(&std::fs::read_to_string(res.join("merged.json")).unwrap()).unwrap();
    let row = m["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["m"] == 33 && r["dtype"] == "f16" && r["epilogue"] == "none")
        .unwrap();
    let want = 1000.0 / row["ours_us"].as_f64().unwrap();
    assert!(
        (row["speedup_vs_triton"].as_f64().unwrap() - want).abs() < 1e-9,
        "{row}"
    );

    // A row over its error limit (as a broken kernel would give): the report is written
    // with the row marked and its ratio dropped, and the command fails naming it.
    let mut bad = m.clone();
    let r0 = &mut bad["rows"][0];
    let key = format!(
        "{}x{}x{} {} {}",
        r0["m"],
        r0["n"],
        r0["k"],
        r0["dtype"].as_str().unwrap(),
        r0["epilogue"].as_str().unwrap()
    );
    r0["max_rel_err"] = Value::from(0.5);
    let bad_path = dir.join("bad.json");
    std::fs::write(&bad_path, serde_json::to_string(&bad).unwrap()).unwrap();
    let out = run(
        &dir,
        &[
            "bench",
            "--report-only",
            "--input",
            bad_path.to_str().unwrap(),
            "--out",
            res_s,
            "--name",
            "judged",
        ],
        &[],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a wrong row must fail the command: {err}");
    assert!(err.contains(&format!("{key}: ours (error 5.0e-1")), "{err}");
    let j: Value = serde_json::from_str(&std::fs::read_to_string(res.join("judged.json")).unwrap()).unwrap();
    let r0 = &j["rows"][0];
    assert_eq!(r0["wrong"], true, "{r0}");
    assert_eq!(r0["wrong_sides"], serde_json::json!(["ours"]), "{r0}");
    assert!(r0["speedup_vs_triton"].is_null(), "{r0}");
    let md = std::fs::read_to_string(res.join("judged.md")).unwrap();
    assert!(
        md.contains("**WRONG: ours**") && md.contains("1 row with a wrong output"),
        "{md}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Under `CROSSGEMM_TUNE=off` a plain launch runs the planner's default config; `bench`
/// must time and check the config it reports, here a cached winner that is not the
/// default. `CROSSGEMM_LOG` logs every OpenCL build of the process (a binary-cache load
/// included), so the builds of the benchmarked kernel show which configs ran.
#[test]
fn bench_under_tune_off_times_the_config_it_reports() {
    if !opencl() {
        return;
    }
    let dir = temp_dir("bench-off");
    let empty = temp_dir("bench-off-empty");
    let shape = "33x17x9";
    let default = tune_json(
        &empty,
        shape,
        &[("CROSSGEMM_TUNE", "cached"), ("CROSSGEMM_IGNORE_TABLES", "1")],
    );
    assert_eq!(default["source"], "default", "{default}");
    let tuned = tune_json(&dir, shape, &[("CROSSGEMM_TUNE_MAX", "1")]);
    // Make the cached winner differ from the default: the same tile, another vector width.
    let file = PathBuf::from(tuned["cache_file"].as_str().unwrap());
    let mut cache: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let vw = default["best_config"]["vw"]
        .as_u64()
        .expect("a SIMT config has a vector width `vw`");
    let other = if vw == 2 { 4 } else { 2 };
    let winners = cache["winners"].as_object_mut().unwrap();
    assert_eq!(winners.len(), 1, "{winners:?}");
    for w in winners.values_mut() {
        w["config"] = default["best_config"].clone();
        w["config"]["vw"] = Value::from(other);
    }
    std::fs::write(&file, serde_json::to_string_pretty(&cache).unwrap()).unwrap();

    let res = dir.join("res");
    let out = run(
        &dir,
        &[
            "bench",
            "--shape",
            shape,
            "--dtypes",
            "f16",
            "--epilogues",
            "bias_relu",
            "--runs",
            "10",
            "--warmup",
            "1",
            "--out",
            res.to_str().unwrap(),
            "--name",
            "off",
        ],
        &[("CROSSGEMM_TUNE", "off"), ("CROSSGEMM_LOG", "1")],
    );
    let log = String::from_utf8_lossy(&out.stderr).to_string();
    ok(out);
    let rep: Value = serde_json::from_str(&std::fs::read_to_string(res.join("off.json")).unwrap()).unwrap();
    let row = &rep["rows"][0];
    assert_eq!(row["tune_cache_hit"], true, "{row}");
    let config = row["config"].as_str().unwrap();
    assert!(
        config.contains(&format!("vw {other}")),
        "reports the cached winner: {config}"
    );
    assert_eq!(row["wrong"], false, "{row}");
    // The builds of the benchmarked kernel: exactly one, with the reported vector width.
    let builds: std::collections::BTreeSet<&str> = log
        .lines()
        .filter(|l| l.contains("OpenCL build `") && l.contains("gemm_f16_bias_relu"))
        .filter_map(|l| Some(&l[l.find('[')? + 1..l.find(']')?]))
        .collect();
    assert_eq!(
        builds.len(),
        1,
        "one config must run, the reported one: {builds:?}\n{log}"
    );
    let only = builds.iter().next().unwrap();
    assert!(only.contains(&format!("-D VW={other} ")), "{only}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&empty);
}

/// `--w-layout row` runs the built-in kernels whose `w: Matrix<T>` (K×N row-major), of
/// every dtype and epilogue, and `bench` refuses it beside `--pad` and `--batch`.
#[test]
fn tune_and_bench_take_a_row_major_w() {
    let dir = temp_dir("wrow");
    let out = run(
        &dir,
        &["bench", "--shape", "8x8x8", "--w-layout", "row", "--pad", "8"],
        &[],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--w-layout") && err.contains("--pad"), "{err}");
    if !opencl() {
        return;
    }
    let args = |dtype, epilogue| {
        [
            "tune",
            "--shape",
            "3x40x24",
            "--dtype",
            dtype,
            "--epilogue",
            epilogue,
            "--w-layout",
            "row",
            "--json",
        ]
    };
    for (dtype, epilogue, kernel) in [
        ("f16", "none", "gemm_f16_none_wrow"),
        ("f32", "none", "gemm_f32_none_wrow"),
        ("f32", "bias_relu", "gemm_f32_bias_relu_wrow"),
        ("tf32x3", "bias_gelu", "gemm_tf32x3_bias_gelu_wrow"),
    ] {
        let v: Value = serde_json::from_str(ok(run(&dir, &args(dtype, epilogue), &[])).trim()).unwrap();
        assert_eq!(v["kernel"], kernel, "{v}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A report names the revision in a COMMIT file beside the executable (as the GPU
/// machine's copied binaries have it) before the working directory's git HEAD, and
/// CROSSGEMM_COMMIT before both.
#[test]
fn bench_names_the_commit_beside_its_binary() {
    if !opencl() {
        return;
    }
    let dir = temp_dir("commit");
    let bin_dir = dir.join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let bin = bin_dir.join("crossgemm");
    std::fs::copy(BIN, &bin).unwrap();
    std::fs::write(bin_dir.join("COMMIT"), "abc1234\ndirty\n").unwrap();
    let res = dir.join("res");
    let commit_of = |name: &str, env: &[(&str, &str)]| {
        let args = [
            "bench",
            "--shape",
            "8x8x8",
            "--dtypes",
            "f32",
            "--epilogues",
            "none",
            "--runs",
            "2",
            "--warmup",
            "1",
            "--max",
            "1",
            "--out",
            res.to_str().unwrap(),
            "--name",
            name,
        ];
        ok(command_of(&bin, &dir, &args, env).output().unwrap());
        let rep: Value =
            serde_json::from_str(&std::fs::read_to_string(res.join(format!("{name}.json"))).unwrap()).unwrap();
        rep["commit"].as_str().unwrap().to_string()
    };
    assert_eq!(commit_of("beside", &[]), "abc1234");
    assert_eq!(commit_of("env", &[("CROSSGEMM_COMMIT", "fromenv")]), "fromenv");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--dtypes tf32x3`: f32 operands as three tf32 products of their split parts, held to
/// f32's error limit (on PoCL against the host reference), the fused epilogue too; and
/// `diagnose` refuses it with the reason rather than timing unsplit operands.
#[test]
fn bench_runs_tf32x3_at_f32_error() {
    if !opencl() {
        return;
    }
    let dir = temp_dir("tf32x3");
    let res = dir.join("res");
    let args = [
        "bench",
        "--shape",
        "37x19x70",
        "--dtypes",
        "tf32x3",
        "--epilogues",
        "none,bias_gelu",
        "--runs",
        "3",
        "--warmup",
        "1",
        "--out",
        res.to_str().unwrap(),
        "--name",
        "t",
    ];
    ok(run(&dir, &args, &[]));
    let rep: Value = serde_json::from_str(&std::fs::read_to_string(res.join("t.json")).unwrap()).unwrap();
    let rows = rep["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{rep}");
    for r in rows {
        assert_eq!(
            (r["dtype"].as_str(), r["wrong"].as_bool()),
            (Some("tf32x3"), Some(false)),
            "{r}"
        );
        assert_eq!(r["err_limit"].as_f64(), Some(1e-4), "{r}");
        assert!(r["max_rel_err"].as_f64().unwrap() < 1e-5, "{r}");
    }
    let out = run(
        &dir,
        &[
            "diagnose",
            "--shape",
            "37x19x70",
            "--dtype",
            "tf32x3",
            "--epilogue",
            "none",
        ],
        &[],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("acc = tf32x3"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_rejects_unknown_dtypes() {
    let dir = temp_dir("bench-bad");
    let out = run(&dir, &["bench", "--shape", "8x8x8", "--dtypes", "f64"], &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("f64") && err.contains("shapes.toml"), "{err}");
}

#[test]
fn diagnose_reports_variants_neighbours_and_a_verdict() {
    if !opencl() {
        return;
    }
    let dir = temp_dir("diagnose");
    let text = ok(run(
        &dir,
        &[
            "diagnose",
            "--shape",
            "70x50x40",
            "--dtype",
            "f32",
            "--epilogue",
            "bias_relu",
            "--runs",
            "10",
            "--json",
        ],
        &[],
    ));
    let d: Value = serde_json::from_str(text.trim()).expect("diagnose --json prints one JSON object");
    assert!(d["max_rel_err"].as_f64().unwrap() < 1e-3, "{d}");
    let variants: Vec<&str> = d["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["what"].as_str().unwrap())
        .collect();
    assert_eq!(
        variants,
        ["full", "load_only", "no_epilogue", "compute_only", "no_store"]
    );
    for v in d["variants"].as_array().unwrap() {
        assert!(v["us"].as_f64().is_some_and(|us| us > 0.0), "{v}");
    }
    assert!(!d["neighbours"].as_array().unwrap().is_empty(), "{d}");
    assert_eq!(d["orders"].as_array().unwrap().len(), 4, "{d}");
    // The empty launch timed as the kernels are: a real time, under the full kernel's.
    let floor = d["launch_floor_us"].as_f64().expect("launch_floor_us");
    assert!(
        floor > 0.0 && floor <= d["variants"][0]["us"].as_f64().unwrap() * 1.5,
        "{d}"
    );
    let kinds = [
        "memory-bound",
        "store-bound",
        "compute-bound",
        "pipeline-bound",
        "raster-bound",
        "balanced",
    ];
    assert!(kinds.contains(&d["verdict"].as_str().unwrap()), "{d}");
    assert!(d["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r.as_str().unwrap().contains("blocks of")));
    let _ = std::fs::remove_dir_all(&dir);
}

// --- issue 11, item 4 and 8 ---------------------------------------------------------------

#[test]
fn cache_dir_flag_moves_the_compiled_kernels_and_clear_removes_them() {
    if !opencl() {
        return;
    }
    let env_dir = temp_dir("env-folder");
    let flag_dir = temp_dir("flag-folder");
    // The environment names one folder, --cache-dir another: everything goes to the latter.
    let out = run(
        &env_dir,
        &[
            "--cache-dir",
            flag_dir.to_str().unwrap(),
            "tune",
            "--shape",
            "24x16x8",
            "--epilogue",
            "none",
            "--json",
        ],
        &[("CROSSGEMM_TUNE_MAX", "1")],
    );
    ok(out);
    let bins = |d: &Path| std::fs::read_dir(d.join("bin")).map_or(0, |r| r.count());
    assert!(bins(&flag_dir) > 0, "compiled kernels in --cache-dir/bin");
    assert!(!env_dir.exists(), "nothing in CROSSGEMM_CACHE_DIR");
    let text = ok(run(
        &env_dir,
        &[
            "--cache-dir",
            flag_dir.to_str().unwrap(),
            "cache",
            "clear",
            "--binaries",
        ],
        &[],
    ));
    assert!(text.contains("removed the compiled-kernel cache"), "{text}");
    assert!(!flag_dir.join("bin").exists());
    let _ = std::fs::remove_dir_all(&flag_dir);
}

#[test]
fn tune_under_tune_off_tunes_nothing_and_reports_the_default() {
    if !opencl() {
        return;
    }
    let dir = temp_dir("tune-off");
    let tuned = tune_json(&dir, "40x24x33", &[]);
    let off = tune_json(&dir, "40x24x33", &[("CROSSGEMM_TUNE", "off")]);
    assert_eq!(
        (&off["mode"], &off["source"], &off["candidates"]),
        (&Value::from("off"), &Value::from("default"), &Value::from(0)),
        "{off}"
    );
    assert_eq!(off["cache_hit"], false, "off reads no cache: {off}");
    let text = ok(run(
        &dir,
        &["tune", "--shape", "100x24x33"],
        &[("CROSSGEMM_TUNE", "off")],
    ));
    assert!(text.contains("CROSSGEMM_TUNE=off: nothing tuned"), "{text}");
    // Nothing was tuned for the new shape.
    let after = ok(run(&dir, &["cache", "ls"], &[]));
    assert!(!after.contains("128x32x64"), "{after}");
    assert!(tuned["candidates"].as_u64().unwrap() > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_with_shapes_needs_no_shape_table() {
    if !opencl() {
        return;
    }
    let dir = temp_dir("bench-no-table");
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(BIN)
        .current_dir(&dir) // no bench/shapes.toml here
        .args([
            "bench",
            "--shape",
            "16x8x8",
            "--dtypes",
            "f16",
            "--epilogues",
            "none",
            "--runs",
            "10",
            "--warmup",
            "1",
            "--max",
            "1",
            "--out",
            "res",
            "--name",
            "t",
        ])
        .env("CROSSGEMM_CACHE_DIR", dir.join("cache"))
        .env("CROSSGEMM_DEVICE", "opencl")
        .env_remove("CROSSGEMM_TUNE")
        .output()
        .unwrap();
    ok(out);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("res/t.json")).unwrap()).unwrap();
    assert_eq!(v["rows"].as_array().map(|r| r.len()), Some(1), "{v}");
    // Without --shape the table is still needed.
    let out = Command::new(BIN).current_dir(&dir).args(["bench"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("shapes.toml"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `bench --pad` and `--batch`: ours on padded views and on a batch, checked against the
/// host reference like any row; a batch row carries its batch and its flops count every
/// product.
#[test]
fn bench_runs_padded_views_and_batches() {
    if !opencl() {
        return;
    }
    let dir = temp_dir("bench-pad-batch");
    std::fs::create_dir_all(&dir).unwrap();
    // (shape, extra arguments, report name, CROSSGEMM_STAGE)
    let bench = |shape: &str, extra: &[&str], name: &str, stage: &str| {
        let mut args = vec![
            "bench",
            "--shape",
            shape,
            "--dtypes",
            "f16",
            "--epilogues",
            "bias_relu",
            "--runs",
            "10",
            "--warmup",
            "1",
            "--max",
            "1",
            "--no-vendor",
            "--out",
            "res",
            "--name",
            name,
        ];
        args.extend_from_slice(extra);
        let out = Command::new(BIN)
            .current_dir(&dir)
            .args(&args)
            .env("CROSSGEMM_CACHE_DIR", dir.join(format!("cache-{name}")))
            .env("CROSSGEMM_DEVICE", "opencl")
            .env("CROSSGEMM_STAGE", stage)
            .env_remove("CROSSGEMM_TUNE")
            .output()
            .unwrap();
        ok(out);
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(format!("res/{name}.json"))).unwrap()).unwrap();
        v["rows"][0].clone()
    };
    let padded = bench("33x20x17", &["--pad", "3"], "pad", "auto");
    assert_eq!(padded["wrong"], false, "{padded}");
    assert!(padded["max_rel_err"].as_f64().is_some_and(|e| e < 5e-3), "{padded}");
    // K = 24 keeps packed f16 rows 16-byte aligned; views of pitch K + 3 do not, so with
    // staging forced the row's note shows that the padded views reached the launch.
    let staged = bench("33x20x24", &["--pad", "3"], "staged", "always");
    assert!(
        staged["note"].as_str().is_some_and(|n| n.contains("misaligned rows")),
        "{staged}"
    );
    assert!(staged["max_rel_err"].as_f64().is_some_and(|e| e < 5e-3), "{staged}");
    let packed = bench("33x20x24", &[], "packed", "always");
    assert!(
        !packed["note"].as_str().unwrap_or("").contains("misaligned"),
        "{packed}"
    );
    let batched = bench("33x20x17", &["--batch", "3"], "batch", "auto");
    assert_eq!(batched["batch"], 3, "{batched}");
    assert!(batched["max_rel_err"].as_f64().is_some_and(|e| e < 5e-3), "{batched}");
    let md = std::fs::read_to_string(dir.join("res/batch.md")).unwrap();
    assert!(md.contains("| 3x(33x20x17) |"), "{md}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_corrupt_cache_file_shows_in_ls_and_goes_with_clear() {
    if !opencl() {
        return;
    }
    let dir = temp_dir("corrupt-ls");
    tune_json(&dir, "40x24x33", &[]);
    let good: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(good.len(), 1);
    std::fs::write(&good[0], b"{ \"format\": \"crossgemm-tune-cache\", trunc").unwrap();
    let text = ok(run(&dir, &["cache", "ls"], &[]));
    assert!(
        text.contains("unusable:") && text.contains(&good[0].display().to_string()) && text.contains("not valid JSON"),
        "{text}"
    );
    let text = ok(run(&dir, &["cache", "clear"], &[]));
    assert!(text.contains("removed 1 tuning-cache file"), "{text}");
    assert!(!good[0].exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The library without the `cli` feature builds none of the CLI's dependencies.
#[test]
fn the_library_alone_pulls_no_cli_dependency() {
    let tree = |features: &[&str]| {
        let out = Command::new(env!("CARGO"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args([
                "tree",
                "-p",
                "crossgemm",
                "-e",
                "normal",
                "--prefix",
                "none",
                "--offline",
            ])
            .args(features)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let cli_deps = |t: &str| {
        ["clap ", "indicatif ", "plotters "]
            .iter()
            .filter(|d| t.lines().any(|l| l.starts_with(*d)))
            .count()
    };
    assert_eq!(cli_deps(&tree(&[])), 3, "the default build has the CLI");
    let lib = tree(&["--no-default-features", "--features", "opencl,cuda,sm80,sm90,baseline"]);
    assert_eq!(cli_deps(&lib), 0, "{lib}");
}

/// Issue 11's repro: a shape whose operands no host or device holds is an error naming
/// the bytes, exit status 1, not an allocation abort (status 134).
#[test]
fn a_huge_shape_is_an_error_not_an_abort() {
    if !opencl() {
        return;
    }
    let dir = temp_dir("huge-shape");
    for shape in ["99999999999x1x1", "4000000000x4000000000x2"] {
        let out = run(&dir, &["tune", "--shape", shape], &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{shape}: {err}");
        assert!(err.contains("bytes of device memory"), "{shape}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `cache merge` pools records of several machines into one per kernel: the shipped
/// PoCL records twice (two "machines") give the same kernels and buckets, each bucket
/// pooled; a kernel only one file has stays as it was; a bad file is an error naming it.
#[test]
fn cache_merge_pools_records_of_several_machines() {
    let dir = temp_dir("merge");
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pocl = manifest.join("records/pocl-cpu.json");
    let other = manifest.join("tests/data/table-records.json");
    let out = dir.join("merged.json");
    let res = run(
        &dir,
        &[
            "cache",
            "merge",
            pocl.to_str().unwrap(),
            pocl.to_str().unwrap(),
            other.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert!(res.status.success(), "{}", String::from_utf8_lossy(&res.stderr));
    let said = String::from_utf8_lossy(&res.stderr);
    let shipped: Value = serde_json::from_str(&std::fs::read_to_string(&pocl).unwrap()).unwrap();
    let merged: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let count = |v: &Value| v["records"].as_array().unwrap().len();
    let buckets = |v: &Value| -> usize {
        v["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["buckets"].as_object().unwrap().len())
            .sum()
    };
    // The test file's three records are of kernels of their own.
    assert_eq!(count(&merged), count(&shipped) + 3, "{merged}");
    assert!(
        said.contains(&format!("{} pooled from several machines", buckets(&shipped))),
        "{said}"
    );
    for r in merged["records"].as_array().unwrap() {
        let from_shipped = shipped["records"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["kernel"] == r["kernel"]);
        let id = r["device_id"].as_str().unwrap();
        assert_eq!(id == "merged from 2 records", from_shipped, "{id}");
    }
    let bad = run(
        &dir,
        &[
            "cache",
            "merge",
            manifest.join("Cargo.toml").to_str().unwrap(),
            "-o",
            "-",
        ],
        &[],
    );
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("Cargo.toml: not valid JSON"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Under a CUDA tool that intercepts every launch (here compute-sanitizer's variable,
/// set by hand) `tune` says its times are the tool's, and still tunes.
#[test]
fn tune_warns_under_a_cuda_tool() {
    if !opencl() {
        return;
    }
    let dir = temp_dir("under-tool");
    let env = [("NV_SANITIZER_INJECTION_TRANSPORT_TYPE", "uds")];
    let out = run(&dir, &["tune", "--shape", "8x8x8", "--json"], &env);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(err.contains("tune runs under compute-sanitizer"), "{err}");
    let j: Value = serde_json::from_str(ok(out).trim()).unwrap();
    assert!(j["best"].is_string(), "{j}");
    // The JSON says it too, so that a saved result does.
    assert!(
        j["under_tool"]
            .as_str()
            .is_some_and(|t| t.starts_with("compute-sanitizer")),
        "{j}"
    );
    // Without the variable, no warning.
    let out = run(&dir, &["tune", "--shape", "8x8x8", "--json"], &[]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("warning"));
    let j: Value = serde_json::from_str(ok(out).trim()).unwrap();
    assert!(j["under_tool"].is_null(), "{j}");
    let _ = std::fs::remove_dir_all(&dir);
}
