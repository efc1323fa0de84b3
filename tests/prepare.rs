//! `k::prepare(&device)` compiles a kernel's table configs before its first calls (issue
//! 12): once, into the device's kernel map, so that neither a second prepare nor a launch
//! of a prepared config at its shape compiles anything. One test in its own binary: the
//! compile counters are per process, and no other test may compile meanwhile.

mod common;

use common::*;
use crossgemm::prelude::*;

/// The signature of the records in tests/data/table-records.json (measured on "a CPU of
/// another name": on this machine both entries are starting points).
#[gemm_kernel(targets(opencl_cpu), records = none, records = "tests/data/table-records.json")]
fn prepared(x: Matrix<f32>, w: Matrix<f32, ColMajor>) -> Matrix<f32> {
    x * w
}

#[gemm_kernel(targets(opencl_cpu), records = none)]
fn unprepared(x: Matrix<f32>, w: Matrix<f32, ColMajor>) -> Matrix<f32> {
    x * w
}

#[test]
fn prepare_compiles_the_table_configs_once_and_launches_use_them() {
    // The only test of this binary sets it, before any call reads it: a view of odd
    // pitch below is staged whatever its size.
    std::env::set_var("CROSSGEMM_STAGE", "always");
    let Some(dev) = opencl_device_for("prepare", prepared::spec()) else {
        return;
    };
    // A cache folder of its own: the first compiles are real compiles.
    let dir = isolated_cache("prepare");
    let compiles = || crossgemm::compile_stats().compiles;

    let before = compiles();
    let r = prepared::prepare(&dev).unwrap();
    assert_eq!(r.target, "opencl_cpu");
    assert!(r.failed.is_empty(), "{r:?}");
    // The table's entries (a winner for that other CPU and a starting point), one compile
    // per distinct build: the two share their config and build variant here.
    let table = prepared::spec().targets()[0].table();
    assert_eq!(table.len(), 2);
    assert_eq!(r.prepared.len(), 1, "{r:?}");
    for (cfg, shape) in &r.prepared {
        assert!(
            table.iter().any(|s| s.config == *cfg && s.shape == *shape),
            "{cfg} {shape:?}"
        );
    }
    // And the row copies of staged f32 operands: words of 4, 8 or 16 bytes.
    assert_eq!(r.helpers, ["cg_row_copy_16", "cg_row_copy_8", "cg_row_copy_4"], "{r:?}");
    assert!(r.failed_helpers.is_empty(), "{r:?}");
    let built = (r.prepared.len() + r.helpers.len()) as u64;
    assert_eq!(compiles() - before, built);

    // Again: in the device's kernel map already.
    let again = prepared::prepare(&dev).unwrap();
    assert_eq!(again.prepared, r.prepared);
    assert_eq!(compiles() - before, built, "a second prepare compiles nothing");

    // A launch of a prepared config at its shape compiles nothing, and is right.
    let (cfg, [m, n, k]) = r.prepared[0];
    let x = Matrix::<f32>::from_host(&dev, m, k, &ramp(m * k, 1)).unwrap();
    let w = Matrix::<f32, ColMajor>::from_host(&dev, k, n, &ramp(k * n, 2)).unwrap();
    let mut out = Matrix::<f32>::zeros(&dev, m, n).unwrap();
    prepared::run_with(&cfg, &x, &w, &mut out).unwrap();
    assert_eq!(compiles() - before, built, "the launch used the prepared kernel");
    assert_close(
        &out.to_host().unwrap(),
        &prepared::reference(&x, &w).unwrap(),
        k,
        false,
        "prepared",
    );

    // X as a view of odd pitch (rows of K + 1 floats, 4-byte aligned) is staged: its rows
    // copied by the prepared row copy into rows of K floats, which the prepared config
    // reads as it read the packed X (K is a multiple of 4). Nothing compiles.
    let wide_data = ramp(m * (k + 1), 3);
    let wide = Matrix::<f32>::from_host(&dev, m, k + 1, &wide_data).unwrap();
    let xv = wide.strided(0, m, k, k + 1).unwrap();
    let staged = crossgemm::__private::staged_operands();
    prepared::run_with(&cfg, &xv, &w, &mut out).unwrap();
    assert_eq!(crossgemm::__private::staged_operands() - staged, 1, "X was staged");
    assert_eq!(
        compiles() - before,
        built,
        "the staged launch used the prepared row copy"
    );
    let packed: Vec<f32> = wide_data.chunks(k + 1).flat_map(|row| &row[..k]).copied().collect();
    let xp = Matrix::<f32>::from_host(&dev, m, k, &packed).unwrap();
    assert_close(
        &out.to_host().unwrap(),
        &prepared::reference(&xp, &w).unwrap(),
        k,
        false,
        "prepared, staged",
    );

    // No table: only the row copies, built already.
    let none = unprepared::prepare(&dev).unwrap();
    assert!(none.prepared.is_empty() && none.failed.is_empty());
    assert_eq!(none.helpers, r.helpers);
    assert_eq!(compiles() - before, built);
    let _ = std::fs::remove_dir_all(&dir);
}
