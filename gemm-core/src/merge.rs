//! Combining tuning records from several machines (`crossgemm cache merge`): one record
//! per kernel, target, device name and source, whose winners every machine agrees on.
//!
//! Per bucket, every machine's per-config medians ([`BucketRecord::timings`]; the
//! winner's time alone for records of older writers) are pooled, and each config's time
//! is the median over the machines that timed it. The fastest wins unless others lie
//! within [`TIE_BAND`] of it: a tie goes to the planner's order for the record's kernel
//! and target (then the config's text), the rule the tuner itself applies, so merging
//! in any order, or tuning on any of the machines, gives the same answer. Failures are
//! unioned.
//!
//! A bucket pools the timings of **one shape**: the one most inputs measured, and on a
//! tie the one nearest the bucket's own dimensions (then the smaller). Inputs that timed
//! another shape of the bucket are set aside ([`MergeSummary::set_aside`]): 1000³ and
//! 1024³ share the bucket `pow2:1024x1024x1024`, yet on the H200 their best configs
//! differ by 19 %, and a median over both would be a time of neither.

use crate::family::TileConfig;
use crate::plan::plan_target;
use crate::records::{
    bucket_dims, log_distance, tflops, BucketRecord, ConfigTime, FailedRecord, Record, Records, FORMAT, VERSION,
};
use crate::space::TuneSpace;
use crate::target::{TargetSpec, Targets};
use std::collections::BTreeMap;

/// Medians within this fraction of the fastest tie. Records keep no noise estimate, so
/// the band is fixed: 2 %, about the spread of repeated GPU medians.
pub const TIE_BAND: f64 = 0.02;

/// What a merge did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MergeSummary {
    /// Records read.
    pub inputs: usize,
    /// Records written (one per kernel, target, device name and source).
    pub records: usize,
    /// Buckets written.
    pub buckets: usize,
    /// Buckets where more than one machine's timings were pooled.
    pub pooled: usize,
    /// Buckets whose winner was decided by the planner's order within the tie band.
    pub ties: usize,
    /// Inputs' buckets left out because they timed another shape of the bucket than the
    /// one pooled.
    pub set_aside: usize,
}

/// The shape a bucket pools among those its inputs timed (see the module doc).
fn pooled_shape(bucket: &str, shapes: &[[usize; 3]]) -> Option<[usize; 3]> {
    let count = |s: &[usize; 3]| shapes.iter().filter(|x| *x == s).count();
    let nominal = bucket_dims(bucket);
    shapes.iter().copied().min_by(|a, b| {
        count(b)
            .cmp(&count(a))
            .then_with(|| match nominal {
                Some(d) => log_distance(*a, d).total_cmp(&log_distance(*b, d)),
                None => std::cmp::Ordering::Equal,
            })
            .then_with(|| a.cmp(b))
    })
}

/// The median of `v` (not empty).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The planner's configs for `r`'s kernel and target, best first (empty when the record
/// has no IR or its target is unknown): the fixed order ties go by.
fn plan_order(r: &Record, targets: &Targets) -> Vec<TileConfig> {
    let spec: Option<TargetSpec> = r
        .target_spec
        .as_ref()
        .and_then(|v| serde_json::from_value::<TargetSpec>(v.clone()).ok())
        .map(|mut t| {
            t.name = r.target.clone();
            t
        })
        .or_else(|| targets.get(&r.target).cloned());
    match (&r.ir, spec) {
        (Some(ir), Some(spec)) => plan_target(ir, &spec, &TuneSpace::default()).configs,
        _ => Vec::new(),
    }
}

/// `values` joined with ", ", each once, in first-seen order.
fn joined<'a>(values: impl Iterator<Item = &'a str>) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for v in values.filter(|v| !v.is_empty()) {
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    seen.join(", ")
}

/// Merges the records of `docs` (see the module doc); `targets` resolves records that
/// carry no target limits.
pub fn merge(docs: &[Records], targets: &Targets) -> (Records, MergeSummary) {
    let mut groups: BTreeMap<(String, String, String, String), Vec<&Record>> = BTreeMap::new();
    let mut sum = MergeSummary::default();
    for r in docs.iter().flat_map(|d| &d.records) {
        sum.inputs += 1;
        let key = (
            r.kernel.clone(),
            r.target.clone(),
            r.device_name.clone(),
            r.source_hash.clone(),
        );
        groups.entry(key).or_default().push(r);
    }
    let mut out = Vec::new();
    for group in groups.values() {
        let first = group[0];
        let with_ir = group.iter().copied().find(|r| r.ir.is_some()).unwrap_or(first);
        let order = plan_order(with_ir, targets);
        let rank = |c: &TileConfig| (order.iter().position(|x| x == c).unwrap_or(usize::MAX), c.to_string());
        let mut buckets = BTreeMap::new();
        let names: std::collections::BTreeSet<&String> = group.iter().flat_map(|r| r.buckets.keys()).collect();
        for b in names {
            let mut times: Vec<(TileConfig, Vec<f64>)> = Vec::new();
            let shapes: Vec<[usize; 3]> = group
                .iter()
                .filter_map(|r| r.buckets.get(b))
                .map(|br| br.shape)
                .collect();
            let shape = pooled_shape(b, &shapes);
            let mut machines = 0;
            for r in group {
                let Some(br) = r.buckets.get(b) else { continue };
                if Some(br.shape) != shape {
                    sum.set_aside += 1;
                    continue;
                }
                machines += 1;
                let own = [ConfigTime {
                    config: br.config,
                    us: br.us,
                }];
                let list = if br.timings.is_empty() {
                    &own[..]
                } else {
                    &br.timings[..]
                };
                for t in list.iter().filter(|t| t.us.is_finite() && t.us > 0.0) {
                    match times.iter_mut().find(|(c, _)| *c == t.config) {
                        Some((_, v)) => v.push(t.us),
                        None => times.push((t.config, vec![t.us])),
                    }
                }
            }
            let Some(shape) = shape else { continue };
            let mut medians: Vec<ConfigTime> = times
                .into_iter()
                .map(|(config, mut v)| ConfigTime {
                    config,
                    us: median(&mut v),
                })
                .collect();
            if medians.is_empty() {
                continue;
            }
            medians.sort_by(|a, b| {
                a.us.total_cmp(&b.us)
                    .then_with(|| rank(&a.config).cmp(&rank(&b.config)))
            });
            let fastest = medians[0].us;
            let winner = *medians
                .iter()
                .filter(|t| t.us <= fastest * (1.0 + TIE_BAND))
                .min_by_key(|t| rank(&t.config))
                .expect("the fastest is within its own band");
            if winner.config != medians[0].config {
                sum.ties += 1;
            }
            if machines > 1 {
                sum.pooled += 1;
            }
            buckets.insert(
                b.clone(),
                BucketRecord {
                    config: winner.config,
                    shape,
                    us: winner.us,
                    tflops: tflops(shape, winner.us * 1e-3),
                    candidates: medians.len(),
                    timings: medians,
                },
            );
        }
        let mut failed: Vec<FailedRecord> = Vec::new();
        for f in group.iter().flat_map(|r| &r.failed) {
            if !failed.iter().any(|x| x.config == f.config) {
                failed.push(f.clone());
            }
        }
        sum.buckets += buckets.len();
        out.push(Record {
            kernel: first.kernel.clone(),
            target: first.target.clone(),
            device_name: first.device_name.clone(),
            device_id: if group.len() == 1 {
                first.device_id.clone()
            } else {
                format!("merged from {} records", group.len())
            },
            driver: joined(group.iter().map(|r| r.driver.as_str())),
            compiler: joined(group.iter().map(|r| r.compiler.as_str())),
            source_hash: first.source_hash.clone(),
            target_spec: group.iter().find_map(|r| r.target_spec.clone()),
            ir: with_ir.ir.clone(),
            buckets,
            failed,
        });
    }
    sum.records = out.len();
    let doc = Records {
        format: FORMAT.into(),
        version: VERSION,
        crossgemm: docs.first().map_or_else(String::new, |d| d.crossgemm.clone()),
        records: out,
    };
    (doc, sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{AccMode, DType, GemmIr, Layout};
    use crate::target::BUILTIN_TARGETS;

    fn ir() -> GemmIr {
        GemmIr::matmul("k", DType::F32, AccMode::F32, Layout::RowMajor, Layout::ColMajor)
    }

    fn targets() -> Targets {
        Targets::parse(BUILTIN_TARGETS).unwrap()
    }

    fn configs() -> Vec<TileConfig> {
        let t = targets();
        plan_target(&ir(), t.get("opencl_cpu").unwrap(), &TuneSpace::default()).configs
    }

    fn record(machine: &str, timings: &[(usize, f64)]) -> Record {
        let c = configs();
        let timings: Vec<ConfigTime> = timings.iter().map(|&(i, us)| ConfigTime { config: c[i], us }).collect();
        let best = *timings.iter().min_by(|a, b| a.us.total_cmp(&b.us)).unwrap();
        Record {
            kernel: "k".into(),
            target: "opencl_cpu".into(),
            device_name: "cpu".into(),
            device_id: machine.into(),
            driver: format!("driver of {machine}"),
            compiler: String::new(),
            source_hash: "s".into(),
            target_spec: None,
            ir: Some(ir()),
            buckets: [(
                "pow2:64x64x64".to_string(),
                BucketRecord {
                    config: best.config,
                    shape: [64, 64, 64],
                    us: best.us,
                    tflops: 0.0,
                    candidates: timings.len(),
                    timings,
                },
            )]
            .into(),
            failed: Vec::new(),
        }
    }

    fn doc(records: Vec<Record>) -> Records {
        Records {
            format: FORMAT.into(),
            version: VERSION,
            crossgemm: "0".into(),
            records,
        }
    }

    #[test]
    fn per_config_medians_over_machines_decide() {
        let c = configs();
        // Config 2 wins on two of three machines; config 1 on one, by a lot.
        let docs = [
            doc(vec![record("a", &[(1, 10.0), (2, 20.0)])]),
            doc(vec![record("b", &[(1, 30.0), (2, 12.0)])]),
            doc(vec![record("c", &[(1, 31.0), (2, 13.0)])]),
        ];
        let (m, s) = merge(&docs, &targets());
        assert_eq!((s.inputs, s.records, s.buckets, s.pooled, s.ties), (3, 1, 1, 1, 0));
        let b = &m.records[0].buckets["pow2:64x64x64"];
        assert_eq!(b.config, c[2]);
        assert_eq!(b.us, 13.0, "median of 20, 12, 13");
        assert_eq!(b.timings.iter().map(|t| t.us).collect::<Vec<_>>(), vec![13.0, 30.0]);
        assert_eq!(m.records[0].device_id, "merged from 3 records");
        assert_eq!(m.records[0].driver, "driver of a, driver of b, driver of c");
    }

    /// Two machines timed 1024³ and a third 1000³ in the same bucket: the two are pooled,
    /// the third is set aside whatever the order; with one each, the shape nearer the
    /// bucket's dimensions is pooled.
    #[test]
    fn a_bucket_pools_one_shape() {
        let at = |machine: &str, shape: [usize; 3], timings: &[(usize, f64)]| {
            let mut r = record(machine, timings);
            let mut b = r.buckets.pop_first().unwrap().1;
            b.shape = shape;
            r.buckets.insert("pow2:1024x1024x1024".into(), b);
            r
        };
        let big = [1024, 1024, 1024];
        let odd = [1000, 1000, 1000];
        for docs in [
            vec![
                at("a", big, &[(0, 9.0), (1, 12.0)]),
                at("b", big, &[(0, 9.2), (1, 12.1)]),
                at("c", odd, &[(0, 13.6), (1, 11.4)]),
            ],
            vec![
                at("c", odd, &[(0, 13.6), (1, 11.4)]),
                at("a", big, &[(0, 9.0), (1, 12.0)]),
                at("b", big, &[(0, 9.2), (1, 12.1)]),
            ],
        ] {
            let (out, sum) = merge(&[doc(docs)], &targets());
            let b = out.records[0].buckets.values().next().unwrap();
            assert_eq!(
                (b.shape, b.config, sum.set_aside, sum.pooled),
                (big, configs()[0], 1, 1)
            );
        }
        let (out, sum) = merge(
            &[doc(vec![
                at("c", odd, &[(0, 13.6), (1, 11.4)]),
                at("a", big, &[(0, 9.0), (1, 12.0)]),
            ])],
            &targets(),
        );
        assert_eq!(out.records[0].buckets.values().next().unwrap().shape, big);
        assert_eq!(sum.set_aside, 1);
    }

    #[test]
    fn a_tie_goes_to_the_planners_order_whatever_the_input_order() {
        let c = configs();
        // Config 3 is 1 % faster than config 0: within the band, so the planner's first.
        let a = doc(vec![record("a", &[(3, 99.0), (0, 100.0)])]);
        let b = doc(vec![record("b", &[(0, 100.0), (3, 99.0)])]);
        for docs in [[a.clone(), b.clone()], [b, a]] {
            let (m, s) = merge(&docs, &targets());
            assert_eq!(m.records[0].buckets["pow2:64x64x64"].config, c[0]);
            assert_eq!(s.ties, 1);
        }
        // Beyond the band the faster wins.
        let (m, _) = merge(&[doc(vec![record("a", &[(3, 90.0), (0, 100.0)])])], &targets());
        assert_eq!(m.records[0].buckets["pow2:64x64x64"].config, c[3]);
    }

    proptest::proptest! {
        /// Whatever the machines measured, merging gives the same winner in any input
        /// order, a winner within the tie band of the fastest median, and each config's
        /// time the median of the machines that timed it.
        #[test]
        fn the_winner_does_not_depend_on_the_order_of_the_machines(
            machines in proptest::collection::vec(
                proptest::collection::vec((0usize..6, 1.0f64..100.0), 1..6),
                1..5,
            )
        ) {
            let docs: Vec<Records> = machines
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    // One time per config and machine (the last one given wins).
                    let mut seen: Vec<(usize, f64)> = Vec::new();
                    for &(c, us) in t {
                        seen.retain(|(x, _)| *x != c);
                        seen.push((c, us));
                    }
                    doc(vec![record(&format!("m{i}"), &seen)])
                })
                .collect();
            let (a, _) = merge(&docs, &targets());
            let mut reversed = docs.clone();
            reversed.reverse();
            let (b, _) = merge(&reversed, &targets());
            let (wa, wb) = (&a.records[0].buckets["pow2:64x64x64"], &b.records[0].buckets["pow2:64x64x64"]);
            proptest::prop_assert_eq!(wa.config, wb.config);
            proptest::prop_assert_eq!(wa.us, wb.us);
            let fastest = wa.timings.iter().map(|t| t.us).fold(f64::INFINITY, f64::min);
            proptest::prop_assert!(wa.us <= fastest * (1.0 + TIE_BAND));
            for t in &wa.timings {
                let mut all: Vec<f64> = docs
                    .iter()
                    .flat_map(|d| &d.records[0].buckets["pow2:64x64x64"].timings)
                    .filter(|x| x.config == t.config)
                    .map(|x| x.us)
                    .collect();
                proptest::prop_assert_eq!(t.us, median(&mut all));
            }
        }
    }

    #[test]
    fn records_without_timings_count_their_winner_and_other_kernels_stay_apart() {
        let c = configs();
        let mut old = record("old", &[(4, 50.0)]);
        old.buckets.get_mut("pow2:64x64x64").unwrap().timings.clear();
        let mut other = record("x", &[(1, 1.0)]);
        other.kernel = "other".into();
        let (m, s) = merge(
            &[doc(vec![old, record("new", &[(4, 70.0), (5, 60.0)]), other])],
            &targets(),
        );
        assert_eq!(s.records, 2);
        let k = m.records.iter().find(|r| r.kernel == "k").unwrap();
        let b = &k.buckets["pow2:64x64x64"];
        // Config 4: median of 50 and 70 = 60, tied with config 5's 60: the planner's order.
        assert_eq!(b.config, c[4]);
        assert_eq!(b.us, 60.0);
    }
}
