//! Config tables from tuning records, made at build time: for one kernel and target, the
//! measured winners of [records](crate::records) that apply to it, so that a kernel is
//! fast on its first call on a machine that never tuned it.
//!
//! A record applies by what decides a config's speed, not by the kernel's name or IR
//! hash: its **mainloop signature** (operand type, accumulation, and how A and B lie
//! along K) must be the kernel's, and its config must be one this kernel's plan could
//! launch (its family planned for the target, every rule of the family passing for this
//! kernel). Among those:
//! - a record whose kernel also has the same **epilogue class** (none, cheap elementwise,
//!   transcendental) and output type and layout is a *winner* on the device it was
//!   measured on: a launch there uses it as it would a cached one (checked at its build
//!   variant first);
//! - any other is a *starting point*: `cached` launches use the nearest one instead of the
//!   planner's default, and a tune times it first.
//!
//! Records without the kernel's IR (written before the IR was recorded) serve no table.

use crate::family::{PlanCtx, Problem, TileConfig};
use crate::ir::{AccMode, DType, EpOp, Func, GemmIr, Layout};
use crate::plan::Plan;
use crate::records::{bucket_dims, rekey, Records};
use crate::target::TargetSpec;
use serde::{Deserialize, Serialize};

/// The records shipped with crossgemm (the workspace's `records/`), by file name; every
/// kernel's table reads them.
pub const BUILTIN_RECORDS: &[(&str, &str)] = &[
    ("records/h200.json", include_str!("../../records/h200.json")),
    ("records/h100.json", include_str!("../../records/h100.json")),
    ("records/pocl-cpu.json", include_str!("../../records/pocl-cpu.json")),
];

/// What decides which configs are fast for a kernel's main loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Signature {
    /// A's and B's element type.
    pub dtype: DType,
    /// Accumulation.
    pub acc: AccMode,
    /// A (M×K) as the kernel reads it, after any `.t()`.
    pub a: Layout,
    /// B (K×N) as the kernel reads it.
    pub b: Layout,
}

impl Signature {
    /// The signature of `ir`. An `acc = tf32x3` kernel's main loop is a tf32 one (over
    /// split copies at 3K, [`crate::split3`]): tf32 records serve it, at the problem it
    /// launches, and its records serve tf32 kernels. (Its kernels keep promoted sums
    /// beside the accumulators, so the family rules drop the widest tf32 tiles from its
    /// seeds.)
    pub fn of(ir: &GemmIr) -> Signature {
        Signature {
            dtype: ir.ab_dtype,
            acc: if ir.acc == AccMode::Tf32x3 {
                AccMode::Tf32
            } else {
                ir.acc
            },
            a: ir.a_layout(),
            b: ir.b_layout(),
        }
    }
}

/// How much an epilogue costs beside the main loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EpilogueClass {
    /// The accumulator as it is.
    None,
    /// Arithmetic, parameters and cheap functions (relu, min, max, clamp, abs).
    Cheap,
    /// At least one transcendental function (gelu, silu, sigmoid, tanh, exp).
    Transcendental,
}

impl EpilogueClass {
    /// The class of `ir`'s epilogue.
    pub fn of(ir: &GemmIr) -> EpilogueClass {
        if ir.epilogue == [EpOp::Acc] {
            return EpilogueClass::None;
        }
        let transcendental = ir.epilogue.iter().any(|op| {
            matches!(
                op,
                EpOp::Call(Func::Gelu | Func::GeluErf | Func::Silu | Func::Sigmoid | Func::Tanh | Func::Exp)
            )
        });
        if transcendental {
            EpilogueClass::Transcendental
        } else {
            EpilogueClass::Cheap
        }
    }
}

/// One entry of a kernel's table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Seed {
    /// The shape bucket it was measured for (`pow2:MxNxK` / `exact:MxNxK`), as
    /// [`crate::records::shape_key`] writes it now (a record's older key is re-derived
    /// from its shape: [`rekey`]).
    pub bucket: String,
    /// The config.
    pub config: TileConfig,
    /// The shape that was timed.
    pub shape: [usize; 3],
    /// Its median time there, µs.
    pub us: f64,
    /// The device it was measured on, as its driver names it.
    pub device_name: String,
    /// Whether it is a winner on `device_name` (same signature, epilogue class and
    /// output) rather than a starting point.
    pub winner: bool,
    /// Where it came from: `<file>: <kernel>`.
    pub from: String,
}

/// One compile a table asks for: a config, the shape it was measured at, and the defines
/// of the problem a launch of that shape compiles (misaligned operands staged first where
/// the default `CROSSGEMM_STAGE=auto` stages them: [`crate::staging::as_launched_in`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Build {
    pub config: TileConfig,
    pub shape: [usize; 3],
    pub defines: Vec<(String, u32)>,
}

/// The distinct compiles (config and defines) of `seeds` for `ir` planned as `plan` on
/// `target`, in their order: what `prepare` compiles on a device and the `aot` feature at
/// build time.
pub fn builds<'s>(
    ir: &GemmIr,
    target: &TargetSpec,
    plan: &Plan,
    seeds: impl IntoIterator<Item = &'s Seed>,
) -> Vec<Build> {
    let mut out: Vec<Build> = Vec::new();
    for s in seeds {
        let [m, n, k] = s.shape;
        let p = crate::staging::as_launched_in(target, &plan.configs, ir, Problem::new(m, n, k));
        let defines = s.config.owned_defines(ir, target.backend, p);
        if !out.iter().any(|b| b.config == s.config && b.defines == defines) {
            out.push(Build {
                config: s.config,
                shape: s.shape,
                defines,
            });
        }
    }
    out
}

/// Whether `rec`'s kernel matches `ir` closely enough for its winners to be `ir`'s.
fn same_epilogue(rec: &GemmIr, ir: &GemmIr) -> bool {
    EpilogueClass::of(rec) == EpilogueClass::of(ir) && rec.out_dtype == ir.out_dtype && rec.out_layout == ir.out_layout
}

/// The table of `ir` on `target` under `plan`, from `docs` (file name, document): every
/// applicable bucket winner, one per (bucket, device), a winner before a starting point
/// and the faster first among equals; sorted by device, then bucket.
pub fn seeds(ir: &GemmIr, target: &TargetSpec, plan: &Plan, docs: &[(String, Records)]) -> Vec<Seed> {
    let sig = Signature::of(ir);
    let cx = PlanCtx::new(target, ir);
    let mut out: Vec<Seed> = Vec::new();
    for (file, doc) in docs {
        for r in &doc.records {
            let Some(rir) =
                r.ir.as_ref()
                    .filter(|rir| r.target == target.name && Signature::of(rir) == sig)
            else {
                continue;
            };
            let winner = same_epilogue(rir, ir);
            for (bucket, b) in &r.buckets {
                let c = b.config;
                let launchable = bucket_dims(bucket).is_some()
                    && plan.families.contains(&c.family_id())
                    && c.family().check(&cx, &c).is_ok();
                if !launchable {
                    continue;
                }
                let seed = Seed {
                    bucket: rekey(bucket, b.shape, Some(rir)),
                    config: c,
                    shape: b.shape,
                    us: b.us,
                    device_name: r.device_name.clone(),
                    winner,
                    from: format!("{file}: {}", r.kernel),
                };
                let better = |old: &Seed| (seed.winner, -seed.us) > (old.winner, -old.us);
                match out
                    .iter_mut()
                    .find(|s| s.bucket == seed.bucket && s.device_name == seed.device_name)
                {
                    Some(old) if better(old) => *old = seed,
                    Some(_) => {}
                    None => out.push(seed),
                }
            }
        }
    }
    out.sort_by(|a, b| (&a.device_name, &a.bucket).cmp(&(&b.device_name, &b.bucket)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family::SimtTile;
    use crate::ir::Param;
    use crate::plan::plan_target;
    use crate::records::{BucketRecord, Record, FORMAT, VERSION};
    use crate::space::TuneSpace;
    use crate::target::{Targets, BUILTIN_TARGETS};

    fn simt(mwg: u32) -> TileConfig {
        TileConfig::Simt(SimtTile {
            mwg,
            nwg: 64,
            kwg: 16,
            mdimc: 8,
            ndimc: 8,
            vw: 2,
            group_m: 8,
            ksplit: 1,
        })
    }

    fn record(kernel: &str, ir: Option<GemmIr>, device: &str, buckets: &[(&str, TileConfig, f64)]) -> Record {
        Record {
            kernel: kernel.into(),
            target: "opencl_cpu".into(),
            device_name: device.into(),
            device_id: "opencl:0:0".into(),
            driver: "1".into(),
            compiler: String::new(),
            source_hash: "0".into(),
            target_spec: None,
            ir,
            buckets: buckets
                .iter()
                .map(|&(b, config, us)| {
                    let shape = bucket_dims(b).unwrap();
                    let r = BucketRecord {
                        config,
                        shape,
                        us,
                        tflops: 0.0,
                        candidates: 6,
                        timings: Vec::new(),
                    };
                    (b.to_string(), r)
                })
                .collect(),
            failed: Vec::new(),
        }
    }

    fn doc(records: Vec<Record>) -> Vec<(String, Records)> {
        vec![(
            "t.json".into(),
            Records {
                format: FORMAT.into(),
                version: VERSION,
                crossgemm: "0".into(),
                records,
            },
        )]
    }

    fn kernel(epilogue: Vec<EpOp>, b: Layout) -> GemmIr {
        let mut ir = GemmIr::matmul("k", DType::F32, AccMode::F32, Layout::RowMajor, b);
        if epilogue.len() > 1 {
            ir.params.push(Param::row("bias", DType::F32));
        }
        ir.epilogue = epilogue;
        ir
    }

    fn cpu() -> TargetSpec {
        Targets::parse(BUILTIN_TARGETS)
            .unwrap()
            .get("opencl_cpu")
            .unwrap()
            .clone()
    }

    #[test]
    fn builds_are_distinct_and_compile_what_a_launch_compiles() {
        let ir = kernel(vec![EpOp::Acc], Layout::ColMajor);
        let seed = |config, shape| Seed {
            bucket: "pow2:1x1x1".into(),
            config,
            shape,
            us: 1.0,
            device_name: "d".into(),
            winner: true,
            from: "t".into(),
        };
        // f32 K = 701: A's and B's rows (both K-major) are misaligned, so a launch of
        // 1024x1024x701 (over staging's threshold) compiles the staged, aligned variant.
        let seeds = [
            seed(simt(64), [1024, 1024, 1024]),
            seed(simt(64), [2048, 2048, 2048]),
            seed(simt(64), [1024, 1024, 701]),
            seed(simt(32), [1024, 1024, 1024]),
        ];
        let h200 = Targets::parse(BUILTIN_TARGETS).unwrap().get("h200").unwrap().clone();
        let plan = crate::plan::plan_target(&ir, &h200, &crate::space::TuneSpace::default());
        let b = builds(&ir, &h200, &plan, &seeds);
        assert_eq!(b.len(), 2, "{b:?}");
        assert_eq!((b[0].config, b[0].shape), (simt(64), [1024, 1024, 1024]));
        assert_eq!(b[1].config, simt(32));
        // A 33x17x31 seed (under the threshold) keeps its misaligned variant.
        let small = builds(&ir, &h200, &plan, &[seed(simt(64), [33, 17, 31])]);
        assert!(small[0].defines.contains(&("A_VEC".to_string(), 0)), "{small:?}");
        // 1x16384x4099 is over the threshold, but the plan's gemv reads its rows where
        // they lie, so a launch does not stage them: nor does its build.
        let decode_size = [1, 16384, 4099];
        let p = Problem::new(1, 16384, 4099);
        assert_eq!(crate::staging::worth_staging(&ir, p), [true, true]);
        let b = builds(&ir, &h200, &plan, &[seed(simt(64), decode_size)]);
        assert!(b[0].defines.contains(&("A_VEC".to_string(), 0)), "{b:?}");
        let without: Vec<TileConfig> = plan
            .configs
            .iter()
            .copied()
            .filter(|c| c.family().preference(&h200).0 != 0)
            .collect();
        let plain = Plan {
            configs: without,
            ..plan.clone()
        };
        let b = builds(&ir, &h200, &plain, &[seed(simt(64), decode_size)]);
        assert!(!b[0].defines.contains(&("A_VEC".to_string(), 0)), "{b:?}");
    }

    #[test]
    fn signature_and_class() {
        let plain = kernel(vec![EpOp::Acc], Layout::ColMajor);
        let relu = kernel(
            vec![EpOp::Acc, EpOp::Param(2), EpOp::Add, EpOp::Call(Func::Relu)],
            Layout::ColMajor,
        );
        let gelu = kernel(
            vec![EpOp::Acc, EpOp::Param(2), EpOp::Add, EpOp::Call(Func::Gelu)],
            Layout::ColMajor,
        );
        assert_eq!(Signature::of(&plain), Signature::of(&gelu));
        assert_ne!(
            Signature::of(&plain),
            Signature::of(&kernel(vec![EpOp::Acc], Layout::RowMajor))
        );
        let x3 = GemmIr {
            acc: AccMode::Tf32x3,
            ..plain.clone()
        };
        let t1 = GemmIr {
            acc: AccMode::Tf32,
            ..plain.clone()
        };
        assert_eq!(Signature::of(&x3), Signature::of(&t1), "tf32x3 runs a tf32 main loop");
        assert_eq!(EpilogueClass::of(&plain), EpilogueClass::None);
        assert_eq!(EpilogueClass::of(&relu), EpilogueClass::Cheap);
        assert_eq!(EpilogueClass::of(&gelu), EpilogueClass::Transcendental);
        let mut t = plain.clone();
        t.a_t = true;
        t.params[0] = Param::matrix("a", DType::F32, Layout::ColMajor);
        assert_eq!(
            Signature::of(&t),
            Signature::of(&plain),
            "a.t() of a column-major A reads as row-major"
        );
    }

    #[test]
    fn a_record_applies_by_signature_and_its_class_makes_a_winner() {
        let target = cpu();
        let plain = kernel(vec![EpOp::Acc], Layout::ColMajor);
        let relu = kernel(
            vec![EpOp::Acc, EpOp::Param(2), EpOp::Add, EpOp::Call(Func::Relu)],
            Layout::ColMajor,
        );
        let other = kernel(vec![EpOp::Acc], Layout::RowMajor);
        let plan = plan_target(&plain, &target, &TuneSpace::default());
        let good = plan.configs[0];
        let docs = doc(vec![
            record("plain", Some(plain.clone()), "cpu", &[("pow2:64x64x64", good, 10.0)]),
            record("relu", Some(relu.clone()), "cpu", &[("pow2:128x128x128", good, 20.0)]),
            record("other", Some(other), "cpu", &[("pow2:32x32x32", good, 5.0)]),
            record("old", None, "cpu", &[("pow2:16x16x16", good, 5.0)]),
        ]);
        let t = seeds(&plain, &target, &plan, &docs);
        let got: Vec<(&str, bool, &str)> = t
            .iter()
            .map(|s| (s.bucket.as_str(), s.winner, s.from.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("pow2:128x128x128", false, "t.json: relu"),
                ("pow2:64x64x64", true, "t.json: plain")
            ]
        );
        // From the relu kernel's side the roles swap.
        let plan_relu = plan_target(&relu, &target, &TuneSpace::default());
        let t = seeds(&relu, &target, &plan_relu, &docs);
        assert_eq!(t.iter().filter(|s| s.winner).count(), 1);
        assert_eq!(t.iter().find(|s| s.winner).unwrap().bucket, "pow2:128x128x128");
    }

    #[test]
    fn configs_the_plan_cannot_launch_are_dropped_and_the_best_entry_stays() {
        let target = cpu();
        let plain = kernel(vec![EpOp::Acc], Layout::ColMajor);
        let plan = plan_target(&plain, &target, &TuneSpace::default());
        let good = plan.configs[0];
        // mwg 60 breaks the simt family's rules (not a multiple of mdimc * vw).
        let docs = doc(vec![
            record("a", Some(plain.clone()), "cpu", &[("pow2:64x64x64", simt(60), 1.0)]),
            record("b", Some(plain.clone()), "cpu", &[("pow2:64x64x64", good, 9.0)]),
            record(
                "c",
                Some(plain.clone()),
                "cpu",
                &[("pow2:64x64x64", plan.configs[1], 7.0)],
            ),
            record("d", Some(plain.clone()), "gpu", &[("pow2:64x64x64", good, 3.0)]),
        ]);
        let t = seeds(&plain, &target, &plan, &docs);
        assert_eq!(t.len(), 2, "{t:#?}");
        assert_eq!(
            (t[0].device_name.as_str(), t[0].config, t[0].us),
            ("cpu", plan.configs[1], 7.0)
        );
        assert_eq!(t[1].device_name, "gpu");
        let mut elsewhere = docs.clone();
        elsewhere[0].1.records[1].target = "h200".into();
        assert!(seeds(&plain, &target, &plan, &elsewhere)
            .iter()
            .all(|s| s.from != "t.json: b"));
    }

    /// Issue 12's "shipped records kept true": every config of every shipped record is one
    /// the planner makes today for the record's kernel and target, so that no kernel's
    /// table silently loses it (regenerate with bench/records-*.sh when this fails).
    #[test]
    fn every_shipped_record_is_a_config_the_planner_makes() {
        let targets = Targets::parse(BUILTIN_TARGETS).unwrap();
        for (name, text) in BUILTIN_RECORDS {
            let doc = crate::records::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!doc.records.is_empty(), "{name} has no records");
            for r in &doc.records {
                let ir =
                    r.ir.as_ref()
                        .unwrap_or_else(|| panic!("{name}: {} has no IR", r.kernel));
                let target = targets
                    .get(&r.target)
                    .unwrap_or_else(|| panic!("{name}: {}: no target {}", r.kernel, r.target));
                let plan = plan_target(ir, target, &TuneSpace::default());
                for (bucket, b) in &r.buckets {
                    assert!(
                        plan.configs.contains(&b.config),
                        "{name}: {} {bucket}: {} is not planned for {} any more",
                        r.kernel,
                        b.config,
                        r.target
                    );
                }
                // Each bucket is its own record's winner, unless a record of the kernel
                // at another source (tuned after a change of the kernel's code) measured
                // a faster one there.
                let table = seeds(
                    ir,
                    target,
                    &plan,
                    std::slice::from_ref(&(name.to_string(), doc.clone())),
                );
                for (bucket, b) in &r.buckets {
                    let s = table
                        .iter()
                        .find(|s| s.bucket == rekey(bucket, b.shape, r.ir.as_ref()) && s.device_name == r.device_name)
                        .unwrap_or_else(|| panic!("{name}: {} {bucket} serves no table", r.kernel));
                    assert!(
                        s.winner && (s.config == b.config || s.us < b.us),
                        "{name}: {} {bucket}: the table holds {} ({} us, from {}) over {} ({} us)",
                        r.kernel,
                        s.config,
                        s.us,
                        s.from,
                        b.config,
                        b.us
                    );
                }
            }
        }
    }
}
