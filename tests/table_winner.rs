//! A config table's winner for this very device serves a plain launch as a cached winner
//! would (issue 12): under `CROSSGEMM_TUNE=full` with an empty cache the launch tunes
//! nothing, runs the table's config, and is right. Records name the device that measured
//! them, and the macro reads records at build time, so the kernel here is assembled at run
//! time from a generated one with a table naming this machine's device. One test in its
//! own binary: the tuning counters are per process.

mod common;

use common::*;
use crossgemm::prelude::*;
use crossgemm::table::Seed;
use crossgemm::{KernelSpec, LookupSource, TargetKernel, TuneMode, TuneOptions};

#[gemm_kernel(targets(opencl_cpu), records = none)]
fn base(x: Matrix<f32>, w: Matrix<f32, ColMajor>) -> Matrix<f32> {
    x * w
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// `base` with a table whose only entry is `config`, a winner on `device` for `bucket`.
fn with_table(device: &str, bucket: &str, config: crossgemm::TileConfig, shape: [usize; 3]) -> &'static KernelSpec {
    let tk = &base::SPEC.targets()[0];
    let table = vec![Seed {
        bucket: bucket.into(),
        config,
        shape,
        us: 1.0,
        device_name: device.into(),
        winner: true,
        from: "a test: table_winner".into(),
    }];
    let target = TargetKernel::__new(
        tk.target,
        tk.backend,
        tk.sources(),
        tk.spec_json(),
        leak(serde_json::to_string(tk.plan()).unwrap()),
        leak(serde_json::to_string(&table).unwrap()),
        tk.prebuilt(),
    );
    let targets: &'static [TargetKernel] = Box::leak(vec![target].into_boxed_slice());
    Box::leak(Box::new(KernelSpec::__new(
        "table_winner",
        base::SPEC.ir_hash,
        leak(serde_json::to_string(base::SPEC.ir()).unwrap()),
        targets,
    )))
}

#[test]
fn a_table_winner_for_this_device_is_used_without_tuning() {
    let Some(dev) = opencl_device_for("table_winner", base::spec()) else {
        return;
    };
    let dir = isolated_cache("table-winner");
    let (m, n, k) = (40, 50, 60);
    let plan = base::SPEC.targets()[0].plan();
    // A config that is not the planner's default, so that using it shows.
    let config = plan.configs[plan.configs.len() / 2];
    assert_ne!(config, plan.configs[0]);
    let spec = with_table(&dev.info().name, "pow2/a16:64x64x64", config, [m, n, k]);

    let x = Matrix::<f32>::from_host(&dev, m, k, &ramp(m * k, 1)).unwrap();
    let w = Matrix::<f32, ColMajor>::from_host(&dev, k, n, &ramp(k * n, 2)).unwrap();
    let mut out = Matrix::<f32>::zeros(&dev, m, n).unwrap();
    let args = [x.__arg(), w.__arg()];

    let opts = TuneOptions {
        cache_dir: Some(dir.clone()),
        ..TuneOptions::default()
    };
    let l = crossgemm::tune::lookup(spec, &args, out.__out(), &opts).unwrap();
    assert_eq!(l.config, config);
    assert!(
        matches!(&l.source, LookupSource::Table { winner: true, .. }),
        "{:?}",
        l.source
    );

    let tunes = crossgemm::tune_stats().tunes;
    crossgemm::untyped::launch(spec, &args, out.__out()).unwrap();
    if TuneMode::from_env() == TuneMode::Full {
        assert_eq!(crossgemm::tune_stats().tunes, tunes, "a table winner is not tuned over");
    }
    let want = crossgemm::untyped::reference::<f32>(spec, &args).unwrap();
    assert_close(&out.to_host().unwrap(), &want, k, false, "table winner");
    // The same device under another name has no winner: the nearest entry, not tuned
    // either under `cached`, would be a starting point for a tune under `full`.
    let other = with_table("a device of another name", "pow2/a16:64x64x64", config, [m, n, k]);
    let l = crossgemm::tune::lookup(other, &args, out.__out(), &opts).unwrap();
    assert!(
        matches!(&l.source, LookupSource::Table { winner: false, .. }),
        "{:?}",
        l.source
    );
    let _ = std::fs::remove_dir_all(&dir);
}
