//! Build-time config tables (issue 12): `records = ".."` files are read by the macro, the
//! records that apply to a kernel by its mainloop signature end up in its table, and the
//! runtime starts from them: `cached` lookups use the nearest entry, a tune times it
//! first. The records in tests/data/table-records.json were measured on "a CPU of
//! another name", so on this machine they are starting points, never winners (a winner
//! needs the device's own name; `gemm_core::table` and the runtime's unit tests pin
//! that rule).

mod common;

use common::*;
use crossgemm::prelude::*;
use crossgemm::{LookupSource, TuneOptions};

/// The records' signature: f32 operands, A row-major, B column-major. Only the test's
/// records, so that the shipped ones (measured on some PoCL) cannot be nearer.
#[gemm_kernel(targets(opencl_cpu), records = none, records = "tests/data/table-records.json")]
fn from_table(x: Matrix<f32>, w: Matrix<f32, ColMajor>) -> Matrix<f32> {
    x * w
}

/// The same kernel without any records, the shipped ones included.
#[gemm_kernel(targets(opencl_cpu), records = none)]
fn without_table(x: Matrix<f32>, w: Matrix<f32, ColMajor>) -> Matrix<f32> {
    x * w
}

/// Another signature (B row-major): only the file's row-major-B record applies.
#[gemm_kernel(targets(opencl_cpu), records = none, records = "tests/data/table-records.json")]
fn other_signature(x: Matrix<f32>, w: Matrix<f32>) -> Matrix<f32> {
    x * w
}

const FILE: &str = "tests/data/table-records.json";

fn table(spec: &crossgemm::KernelSpec) -> &[crossgemm::table::Seed] {
    spec.targets()[0].table()
}

#[test]
fn the_macro_keeps_the_records_that_apply_by_signature() {
    let t = table(from_table::spec());
    assert!(t.iter().all(|s| s.device_name == "a CPU of another name"));
    let entries: Vec<(&str, &str, bool)> = t
        .iter()
        .map(|s| (s.bucket.as_str(), s.from.as_str(), s.winner))
        .collect();
    let from = |k: &str| format!("{}/{FILE}: {k}", env!("CARGO_MANIFEST_DIR"));
    assert_eq!(
        entries,
        vec![
            // The plain kernel's record: same epilogue class, a winner (on its device),
            // measured at 40x50x60, whose 240-byte rows start on 16-byte boundaries: its
            // unmarked key gets the mark a launch of that shape looks up.
            ("pow2/a16:64x64x64", from("f32_plain_elsewhere").as_str(), true),
            ("pow2:512x512x512", from("f32_relu_elsewhere").as_str(), false),
        ]
    );
    let plan = from_table::spec().targets()[0].plan();
    assert!(t.iter().all(|s| plan.configs.contains(&s.config)), "{t:#?}");
    assert!(table(without_table::spec()).is_empty());
    // The file's third record has this kernel's signature, and only that one applies.
    let other: Vec<(&str, &str, bool)> = table(other_signature::spec())
        .iter()
        .map(|s| (s.bucket.as_str(), s.from.as_str(), s.winner))
        .collect();
    // Its row-major B has rows of N = 50 f32 (200 bytes): below 16-byte boundaries (`/u`).
    assert_eq!(other, vec![("pow2/u:64x64x64", from("f32_rowmajor_b").as_str(), true)]);
}

fn operands(dev: &Device, (m, n, k): (usize, usize, usize)) -> (Matrix<f32>, Matrix<f32, ColMajor>) {
    (
        Matrix::from_host(dev, m, k, &ramp(m * k, 1)).unwrap(),
        Matrix::from_host(dev, k, n, &ramp(k * n, 2)).unwrap(),
    )
}

/// An empty cache folder: the table is all there is.
fn empty_cache(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("crossgemm-table-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_cached_lookup_starts_from_the_nearest_table_entry_and_runs_it_right() {
    let Some(dev) = opencl_device_for(
        "a_cached_lookup_starts_from_the_nearest_table_entry_and_runs_it_right",
        from_table::spec(),
    ) else {
        return;
    };
    let shape = (40, 50, 60);
    let (x, w) = operands(&dev, shape);
    let mut out = Matrix::<f32>::zeros(&dev, shape.0, shape.1).unwrap();
    let opts = TuneOptions {
        cache_dir: Some(empty_cache("lookup")),
        ..TuneOptions::default()
    };
    let args = [x.__arg(), w.__arg()];
    let l = crossgemm::tune::lookup(&from_table::SPEC, &args, out.__out(), &opts).unwrap();
    let want = table(from_table::spec())
        .iter()
        .find(|s| s.bucket == "pow2/a16:64x64x64" && s.device_name == "a CPU of another name")
        .unwrap();
    assert_eq!(l.config, want.config);
    match &l.source {
        LookupSource::Table { entry, winner } => {
            assert!(!winner, "measured on another device: a starting point");
            assert!(
                entry.contains("pow2/a16:64x64x64") && entry.contains("f32_plain_elsewhere"),
                "{entry}"
            );
        }
        other => panic!("expected the table, got {other:?}"),
    }
    // The entry's config is right here.
    from_table::run_with(&l.config, &x, &w, &mut out).unwrap();
    let got = out.to_host().unwrap();
    let reference = from_table::reference(&x, &w).unwrap();
    assert_eq!(got.len(), reference.len());
    for (i, (g, r)) in got.iter().zip(&reference).enumerate() {
        assert!((g - r).abs() <= 1e-4 * r.abs().max(1.0), "element {i}: {g} vs {r}");
    }
    // Without records the planner's default.
    let l = crossgemm::tune::lookup(&without_table::SPEC, &args, out.__out(), &opts).unwrap();
    assert_eq!(l.source, LookupSource::Default);
}

#[test]
fn a_tune_times_the_table_entry_first() {
    let Some(dev) = opencl_device_for("a_tune_times_the_table_entry_first", from_table::spec()) else {
        return;
    };
    // Another bucket than the entry's: its nearest.
    let shape = (300, 400, 500);
    let (x, w) = operands(&dev, shape);
    let mut out = Matrix::<f32>::zeros(&dev, shape.0, shape.1).unwrap();
    let opts = TuneOptions {
        cache_dir: Some(empty_cache("tune")),
        max_candidates: Some(2),
        ..TuneOptions::default()
    };
    let r = crossgemm::tune::tune_with(&from_table::SPEC, &[x.__arg(), w.__arg()], out.__out(), &opts).unwrap();
    let seeded = r.seeded_from.as_deref().unwrap_or_default();
    assert!(seeded.starts_with("table pow2:512x512x512"), "{seeded:?}");
    let want = table(from_table::spec())
        .iter()
        .find(|s| s.bucket == "pow2:512x512x512")
        .unwrap()
        .config;
    assert_eq!(r.candidates[0], want);
}

/// One row of output: the call's default is the gemv specialist, and the table's nearest
/// entry, a 64x64 simt tile measured at 40x50x60, does not replace it (a far bucket's
/// general tile at one column ran at 0.47-0.64x cuBLAS on an H100,
/// bench/results/h100-2026-12-05ah); the 40-row call next to it still starts from the entry.
#[test]
fn a_skinny_call_keeps_its_specialist_default_over_a_general_table_entry() {
    let Some(dev) = opencl_device_for(
        "a_skinny_call_keeps_its_specialist_default_over_a_general_table_entry",
        from_table::spec(),
    ) else {
        return;
    };
    let opts = TuneOptions {
        cache_dir: Some(empty_cache("skinny")),
        ..TuneOptions::default()
    };
    for (shape, from_entry) in [((1, 50, 60), false), ((40, 50, 60), true)] {
        let (x, w) = operands(&dev, shape);
        let mut out = Matrix::<f32>::zeros(&dev, shape.0, shape.1).unwrap();
        let l = crossgemm::tune::lookup(&from_table::SPEC, &[x.__arg(), w.__arg()], out.__out(), &opts).unwrap();
        assert_eq!(
            matches!(l.source, LookupSource::Table { .. }),
            from_entry,
            "{shape:?}: {l:?}"
        );
        if !from_entry {
            assert_eq!(l.source, LookupSource::Default);
            assert_eq!(l.config.family_id(), crossgemm::FamilyId::Gemv, "{}", l.config);
        }
        from_table::run_with(&l.config, &x, &w, &mut out).unwrap();
        let (got, want) = (out.to_host().unwrap(), from_table::reference(&x, &w).unwrap());
        for (i, (g, r)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g - r).abs() <= 1e-4 * r.abs().max(1.0),
                "{shape:?} element {i}: {g} vs {r}"
            );
        }
    }
}
