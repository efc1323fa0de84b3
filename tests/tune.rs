//! The autotuner and its disk cache on a real device (PoCL in CI; set
//! `CROSSGEMM_TUNE_TEST_DEVICE=cuda:0` to run them on a GPU). Without an OpenCL device
//! the tests are skipped, unless `CROSSGEMM_REQUIRE_OPENCL=1`.
//!
//! Behaviour that depends on the environment (`CROSSGEMM_TUNE`, `CROSSGEMM_CACHE_DIR`)
//! or on a fresh process runs in a child: this test binary, re-run on one `child_*` test
//! with `CROSSGEMM_TUNE_CHILD` set. Those tests do nothing in a normal run.

mod common;

use common::ramp;
use crossgemm::prelude::*;
use crossgemm::{FailStage, TuneOptions, TuneReport};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

// No config table (`records = none`): what is tested is the tuner and the cache alone,
// whatever PoCL's device name and the shipped records say.
#[gemm_kernel(records = none)]
fn tuned_bias(a: Matrix<f16>, b: Matrix<f16, ColMajor>, bias: Row<f32>) -> Matrix<f32> {
    a * b + bias
}

/// Small and ragged: every element is verified, compiles dominate on PoCL.
const SHAPE: (usize, usize, usize) = (37, 29, 45);
/// Another power-of-two bucket.
const SHAPE2: (usize, usize, usize) = (70, 20, 33);
/// Candidates per run: enough for a winner and a loser, few enough for 2 CPU cores.
const MAX: usize = 3;

fn device() -> Option<Device> {
    if let Ok(id) = std::env::var("CROSSGEMM_TUNE_TEST_DEVICE") {
        return Some(Device::open(id.trim()).expect("CROSSGEMM_TUNE_TEST_DEVICE names a device"));
    }
    let d = Device::list().into_iter().find(|d| d.info().kind == Backend::Opencl);
    if d.is_none() {
        assert!(
            std::env::var("CROSSGEMM_REQUIRE_OPENCL").as_deref() != Ok("1"),
            "CROSSGEMM_REQUIRE_OPENCL=1 but no OpenCL device was found"
        );
        eprintln!("no OpenCL device: tuner tests skipped");
    }
    d
}

struct Ops {
    a: Matrix<f16>,
    b: Matrix<f16, ColMajor>,
    bias: Row<f32>,
    out: Matrix<f32>,
}

/// Deterministic operands, so that a child process sees the same problem.
fn ops(dev: &Device, (m, n, k): (usize, usize, usize)) -> Ops {
    let v = ramp;
    let h = |x: Vec<f32>| x.into_iter().map(f16::from_f32).collect::<Vec<_>>();
    Ops {
        a: Matrix::from_host(dev, m, k, &h(v(m * k, 1))).unwrap(),
        b: Matrix::from_host(dev, k, n, &h(v(k * n, 2))).unwrap(),
        bias: Row::from_host(dev, &v(n, 3)).unwrap(),
        out: Matrix::zeros(dev, m, n).unwrap(),
    }
}

fn assert_matches_reference(o: &Ops, got: &[f32], what: &str) {
    let want = tuned_bias::reference(&o.a, &o.b, &o.bias).unwrap();
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-4 * (1.0 + w.abs()),
            "{what}: element {i}: got {g}, reference {w}"
        );
    }
}

/// Runs `config` explicitly and checks the result.
fn check_config(o: &mut Ops, config: &crossgemm::TileConfig) {
    tuned_bias::run_with(config, &o.a, &o.b, &o.bias, &mut o.out).unwrap();
    let got = o.out.to_host().unwrap();
    assert_matches_reference(o, &got, &format!("winner {config}"));
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("crossgemm-tune-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn opts(dir: &Path) -> TuneOptions {
    TuneOptions {
        cache_dir: Some(dir.to_path_buf()),
        max_candidates: Some(MAX),
        ..TuneOptions::default()
    }
}

fn tune(o: &mut Ops, opts: &TuneOptions) -> TuneReport {
    crossgemm::tune::tune_with(
        &tuned_bias::SPEC,
        &[o.a.__arg(), o.b.__arg(), o.bias.__arg()],
        o.out.__out(),
        opts,
    )
    .unwrap()
}

/// A child's starting point: `shape` tuned (the process's options, no progress) with the
/// planner's first candidate made slow, so that the winner is not the planner's default.
fn tune_past_the_default(dev: &Device, shape: (usize, usize, usize)) -> TuneReport {
    let mut opts = TuneOptions::from_env();
    opts.inject.slow = vec![0];
    opts.progress = false;
    tune(&mut ops(dev, shape), &opts)
}

/// What the tune of `r` reported for its candidate `i` (which must have failed).
fn failure_of(r: &TuneReport, i: usize) -> &crossgemm::tune::Failure {
    r.failed
        .iter()
        .find(|f| f.config == r.candidates[i])
        .unwrap_or_else(|| panic!("candidate {i} did not fail: {r:#?}"))
}

/// The tuning cache's files in `dir` (the compiled-binary cache's `bin/` folder aside).
/// The medians a tune picked its winner by: the final round's when there was one (the
/// first pass's `timings` were taken at other clocks), else the first pass's.
fn decided(r: &TuneReport) -> &[crossgemm::Timing] {
    if r.final_round.is_empty() {
        &r.timings
    } else {
        &r.final_round
    }
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "bin")
        .collect();
    v.sort();
    v
}

/// Re-runs this binary on `test` with `env`, and returns its output (it must succeed).
fn child(test: &str, env: &[(&str, String)]) -> Output {
    let child = spawn(test, env);
    wait(child, test)
}

fn spawn(test: &str, env: &[(&str, String)]) -> std::process::Child {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([test, "--exact", "--nocapture", "--test-threads=1"]);
    for v in [
        "CROSSGEMM_TUNE",
        "CROSSGEMM_TUNE_EXACT",
        "CROSSGEMM_ALWAYS_COMPILE",
        "CROSSGEMM_LOG",
    ] {
        c.env_remove(v);
    }
    c.env("CROSSGEMM_TUNE_CHILD", "1")
        .env("CROSSGEMM_TUNE_MAX", MAX.to_string());
    if let Some(d) = device() {
        c.env("CROSSGEMM_TUNE_TEST_DEVICE", d.info().id.clone());
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    c.spawn().unwrap()
}

fn wait(child: std::process::Child, test: &str) -> Output {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "child `{test}` failed:\n--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `(tunes, disk_hits, compiled)` as a child printed them.
fn child_stats(out: &Output) -> (u64, u64, u64) {
    let text = String::from_utf8_lossy(&out.stdout);
    // The harness prints "test child_launch ... " before the test's own output.
    let line = text
        .lines()
        .find_map(|l| l.split_once("CHILD-STATS ").map(|(_, s)| s.trim()))
        .unwrap_or_else(|| panic!("no stats line in:\n{text}"));
    let v: Vec<u64> = line.split(' ').map(|x| x.parse().unwrap()).collect();
    (v[0], v[1], v[2])
}

fn is_child() -> bool {
    std::env::var_os("CROSSGEMM_TUNE_CHILD").is_some()
}

fn child_shape() -> (usize, usize, usize) {
    match std::env::var("CROSSGEMM_TUNE_CHILD_SHAPE").as_deref() {
        Ok("2") => SHAPE2,
        _ => SHAPE,
    }
}

/// Child: one plain launch (whatever `CROSSGEMM_TUNE` says), checked; prints the
/// tuner's counters. With `CROSSGEMM_TUNE_CHILD_LAUNCH_FAULT` set, the first launch of
/// the chosen winner fails as a launch the driver refuses.
#[test]
fn child_launch() {
    if !is_child() {
        return;
    }
    if std::env::var_os("CROSSGEMM_TUNE_CHILD_LAUNCH_FAULT").is_some() {
        crossgemm::tune::set_launch_inject(crossgemm::tune::Inject {
            launch_failure: 1,
            ..Default::default()
        });
    }
    let dev = device().unwrap();
    let mut o = ops(&dev, child_shape());
    tuned_bias_into(&o.a, &o.b, &o.bias, &mut o.out).unwrap();
    let got = o.out.to_host().unwrap();
    assert_matches_reference(&o, &got, "plain launch");
    let s = crossgemm::tune_stats();
    println!("CHILD-STATS {} {} {}", s.tunes, s.disk_hits, s.compiled);
    println!("CHILD-VARIANTS launch {} {}", s.variant_checks, s.variant_failures);
}

/// Child: the generated `tune` function, which must find the parent's winner.
#[test]
fn child_typed_tune() {
    if !is_child() {
        return;
    }
    let dev = device().unwrap();
    let mut o = ops(&dev, child_shape());
    let r = tuned_bias::tune(&o.a, &o.b, &o.bias, &mut o.out).unwrap();
    assert!(r.cache_hit && r.compiled == 0 && r.candidates.is_empty(), "{r:#?}");
    println!("CHILD-BEST {}", r.best);
    check_config(&mut o, &r.best);
    // And plain launches use it without tuning.
    tuned_bias_into(&o.a, &o.b, &o.bias, &mut o.out).unwrap();
    assert_matches_reference(&o, &o.out.to_host().unwrap(), "plain launch");
    let s = crossgemm::tune_stats();
    println!("CHILD-STATS {} {} {}", s.tunes, s.disk_hits, s.compiled);
}

/// The final round: the fastest few of the first pass, timed again together, and the
/// winner one of them at its final-round median. The band is opened for the test, so
/// that every timed candidate (3) goes to the round whatever PoCL's noise.
#[test]
fn the_winner_comes_from_the_final_round() {
    let Some(dev) = device() else { return };
    let mut o = ops(&dev, SHAPE);
    let dir = temp_dir("final");
    let r = tune(
        &mut o,
        &TuneOptions {
            inject: crossgemm::tune::Inject {
                final_band: Some(f64::INFINITY),
                ..Default::default()
            },
            ..opts(&dir)
        },
    );
    assert_eq!(r.timings.len(), MAX, "{r:#?}");
    assert_eq!(r.final_round.len(), MAX, "{r:#?}");
    for f in &r.final_round {
        assert!(
            r.timings.iter().any(|t| t.config == f.config),
            "finalist {} was not timed: {r:#?}",
            f.config
        );
    }
    let won = r.final_round.iter().find(|f| f.config == r.best);
    assert_eq!(won.map(|f| f.ms), Some(r.best_ms), "{r:#?}");
    check_config(&mut o, &r.best);
    // The cache keeps the finalists' final-round medians (what records and `cache merge`
    // decide on), not their first-pass ones.
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(r.cache_file.as_ref().unwrap()).unwrap()).unwrap();
    let stored = file["winners"][&r.shape_key]["timings"]
        .as_array()
        .unwrap_or_else(|| panic!("{file}"));
    for f in &r.final_round {
        let us = stored
            .iter()
            .find(|t| t["config"] == serde_json::to_value(f.config).unwrap())
            .and_then(|t| t["us"].as_f64())
            .unwrap_or_else(|| panic!("{} not stored: {file}", f.config));
        assert!(
            (us - f.ms * 1e3).abs() <= 1e-9 * us.abs(),
            "{}: {us} us stored, {} ms",
            f.config,
            f.ms
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    // With the default band a finalist is within 10% of the first pass's fastest.
    let dir = temp_dir("final-default");
    let r = tune(&mut o, &opts(&dir));
    let _ = std::fs::remove_dir_all(&dir);
    let fastest = r.timings.iter().map(|t| t.ms).fold(f64::INFINITY, f64::min);
    for f in &r.final_round {
        let first = r.timings.iter().find(|t| t.config == f.config).map(|t| t.ms).unwrap();
        assert!(
            first <= fastest * 1.10,
            "finalist {} at {first} ms, fastest {fastest}",
            f.config
        );
    }
}

#[test]
fn cache_round_trip() {
    let Some(dev) = device() else { return };
    let dir = temp_dir("roundtrip");
    let mut o = ops(&dev, SHAPE);
    let first = tune(&mut o, &opts(&dir));
    assert!(!first.cache_hit, "{first:#?}");
    assert!(
        first.candidates.len() >= 2 && first.candidates.len() <= MAX,
        "{first:#?}"
    );
    assert_eq!(first.compiled, first.candidates.len());
    assert_eq!(
        first.timings.len() + first.failed.len(),
        first.candidates.len(),
        "{first:#?}"
    );
    assert!(first.candidates.contains(&first.best) && first.best_ms.is_finite() && first.best_ms >= 0.0);
    // Of the medians the winner was picked by (the final round's, when there was one):
    // the fastest, or a config it tied with (within 5 % at most), chosen by the planner's
    // order and reported as the tie's winner.
    let min = decided(&first).iter().map(|t| t.ms).fold(f64::INFINITY, f64::min);
    assert!(
        first.best_ms == min || (first.tied.first() == Some(&first.best) && first.best_ms <= 1.05 * min),
        "{first:#?}"
    );
    // K = 45 of f16: 90-byte rows, below 16-byte boundaries (`/u`).
    assert_eq!(first.shape_key, "pow2/u:64x32x64");
    check_config(&mut o, &first.best);
    let file = first.cache_file.clone().unwrap();
    let json = std::fs::read_to_string(&file).unwrap();
    assert!(
        json.contains("\"version\": 1,") && json.contains("\"pow2/u:64x32x64\": {"),
        "{json}"
    );
    assert!(
        json.contains(&format!("\"device_id\": \"{}\"", dev.info().id)),
        "{json}"
    );
    // Nothing but the cache file is left in the folder (no lock, no temp file).
    assert_eq!(files(&dir).len(), 1, "{:?}", files(&dir));

    // Second call in this process: a hit, nothing compiled.
    let second = tune(&mut o, &opts(&dir));
    assert!(second.cache_hit && second.compiled == 0, "{second:#?}");
    assert_eq!(second.best, first.best);

    // A fresh process: the generated `tune` and a plain launch both hit the cache.
    let out = child(
        "child_typed_tune",
        &[("CROSSGEMM_CACHE_DIR", dir.display().to_string())],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("CHILD-BEST {}", first.best)), "{text}");
    let (tunes, hits, compiled) = child_stats(&out);
    assert_eq!((tunes, compiled), (0, 0), "{text}");
    assert!(hits >= 1, "{text}");

    // Another shape in the same bucket also hits; exact keys do not.
    let mut o2 = ops(&dev, (40, 30, 50));
    assert!(tune(&mut o2, &opts(&dir)).cache_hit);
    let exact = TuneOptions {
        exact_shape: true,
        ..opts(&dir)
    };
    let r = tune(&mut o2, &exact);
    assert!(!r.cache_hit && r.shape_key == "exact/u:40x30x50", "{r:#?}");
    // Forcing retunes over a cached winner.
    let forced = TuneOptions {
        force: true,
        ..opts(&dir)
    };
    assert!(!tune(&mut o, &forced).cache_hit);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn corrupt_cache_file_is_a_warning_and_a_retune() {
    let Some(dev) = device() else { return };
    let dir = temp_dir("corrupt");
    let mut o = ops(&dev, SHAPE);
    let r = tune(&mut o, &opts(&dir));
    let file = r.cache_file.unwrap();
    for (what, bad) in [
        ("garbage", &b"\x00{{ not json"[..]),
        ("future version", br#"{"format":"crossgemm-tune-cache","version":99}"#),
    ] {
        std::fs::write(&file, bad).unwrap();
        let out = child("child_launch", &[("CROSSGEMM_CACHE_DIR", dir.display().to_string())]);
        let err = String::from_utf8_lossy(&out.stderr);
        let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning: tuning cache")).collect();
        assert_eq!(warnings.len(), 1, "{what}: {err}");
        assert!(
            warnings[0].contains(&file.display().to_string()) && warnings[0].contains("retuning"),
            "{}",
            warnings[0]
        );
        let (tunes, _, compiled) = child_stats(&out);
        assert!(
            tunes == 1 && compiled >= 1,
            "{what}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        // The retune replaced the bad file with a good one.
        let json = std::fs::read_to_string(&file).unwrap();
        assert!(
            json.contains("\"version\": 1,") && json.contains("\"winners\""),
            "{what}: {json}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn two_processes_tune_into_one_cache() {
    let Some(_dev) = device() else { return };
    let dir = temp_dir("concurrent");
    let env = |shape: &str| {
        vec![
            ("CROSSGEMM_CACHE_DIR", dir.display().to_string()),
            ("CROSSGEMM_TUNE_CHILD_SHAPE", shape.to_string()),
        ]
    };
    // Same shape twice and a second shape, at once. Tunes on one device take turns
    // (cache::TuningLock), so of the two same-shape processes one tunes and the other
    // finds its winner; the third tunes its own bucket.
    let kids: Vec<_> = ["1", "1", "2"].iter().map(|s| spawn("child_launch", &env(s))).collect();
    let mut tunes = Vec::new();
    for k in kids {
        let out = wait(k, "child_launch");
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("warning"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        tunes.push(child_stats(&out).0);
    }
    assert_eq!((tunes[0] + tunes[1], tunes[2]), (1, 1), "tunes per process: {tunes:?}");
    let names = files(&dir);
    assert_eq!(names.len(), 1, "only the cache file is left: {names:?}");
    let json = std::fs::read_to_string(dir.join(&names[0])).unwrap();
    assert!(
        json.contains("\"pow2/u:64x32x64\": {") && json.contains("\"pow2r/u:128x32x64\": {"),
        "{json}"
    );
    // A later process hits for both shapes.
    for s in ["1", "2"] {
        let (tunes, hits, compiled) = child_stats(&child("child_launch", &env(s)));
        assert_eq!((tunes, hits, compiled), (0, 1, 0), "shape {s}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn wrong_candidate_is_rejected_and_remembered() {
    let Some(dev) = device() else { return };
    let dir = temp_dir("wrong");
    let mut o = ops(&dev, SHAPE);
    let mut bad = opts(&dir);
    bad.inject.wrong_result = vec![0];
    let r = tune(&mut o, &bad);
    assert!(r.candidates.len() >= 2, "{r:#?}");
    let f = failure_of(&r, 0);
    assert_eq!(f.stage, FailStage::WrongResult);
    assert!(f.reason.contains("wrong result") && !f.from_cache, "{}", f.reason);
    assert_ne!(r.best, r.candidates[0]);
    assert!(!r.timings.iter().any(|t| t.config == r.candidates[0]));
    check_config(&mut o, &r.best);

    // Not retried while source and driver are the same...
    let again = tune(
        &mut o,
        &TuneOptions {
            force: true,
            ..opts(&dir)
        },
    );
    assert_eq!(again.compiled, again.candidates.len() - 1, "{again:#?}");
    let f = again.failed.iter().find(|f| f.config == r.candidates[0]).unwrap();
    assert!(f.from_cache && f.stage == FailStage::WrongResult);
    // ...unless asked to.
    let all = tune(
        &mut o,
        &TuneOptions {
            force: true,
            always_compile: true,
            ..opts(&dir)
        },
    );
    assert_eq!(all.compiled, all.candidates.len());
    // Only timing may stop a candidate (a run stalled by a loaded machine); none fails.
    assert!(all.failed.iter().all(|f| f.stage == FailStage::TooSlow), "{all:#?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compile_failure_is_recorded_and_skipped() {
    let Some(dev) = device() else { return };
    let dir = temp_dir("compile");
    let mut o = ops(&dev, SHAPE);
    let mut bad = opts(&dir);
    bad.inject.compile_error = vec![1];
    let r = tune(&mut o, &bad);
    let f = failure_of(&r, 1);
    assert_eq!(f.stage, FailStage::Compile);
    assert!(f.reason.contains("injected compile failure"), "{}", f.reason);
    assert_ne!(r.best, r.candidates[1]);
    check_config(&mut o, &r.best);
    let json = std::fs::read_to_string(r.cache_file.unwrap()).unwrap();
    assert!(
        json.contains("\"compile\"") && json.contains("injected compile failure"),
        "{json}"
    );

    let again = tune(
        &mut o,
        &TuneOptions {
            force: true,
            ..opts(&dir)
        },
    );
    assert_eq!(again.compiled, again.candidates.len() - 1);
    assert!(again
        .failed
        .iter()
        .any(|f| f.config == r.candidates[1] && f.from_cache && f.stage == FailStage::Compile));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tune_modes_are_honoured() {
    let Some(_dev) = device() else { return };
    let dir = temp_dir("modes");
    let run = |mode: &str| {
        child_stats(&child(
            "child_launch",
            &[
                ("CROSSGEMM_CACHE_DIR", dir.display().to_string()),
                ("CROSSGEMM_TUNE", mode.to_string()),
            ],
        ))
    };
    assert_eq!(run("off"), (0, 0, 0));
    assert!(files(&dir).is_empty(), "off writes nothing");
    assert_eq!(run("cached"), (0, 0, 0));
    assert!(files(&dir).is_empty(), "cached never tunes");
    let (tunes, hits, compiled) = run("full");
    assert!(tunes == 1 && hits == 0 && compiled >= 1);
    assert_eq!(files(&dir).len(), 1);
    assert_eq!(run("cached"), (0, 1, 0));
    assert_eq!(run("off"), (0, 0, 0));
    // Unset means full: a hit now.
    let (tunes, hits, _) = child_stats(&child(
        "child_launch",
        &[("CROSSGEMM_CACHE_DIR", dir.display().to_string())],
    ));
    assert_eq!((tunes, hits), (0, 1));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn host_device_has_nothing_to_tune() {
    let dev = Device::host();
    let mut o = ops(&dev, SHAPE);
    let e = crossgemm::tune::tune_with(
        &tuned_bias::SPEC,
        &[o.a.__arg(), o.b.__arg(), o.bias.__arg()],
        o.out.__out(),
        &TuneOptions::default(),
    );
    assert!(matches!(e, Err(GemmError::Unsupported(_))), "{e:?}");
}

#[test]
fn too_slow_candidate_is_reported_not_cached() {
    let Some(dev) = device() else { return };
    let dir = temp_dir("slow");
    let mut o = ops(&dev, SHAPE);
    let mut slow = opts(&dir);
    slow.inject.slow = vec![1];
    let r = tune(&mut o, &slow);
    assert!(r.candidates.len() >= 2, "{r:#?}");
    let f = failure_of(&r, 1);
    assert_eq!(f.stage, FailStage::TooSlow);
    assert!(f.reason.contains("best so far"), "{}", f.reason);
    assert_ne!(r.best, r.candidates[1]);
    let json = std::fs::read_to_string(r.cache_file.unwrap()).unwrap();
    assert!(
        !json.contains("too_slow"),
        "too-slow candidates stay out of the cache: {json}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A candidate whose launch runs out of device memory (a split-K workspace that does not
/// fit beside the caller's buffers) is not at fault: reported, not cached, and the search
/// goes on. Cached, it would be barred from every shape of the kernel for good.
#[test]
fn an_out_of_memory_launch_is_reported_not_cached() {
    let Some(dev) = device() else { return };
    let dir = temp_dir("oom");
    let mut o = ops(&dev, SHAPE);
    let mut oom = opts(&dir);
    oom.inject.out_of_memory = vec![1];
    let r = tune(&mut o, &oom);
    assert!(r.candidates.len() >= 2, "{r:#?}");
    let f = failure_of(&r, 1);
    assert_eq!(f.stage, FailStage::OutOfMemory);
    assert!(f.reason.contains("out of memory") && !f.from_cache, "{}", f.reason);
    assert_ne!(r.best, r.candidates[1]);
    check_config(&mut o, &r.best);
    let json = std::fs::read_to_string(r.cache_file.unwrap()).unwrap();
    assert!(
        !json.contains("out_of_memory") && !json.contains("out of memory"),
        "an out-of-memory launch stays out of the cache: {json}"
    );

    // The next tune tries it again, and it passes.
    let again = tune(
        &mut o,
        &TuneOptions {
            force: true,
            ..opts(&dir)
        },
    );
    assert!(again.failed.iter().all(|f| f.config != r.candidates[1]), "{again:#?}");
    assert!(again.timings.iter().any(|t| t.config == r.candidates[1]), "{again:#?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Zeros from the caller (padding, a zero-initialised buffer) made the old check, on the
/// caller's operands, vacuous: a candidate that writes zeros matched a zero reference.
/// The tuner checks on its own random operands, so it fails.
#[test]
fn zero_operands_do_not_make_the_check_vacuous() {
    let Some(dev) = device() else { return };
    let dir = temp_dir("zeros");
    let (m, n, k) = SHAPE;
    let zeros = |len: usize| vec![f16::ZERO; len];
    let mut o = Ops {
        a: Matrix::from_host(&dev, m, k, &zeros(m * k)).unwrap(),
        b: Matrix::from_host(&dev, k, n, &zeros(k * n)).unwrap(),
        bias: Row::from_host(&dev, &vec![0.0f32; n]).unwrap(),
        out: Matrix::zeros(&dev, m, n).unwrap(),
    };
    let mut bad = opts(&dir);
    bad.inject.zero_output = vec![0];
    let r = tune(&mut o, &bad);
    assert!(
        r.check.contains("every element") && r.check.contains("tuner's operands"),
        "{}",
        r.check
    );
    let f = r
        .failed
        .iter()
        .find(|f| f.config == r.candidates[0])
        .unwrap_or_else(|| panic!("the zero-writing candidate passed: {r:#?}"));
    assert_eq!(f.stage, FailStage::WrongResult);
    assert_ne!(r.best, r.candidates[0]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A shape checked the sampled way: 512x512 outputs (the test lowers the full-reference
/// limit so that this runs in seconds on PoCL; the default is M·N·K = 2^27).
const LARGE: (usize, usize, usize) = (512, 512, 64);

fn sampled_opts(dir: &Path) -> TuneOptions {
    let mut o = opts(dir);
    o.inject.full_check_max = Some(0);
    o
}

/// One block tile in the middle of a candidate's output off by one, where no sampled
/// point looks (the issue's case: a 128x128 tile of a 4096² output escaped ~580 sampled
/// points with probability 0.6): the whole-output comparison rejects it.
#[test]
fn a_wrong_tile_is_rejected() {
    let Some(dev) = device() else { return };
    let dir = temp_dir("tile");
    let mut o = ops(&dev, LARGE);
    let mut bad = sampled_opts(&dir);
    bad.inject.wrong_tile = vec![1];
    // No random points: only the whole-output comparison looks inside the output.
    bad.inject.sample_count = Some(0);
    let r = tune(&mut o, &bad);
    assert!(
        r.check.contains("sampled elements")
            && r.check.contains("whole 512x512 output")
            && r.check.contains("on the device"),
        "{}",
        r.check
    );
    let f = r
        .failed
        .iter()
        .find(|f| f.config == r.candidates[1])
        .unwrap_or_else(|| panic!("the wrong tile passed: {r:#?}"));
    assert!(
        f.stage == FailStage::WrongResult
            && f.reason.contains("whole-output comparison")
            && f.reason.contains("differs from"),
        "{}",
        f.reason
    );
    assert!(r.check.starts_with("68 sampled elements"), "{}", r.check);
    assert_ne!(r.best, r.candidates[1]);
    check_config(&mut o, &r.best);
    let _ = std::fs::remove_dir_all(&dir);
}

/// One wrong element in the middle, which the sampled points miss: the whole-output
/// comparison with the trusted (first verified) candidate finds it, and the host
/// reference says which side is wrong, also when it is the trusted one.
#[test]
fn a_single_wrong_element_is_found_by_the_whole_comparison() {
    let Some(dev) = device() else { return };
    let dir = temp_dir("element");
    let mut o = ops(&dev, LARGE);
    let mut bad = sampled_opts(&dir);
    bad.inject.wrong_element = vec![1];
    let r = tune(&mut o, &bad);
    let f = r
        .failed
        .iter()
        .find(|f| f.config == r.candidates[1])
        .unwrap_or_else(|| panic!("the wrong element passed: {r:#?}"));
    assert!(
        f.stage == FailStage::WrongResult
            && f.reason.contains("whole-output comparison")
            && f.reason.contains("this one is wrong at 1"),
        "{}",
        f.reason
    );
    // The trusted candidate itself wrong at one element: the next one shows it, the
    // trusted config fails and loses its timing.
    let mut bad = sampled_opts(&dir);
    bad.force = true;
    bad.always_compile = true;
    bad.inject.wrong_element = vec![0];
    let r = tune(&mut o, &bad);
    let f = r
        .failed
        .iter()
        .find(|f| f.config == r.candidates[0])
        .unwrap_or_else(|| panic!("the wrong trusted result passed: {r:#?}"));
    assert!(
        f.stage == FailStage::WrongResult && f.reason.contains(&format!("{} is wrong at 1", r.candidates[0])),
        "{}",
        f.reason
    );
    assert!(!r.timings.iter().any(|t| t.config == r.candidates[0]), "{r:#?}");
    assert_ne!(r.best, r.candidates[0]);
    check_config(&mut o, &r.best);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Shapes that cannot be held are an error, not an abort: a 4 TiB output is refused
/// when it is allocated, and an untyped call whose shapes are larger than its buffers
/// (which would otherwise make the tuner allocate a 4 TiB output of its own, and kernels
/// write past the caller's) is refused before anything is allocated.
#[test]
fn a_huge_shape_is_an_error() {
    let Some(dev) = device() else { return };
    let huge = 1usize << 20;
    let e = Matrix::<f32>::zeros(&dev, huge, huge).unwrap_err();
    assert!(!e.to_string().is_empty());
    use crossgemm::untyped::Arg;
    let mut o = ops(&dev, SHAPE);
    // The same buffers with other shapes.
    fn reshape(a: Arg<'_>, huge: usize) -> Arg<'_> {
        let k = SHAPE.2;
        match a {
            Arg::Matrix {
                buf, rows, at, batch, ..
            } if rows == SHAPE.0 => Arg::Matrix {
                buf,
                rows: huge,
                cols: k,
                at,
                batch,
            },
            Arg::Matrix { buf, at, batch, .. } => Arg::Matrix {
                buf,
                rows: k,
                cols: huge,
                at,
                batch,
            },
            Arg::Vector { buf, at, batch, .. } => Arg::Vector {
                buf,
                len: huge,
                at,
                batch,
            },
            s => s,
        }
    }
    let args = [
        reshape(o.a.__arg(), huge),
        reshape(o.b.__arg(), huge),
        reshape(o.bias.__arg(), huge),
    ];
    let out = crossgemm::untyped::OutArg {
        buf: o.out.__out().buf,
        rows: huge,
        cols: huge,
        at: Default::default(),
        batch: 1,
    };
    let e = crossgemm::tune::tune_with(&tuned_bias::SPEC, &args, out, &TuneOptions::default()).unwrap_err();
    assert!(e.to_string().contains("bytes"), "{e}");
}

/// The bucket of [`SHAPE`] (pow2/u:64x32x64: rows of A and B below 16-byte boundaries): a
/// shape whose M and N every planned tile divides and whose K = 62 rows start on 4-byte
/// boundaries, and two odd ones (ragged in M, N and K for any tile, rows on 2-byte
/// boundaries: another build variant of the same bucket).
const ALIGNED: (usize, usize, usize) = (64, 32, 62);
const ODD: (usize, usize, usize) = (63, 31, 63);
const ODD2: (usize, usize, usize) = (61, 29, 61);

/// `name -> (variant checks, variant failures)` as a child printed them.
fn child_variants(out: &Output) -> std::collections::HashMap<String, (u64, u64)> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once("CHILD-VARIANTS ").map(|(_, s)| s.trim().to_string()))
        .map(|l| {
            let v: Vec<&str> = l.split(' ').collect();
            (v[0].to_string(), (v[1].parse().unwrap(), v[2].parse().unwrap()))
        })
        .collect()
}

/// Child: tunes at [`ALIGNED`] (the planner's first candidate made slow, so that the
/// winner is not the planner's default), then launches at `ALIGNED`, [`ODD`] and
/// [`ODD2`], each checked, printing the variant counters after each. With
/// `CROSSGEMM_TUNE_CHILD_FAULT` set, the first variant check gets a wrong tile; with
/// `CROSSGEMM_TUNE_CHILD_OOM`, the first variant check's launch runs out of memory.
#[test]
fn child_variant_launches() {
    if !is_child() {
        return;
    }
    let dev = device().unwrap();
    let r = tune_past_the_default(&dev, ALIGNED);
    println!("CHILD-BEST {} {}", r.best, r.candidates[0]);
    if std::env::var_os("CROSSGEMM_TUNE_CHILD_FAULT").is_some() {
        crossgemm::tune::set_launch_inject(crossgemm::tune::Inject {
            variant_wrong_tile: 1,
            ..Default::default()
        });
    }
    if std::env::var_os("CROSSGEMM_TUNE_CHILD_OOM").is_some() {
        crossgemm::tune::set_launch_inject(crossgemm::tune::Inject {
            variant_out_of_memory: 1,
            ..Default::default()
        });
    }
    for (name, shape) in [("aligned", ALIGNED), ("odd", ODD), ("odd2", ODD2)] {
        let mut o = ops(&dev, shape);
        tuned_bias_into(&o.a, &o.b, &o.bias, &mut o.out).unwrap();
        let got = o.out.to_host().unwrap();
        assert_matches_reference(&o, &got, name);
        let s = crossgemm::tune_stats();
        println!("CHILD-VARIANTS {name} {} {}", s.variant_checks, s.variant_failures);
    }
    let s = crossgemm::tune_stats();
    println!("CHILD-STATS {} {} {}", s.tunes, s.disk_hits, s.compiled);
}

/// A build-variant check whose launch runs out of device memory is not the winner's
/// fault: the launch runs it unverified (with a warning), nothing is recorded as failed,
/// nothing is tuned again, and the next launch at that variant checks it.
#[test]
fn a_variant_check_out_of_memory_runs_unverified() {
    let Some(_dev) = device() else { return };
    let dir = temp_dir("variants-oom");
    let out = child(
        "child_variant_launches",
        &[
            ("CROSSGEMM_CACHE_DIR", dir.display().to_string()),
            ("CROSSGEMM_TUNE_CHILD_OOM", "1".to_string()),
        ],
    );
    let v = child_variants(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(v["aligned"], (0, 0), "{err}");
    assert_eq!(v["odd"], (0, 0), "the check did not run to its end: {err}");
    assert_eq!(v["odd2"], (1, 0), "the same variant, checked this time: {err}");
    assert!(
        err.contains("not verified at this shape's build variant") && err.contains("out of memory"),
        "{err}"
    );
    assert_eq!(child_stats(&out).0, 1, "only the child's explicit tune");
    let json = std::fs::read_to_string(dir.join(&files(&dir)[0])).unwrap();
    assert!(!json.contains("out of memory"), "{json}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A launch whose tune fails outright (here every candidate's compile, injected) runs
/// what a `cached` launch would: the cache's winner of the nearest bucket, not the
/// planner's default, with a warning naming it (checked at the launch's build variant
/// where its tune did not verify it), and not tuned again in the process.
#[test]
fn a_failed_tune_launches_the_nearest_winner() {
    let Some(_dev) = device() else { return };
    let dir = temp_dir("failed-tune");
    let out = child(
        "child_failed_tune",
        &[("CROSSGEMM_CACHE_DIR", dir.display().to_string())],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    let line = |tag: &str| -> String {
        text.lines()
            .find_map(|l| l.split_once(tag).map(|(_, s)| s.trim().to_string()))
            .unwrap_or_else(|| panic!("no {tag} line in:\n{text}\n{err}"))
    };
    let nearest = line("CHILD-NEAREST ");
    let (config, source) = nearest.rsplit_once(' ').unwrap();
    assert_eq!(
        source, "nearest",
        "a `cached` launch would start from the nearest winner: {text}"
    );
    assert_ne!(
        config,
        line("CHILD-DEFAULT "),
        "the nearest winner is not the default: {text}"
    );
    assert!(
        err.contains("failed, using the nearest winner, of the cache's ") && err.contains(config),
        "{err}"
    );
    // The child's own tune, then the one that failed; the second launch tunes nothing.
    assert_eq!(child_stats(&out).0, 2, "{text}\n{err}");
    let v = child_variants(&out);
    assert_eq!(v["second"], v["first"], "nothing checked or tuned again: {text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Child: tunes [`SHAPE`]'s bucket (its winner not the default), then launches at
/// [`SHAPE2`] with every candidate of its tune failing to compile, twice, each checked;
/// prints the config a `cached` lookup names for `SHAPE2` and where it comes from
/// (`CHILD-NEAREST`), the planner's default there, and the counters.
#[test]
fn child_failed_tune() {
    if !is_child() {
        return;
    }
    let dev = device().unwrap();
    tune_past_the_default(&dev, SHAPE);
    let opts = TuneOptions {
        progress: false,
        ..TuneOptions::from_env()
    };
    let mut o = ops(&dev, SHAPE2);
    let args = [o.a.__arg(), o.b.__arg(), o.bias.__arg()];
    let l = crossgemm::tune::lookup(&tuned_bias::SPEC, &args, o.out.__out(), &opts).unwrap();
    println!("CHILD-NEAREST {} {}", l.config, l.source.name());
    // `lookup` follows CROSSGEMM_TUNE: under `off`, the planner's default.
    std::env::set_var("CROSSGEMM_TUNE", "off");
    let d = crossgemm::tune::lookup(&tuned_bias::SPEC, &args, o.out.__out(), &opts).unwrap();
    std::env::remove_var("CROSSGEMM_TUNE");
    println!("CHILD-DEFAULT {}", d.config);
    crossgemm::tune::set_launch_inject(crossgemm::tune::Inject {
        compile_error: (0..64).collect(),
        ..Default::default()
    });
    for name in ["first", "second"] {
        tuned_bias_into(&o.a, &o.b, &o.bias, &mut o.out).unwrap();
        assert_matches_reference(&o, &o.out.to_host().unwrap(), name);
        let s = crossgemm::tune_stats();
        println!("CHILD-VARIANTS {name} {} {}", s.variant_checks, s.variant_failures);
    }
    let s = crossgemm::tune_stats();
    println!("CHILD-STATS {} {} {}", s.tunes, s.disk_hits, s.compiled);
}

/// A winner verified at one shape is verified again before its first launch at a build
/// variant it was not verified at (here: an odd shape in the same bucket, whose ragged
/// edges take other paths), once per variant; an injected fault there is caught and the
/// launch falls back to the planner's default, with a warning.
#[test]
fn a_winner_is_checked_at_each_build_variant() {
    let Some(_dev) = device() else { return };
    let dir = temp_dir("variants");
    let out = child(
        "child_variant_launches",
        &[("CROSSGEMM_CACHE_DIR", dir.display().to_string())],
    );
    let v = child_variants(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(v["aligned"], (0, 0), "the tune verified the aligned variant: {text}");
    assert_eq!(v["odd"], (1, 0), "{text}");
    assert_eq!(v["odd2"], (1, 0), "the same variant as `odd`: {text}");

    // A fault in the check at the odd variant, under `full`: the winner is marked failed
    // in the cache and the bucket tuned again at the odd shape (verified there by the tune).
    let dir = temp_dir("variants-fault");
    let out = child(
        "child_variant_launches",
        &[
            ("CROSSGEMM_CACHE_DIR", dir.display().to_string()),
            ("CROSSGEMM_TUNE_CHILD_FAULT", "1".to_string()),
        ],
    );
    let v = child_variants(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(v["aligned"], (0, 0), "{err}");
    assert_eq!(v["odd"], (1, 1), "{err}");
    assert_eq!(
        v["odd2"],
        (1, 1),
        "the retuned winner was verified at this variant: {err}"
    );
    assert!(
        err.contains("failed its check at 63x31x63") && err.contains("every element") && err.contains("tuning again"),
        "{err}"
    );
    let (tunes, _, _) = child_stats(&out);
    assert_eq!(tunes, 2, "{}", String::from_utf8_lossy(&out.stdout));
    let text = String::from_utf8_lossy(&out.stdout);
    let best = text
        .lines()
        .find_map(|l| l.split_once("CHILD-BEST ").map(|(_, s)| s.to_string()))
        .unwrap();
    let json = std::fs::read_to_string(dir.join(&files(&dir)[0])).unwrap();
    assert!(
        json.contains("\"wrong_result\"") && json.contains("every element"),
        "{best}: {json}"
    );

    // The same under `cached`, which never tunes: the planner's default, checked too.
    let dir = temp_dir("variants-cached");
    let out = child(
        "child_variant_launches",
        &[
            ("CROSSGEMM_CACHE_DIR", dir.display().to_string()),
            ("CROSSGEMM_TUNE_CHILD_FAULT", "1".to_string()),
            ("CROSSGEMM_TUNE", "cached".to_string()),
        ],
    );
    let v = child_variants(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(v["odd"], (2, 1), "the winner failed, the default passed: {err}");
    assert_eq!(v["odd2"], (2, 1), "both outcomes are remembered: {err}");
    assert!(
        err.contains("failed its check at 63x31x63") && err.contains("using"),
        "{err}"
    );
    assert_eq!(child_stats(&out).0, 1, "only the child's explicit tune");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A cached winner that passes its checks but fails to launch (a record from another
/// driver, a device out of some resource) is forgotten and replaced, once, and the call
/// still gives the right output: under `full` the winner is marked failed in the cache
/// (stage `launch`) and the bucket tuned again without it; under `cached`, which never
/// tunes, the planner's default runs.
#[test]
fn a_winner_that_fails_to_launch_is_replaced() {
    let Some(dev) = device() else { return };
    let dir = temp_dir("launch-fault");
    let mut o = ops(&dev, SHAPE);
    let mut first = opts(&dir);
    // The planner's first candidate (its default) made slow: the winner is another.
    first.inject.slow = vec![0];
    let r = tune(&mut o, &first);
    assert_ne!(r.best, r.candidates[0], "{r:#?}");
    let winner = r.best.to_string();

    let cached_dir = temp_dir("launch-fault-cached");
    for f in files(&dir) {
        std::fs::copy(dir.join(&f), cached_dir.join(&f)).unwrap();
    }

    let fault = [
        ("CROSSGEMM_CACHE_DIR", dir.display().to_string()),
        ("CROSSGEMM_TUNE_CHILD_LAUNCH_FAULT", "1".to_string()),
    ];
    let out = child("child_launch", &fault);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("config {winner} failed to launch"))
            && err.contains("injected launch failure")
            && err.contains("tuning again"),
        "{err}"
    );
    assert_eq!(child_stats(&out).0, 1, "one tune, without the failed winner: {err}");
    let json = std::fs::read_to_string(dir.join(&files(&dir)[0])).unwrap();
    let file: serde_json::Value = serde_json::from_str(&json).unwrap();
    let best = serde_json::to_value(r.best).unwrap();
    assert!(
        file["failed"].as_array().unwrap().iter().any(|f| f["config"] == best
            && f["stage"] == "launch"
            && f["reason"].as_str().unwrap().contains("injected launch failure")),
        "the failure is recorded: {json}"
    );
    assert!(
        file["winners"]
            .as_object()
            .unwrap()
            .values()
            .all(|w| w["config"] != best),
        "the failed winner is no longer the bucket's winner: {json}"
    );
    // The next process takes the new winner without tuning or failing.
    let out = child("child_launch", &[("CROSSGEMM_CACHE_DIR", dir.display().to_string())]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(child_stats(&out).0, 0, "{err}");
    assert!(!err.contains("failed to launch"), "{err}");

    let out = child(
        "child_launch",
        &[
            ("CROSSGEMM_CACHE_DIR", cached_dir.display().to_string()),
            ("CROSSGEMM_TUNE_CHILD_LAUNCH_FAULT", "1".to_string()),
            ("CROSSGEMM_TUNE", "cached".to_string()),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("config {winner} failed to launch"))
            && err.contains(&format!("using {}", r.candidates[0])),
        "{err}"
    );
    assert_eq!(child_stats(&out).0, 0, "cached mode never tunes: {err}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&cached_dir);
}

/// Without a candidate count, a problem of a few MFLOP is tuned by the first candidate
/// that passes; one that fails sends the search on down the list; a thorough tune times
/// them all, and the winner heads its tie.
#[test]
fn a_small_problem_takes_the_first_candidate_that_passes() {
    let Some(dev) = device() else { return };
    let dir = temp_dir("scope");
    let mut o = ops(&dev, SHAPE);
    let base = TuneOptions {
        cache_dir: Some(dir.clone()),
        force: true,
        ..TuneOptions::default()
    };
    let r = tune(&mut o, &base);
    assert!(r.scope.contains("first candidate that passes"), "{r:#?}");
    assert_eq!(r.timings.len(), 1, "{r:#?}");
    assert_eq!(r.compiled, 1, "{r:#?}");
    assert_eq!(r.best, r.candidates[0]);
    assert_eq!(r.skipped, r.candidates[1..].to_vec());
    assert!(!r.budget_spent);

    let mut bad = base.clone();
    bad.inject.wrong_result = vec![0];
    let r = tune(&mut o, &bad);
    assert_eq!(r.failed.len(), 1, "{r:#?}");
    assert_eq!(r.failed[0].config, r.candidates[0]);
    assert_eq!(r.timings.len(), 1, "{r:#?}");
    assert_eq!(r.best, r.candidates[1], "on to the next: {r:#?}");
    assert!(!r.skipped.contains(&r.candidates[0]) && !r.skipped.contains(&r.candidates[1]));

    let thorough = TuneOptions {
        thorough: true,
        ..base.clone()
    };
    let r = tune(&mut o, &thorough);
    assert!(r.skipped.is_empty(), "{r:#?}");
    assert_eq!(r.timings.len() + r.failed.len(), r.candidates.len(), "{r:#?}");
    assert_eq!(r.tied.first(), Some(&r.best), "{r:#?}");
    // The tie is judged on the medians the winner was picked by: the final round's when
    // there was one (the first pass's `timings` were taken at other clocks).
    let decided = decided(&r);
    let fastest = decided.iter().map(|t| t.ms).fold(f64::INFINITY, f64::min);
    for c in &r.tied {
        let t = decided
            .iter()
            .find(|t| t.config == *c)
            .expect("a tied config was timed");
        assert!(t.ms <= fastest * 1.05 + 1e-12, "{c}: {} vs {fastest}", t.ms);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `CROSSGEMM_TUNE_BUDGET_MS` (here through the options): once spent, the search stops
/// after the first candidate that passes, and says so.
#[test]
fn a_spent_budget_stops_the_search() {
    let Some(dev) = device() else { return };
    let dir = temp_dir("budget");
    let mut o = ops(&dev, SHAPE);
    let opts = TuneOptions {
        cache_dir: Some(dir.clone()),
        thorough: true,
        budget_ms: Some(0.001),
        ..TuneOptions::default()
    };
    let r = tune(&mut o, &opts);
    assert!(r.budget_spent, "{r:#?}");
    assert_eq!(r.timings.len(), 1, "{r:#?}");
    assert_eq!(r.skipped.len(), r.candidates.len() - 1, "{r:#?}");
    assert!(
        r.compiled < r.candidates.len() || r.candidates.len() <= 2,
        "waves: {r:#?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `cached` mode's nearest-bucket winner is checked at its first launch too.
#[test]
fn a_nearest_winner_is_checked() {
    let Some(dev) = device() else { return };
    let dir = temp_dir("nearest");
    let mut o = ops(&dev, SHAPE);
    tune(&mut o, &opts(&dir));
    let out = child(
        "child_launch",
        &[
            ("CROSSGEMM_CACHE_DIR", dir.display().to_string()),
            ("CROSSGEMM_TUNE", "cached".to_string()),
            ("CROSSGEMM_TUNE_CHILD_SHAPE", "2".to_string()),
        ],
    );
    assert_eq!(child_stats(&out).0, 0, "cached mode never tunes");
    assert_eq!(child_variants(&out)["launch"], (1, 0));
    let _ = std::fs::remove_dir_all(&dir);
}
