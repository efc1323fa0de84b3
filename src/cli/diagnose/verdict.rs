//! The verdict of `crossgemm diagnose`: which of the seeds' bottlenecks its timings point at.

/// What the numbers say, with the numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// "memory-bound", "store-bound", "compute-bound", "pipeline-bound", "raster-bound" or
    /// "balanced".
    pub kind: &'static str,
    /// One line per finding, most important first.
    pub reasons: Vec<String>,
}

/// The inputs of the verdict, µs (`None`: not measured).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timings {
    pub full: f64,
    pub load_only: Option<f64>,
    pub no_epilogue: Option<f64>,
    pub compute_only: Option<f64>,
    /// The kernel without writing its output ([`Variant::NoStore`]).
    pub no_store: Option<f64>,
    /// Bytes of A, B and C (and bias) over the copy bandwidth.
    pub memory_roof: Option<f64>,
    /// 2·M·N·K over the datasheet peak.
    pub compute_roof: Option<f64>,
    /// The fastest stage/warp neighbour: (what, µs).
    pub best_neighbour: Option<(String, f64)>,
    /// The fastest other launch order: (what, µs).
    pub best_order: Option<(String, f64)>,
    /// Blocks per SM of full, load-only and compute-only, where known.
    pub occupancy: [Option<u32>; 3],
    /// An empty launch timed as the kernels are (the L2 overwrite before it, events
    /// around it): what each time above holds besides the kernel's own work.
    pub launch_floor: Option<f64>,
}

impl Timings {
    /// The launch floor the shares are read above: [`Timings::launch_floor`] where it is
    /// under half the full time (a floor of half the time or more is not a launch's),
    /// else 0.
    pub fn floor(&self) -> f64 {
        self.launch_floor
            .filter(|&f| f > 0.0 && f < 0.5 * self.full)
            .unwrap_or(0.0)
    }

    /// `us` with the launch floor taken off: what the kernel itself took (at least 0).
    pub fn above_floor(&self, us: f64) -> f64 {
        (us - self.floor()).max(0.0)
    }
}

/// A faster alternative must win by this much to count (timing noise is a few %).
const MARGIN: f64 = 1.05;

/// The verdict: which of the seeds' bottlenecks the timings point at.
///
/// - raster-bound: another launch order (GROUP_M) is faster by more than the margin;
/// - memory-bound: the full kernel runs within 1.25x of the memory roof;
/// - store-bound: writing the output takes a quarter of the time or more (the full
///   kernel against no-store); the load-only and compute-only variants both keep the
///   stores, so this is asked before their shares;
/// - memory-bound too: moving the data alone (load-only) takes 80 % of the time;
/// - compute-bound: the math alone (compute-only) takes 80 % of its time;
/// - pipeline-bound: loads and math each take well under the full time (their sum is
///   not hidden: full > 1.2x the larger), or a deeper/shallower pipeline is faster.
///
/// A load-only time under 90 % of the memory roof cannot have moved the data (the L2 is
/// flushed before every run): the variant lost loads, as the decode family's did when
/// ptxas deleted loads whose words reached no store. It is reported and not used.
///
/// With a launch floor (under half the full time), every share and every comparison with
/// a roof is of the times above it: a 16 µs kernel timed between events holds ~2.8 µs of
/// launch on the H200 that no variant removes, so its load-only share at 87 % of the
/// event time is 85 % of the kernel's, and its store cost at 26 % is 32 %.
pub fn verdict(t: &Timings) -> Verdict {
    let mut reasons = Vec::new();
    let floor = t.floor();
    if floor > 0.0 {
        reasons.push(format!(
            "an empty launch takes {floor:.1} us between the same events ({:.0}% of the full time): the shares below are of the {:.1} us above it",
            100.0 * floor / t.full,
            t.full - floor
        ));
    }
    let above = |v: f64| t.above_floor(v);
    let lost_loads = matches!((t.load_only, t.memory_roof), (Some(l), Some(r)) if above(l) < 0.9 * r);
    if lost_loads {
        reasons.push(format!(
            "the load-only variant took {:.1} us, under the memory roof ({:.1} us): it did not do all its loads (a compiler may have removed loads it found dead), so its time is left out",
            t.load_only.unwrap_or(0.0),
            t.memory_roof.unwrap_or(0.0)
        ));
    }
    let t = &Timings {
        load_only: t.load_only.filter(|_| !lost_loads),
        ..t.clone()
    };
    let full = above(t.full);
    let share = |v: Option<f64>| v.map(|v| above(v) / full);
    let mut kind = "balanced";
    if let Some((what, us)) = &t.best_order {
        if us * MARGIN < t.full {
            kind = "raster-bound";
            reasons.push(format!(
                "launch order {what} takes {us:.1} us vs {:.1} us ({:.0}% faster): blocks sharing operands do not run together",
                t.full,
                (t.full / us - 1.0) * 100.0
            ));
        }
    }
    let mem_roof_share = t.memory_roof.map(|r| full / r);
    let load = share(t.load_only);
    let comp = share(t.compute_only);
    let store_cost = t.no_store.map(|ns| (t.full - ns) / full);
    if kind == "balanced" {
        if mem_roof_share.is_some_and(|s| s <= 1.25) {
            kind = "memory-bound";
        } else if store_cost.is_some_and(|c| c >= 0.25) {
            kind = "store-bound";
        } else if load.is_some_and(|s| s >= 0.8) {
            kind = "memory-bound";
        } else if comp.is_some_and(|s| s >= 0.8) {
            kind = "compute-bound";
        } else if let (Some(l), Some(c)) = (t.load_only, t.compute_only) {
            if full > 1.2 * above(l.max(c)) {
                kind = "pipeline-bound";
            }
        }
        if let Some((what, us)) = &t.best_neighbour {
            if us * MARGIN < t.full && kind != "memory-bound" {
                kind = "pipeline-bound";
                reasons.push(format!(
                    "neighbour {what} takes {us:.1} us vs {:.1} us: the tuner's winner is not the best pipeline shape",
                    t.full
                ));
            }
        }
    }
    if let Some(s) = mem_roof_share {
        reasons.push(format!(
            "full kernel {full:.1} us{} = {s:.2}x the memory roof ({:.1} us)",
            if floor > 0.0 { " above the launch" } else { "" },
            t.memory_roof.unwrap_or(0.0)
        ));
    }
    if let Some(r) = t.compute_roof {
        reasons.push(format!(
            "full kernel = {:.2}x the compute roof ({r:.1} us, {:.0}% of peak)",
            full / r,
            100.0 * r / full
        ));
    }
    if let Some(s) = load {
        let mut r = format!("load-only = {:.0}% of the full time", s * 100.0);
        // Data movement that dominates far from the bandwidth roof is latency-bound
        // (too few loads in flight), which more bandwidth would not fix.
        if let (Some(l), Some(roof)) = (t.load_only, t.memory_roof) {
            if s >= 0.5 && above(l) > 3.0 * roof {
                r.push_str(&format!(
                    ", yet moving the data alone runs at {:.0}% of copy bandwidth: latency-bound loads",
                    100.0 * roof / above(l)
                ));
            }
        }
        reasons.push(r);
    }
    if let Some(s) = comp {
        reasons.push(format!("compute-only = {:.0}% of the full time", s * 100.0));
    }
    // What a part of the kernel costs: the full time against the variant without it.
    let cost = |what: &str, without: f64, said: &str| {
        let c = (t.full - without) / full;
        if c.abs() < 0.01 {
            format!("{what} costs nothing measurable ({without:.1} us {said})")
        } else {
            format!("{what} costs {:.0}% ({without:.1} us {said})", c * 100.0)
        }
    };
    if let Some(ns) = t.no_store {
        reasons.push(cost(
            "writing the output",
            ns,
            "without the stores; load-only and compute-only keep them",
        ));
    }
    if let Some(ne) = t.no_epilogue {
        reasons.push(cost("the fused epilogue", ne, "without it"));
    }
    // A variant with fewer registers may fit more blocks per SM than the full kernel:
    // its time is then a lower bound for that part inside the full kernel.
    if let [Some(f), l, c] = t.occupancy {
        if l.is_some_and(|l| l > f) || c.is_some_and(|c| c > f) {
            let n = |x: Option<u32>| x.map_or("?".to_string(), |x| x.to_string());
            reasons.push(format!(
                "the variants fit more blocks per SM than the full kernel (load-only {}, compute-only {}, full {f}): their times are lower bounds for those parts",
                n(l),
                n(c)
            ));
        }
    }
    if kind == "pipeline-bound" && !reasons.iter().any(|r| r.starts_with("neighbour")) {
        if let (Some(l), Some(c)) = (t.load_only, t.compute_only) {
            reasons.insert(
                0,
                format!(
                    "loads ({l:.1} us) and math ({c:.1} us) overlap poorly: the full kernel takes {:.1} us",
                    t.full
                ),
            );
        }
    }
    Verdict { kind, reasons }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        let base = Timings {
            full: 100.0,
            load_only: Some(40.0),
            no_epilogue: Some(98.0),
            compute_only: Some(50.0),
            no_store: Some(95.0),
            memory_roof: Some(20.0),
            compute_roof: Some(30.0),
            best_neighbour: Some(("stages 3".into(), 99.0)),
            best_order: Some(("GROUP_M 16".into(), 99.0)),
            occupancy: [Some(1), Some(1), Some(1)],
            launch_floor: None,
        };
        // Loads 40 + math 50 both far below 100: they do not overlap.
        assert_eq!(verdict(&base).kind, "pipeline-bound");
        let mem = Timings {
            load_only: Some(90.0),
            ..base.clone()
        };
        assert_eq!(verdict(&mem).kind, "memory-bound");
        let at_roof = Timings {
            memory_roof: Some(90.0),
            ..base.clone()
        };
        assert_eq!(verdict(&at_roof).kind, "memory-bound");
        let comp = Timings {
            compute_only: Some(85.0),
            ..base.clone()
        };
        assert_eq!(verdict(&comp).kind, "compute-bound");
        let raster = Timings {
            best_order: Some(("GROUP_M 1".into(), 80.0)),
            ..comp.clone()
        };
        let v = verdict(&raster);
        assert_eq!(v.kind, "raster-bound");
        assert!(
            v.reasons[0].contains("GROUP_M 1") && v.reasons[0].contains("25% faster"),
            "{v:?}"
        );
        let neighbour = Timings {
            best_neighbour: Some(("stages 3".into(), 70.0)),
            ..comp
        };
        assert_eq!(verdict(&neighbour).kind, "pipeline-bound");
        let v = verdict(&base);
        assert!(v.reasons.iter().any(|r| r.contains("epilogue costs 2%")), "{v:?}");
        assert!(
            v.reasons.iter().any(|r| r.contains("writing the output costs 5%")),
            "{v:?}"
        );
        assert!(!v.reasons.iter().any(|r| r.contains("blocks per SM")), "{v:?}");
        // 4096x4096x128 (session p): load-only 87% and compute-only 90% of the full time,
        // both with the stores, which alone take a third of it: store-bound, not memory.
        let short_k = Timings {
            load_only: Some(87.0),
            compute_only: Some(90.0),
            no_store: Some(66.0),
            ..base.clone()
        };
        let sk = verdict(&short_k);
        assert_eq!(sk.kind, "store-bound", "{sk:?}");
        assert!(
            sk.reasons.iter().any(|r| r.contains("writing the output costs 34%")),
            "{sk:?}"
        );
        // Within 1.25x of the memory roof it is memory-bound, stores or not.
        assert_eq!(
            verdict(&Timings {
                memory_roof: Some(85.0),
                ..short_k
            })
            .kind,
            "memory-bound"
        );
        let occ = Timings {
            occupancy: [Some(1), Some(4), Some(1)],
            ..base.clone()
        };
        let v = verdict(&occ);
        assert!(
            v.reasons
                .iter()
                .any(|r| r.contains("load-only 4, compute-only 1, full 1")),
            "{v:?}"
        );
        let slow_loads = Timings {
            load_only: Some(90.0),
            memory_roof: Some(9.0),
            ..base.clone()
        };
        let v = verdict(&slow_loads);
        assert!(v.reasons.iter().any(|r| r.contains("10% of copy bandwidth")), "{v:?}");
        // The decode family's load-only variant before its sink was fixed: 3.6 us against
        // a roof of 8.2 at 16x4096x4096, in a 15.5 us kernel. It said "pipeline-bound".
        let lost = Timings {
            full: 15.5,
            load_only: Some(3.6),
            compute_only: Some(6.0),
            memory_roof: Some(8.2),
            ..base.clone()
        };
        let v = verdict(&lost);
        assert!(v.reasons[0].contains("did not do all its loads"), "{v:?}");
        assert_ne!(v.kind, "pipeline-bound", "{v:?}");
        assert!(!v.reasons.iter().any(|r| r.starts_with("load-only =")), "{v:?}");
        let bare = verdict(&Timings {
            full: 10.0,
            ..Timings::default()
        });
        assert_eq!(bare.kind, "balanced");
        assert!(bare.reasons.is_empty());
    }

    /// A short kernel's shares are of its time above an empty launch's: 3.6 us of stores
    /// in 16 us between events is 22% (under the store-bound line), and 27% of the 13.2 us
    /// the kernel itself takes. A floor of half the time or more is not a launch's and is
    /// left out.
    #[test]
    fn a_launch_floor_takes_the_launch_out_of_the_shares() {
        let short = Timings {
            full: 16.0,
            load_only: Some(13.0),
            compute_only: Some(13.5),
            no_store: Some(12.4),
            ..Timings::default()
        };
        let without = verdict(&short);
        assert_ne!(without.kind, "store-bound", "{without:?}");
        assert!(
            without
                .reasons
                .iter()
                .any(|r| r.contains("writing the output costs 22%")),
            "{without:?}"
        );
        let with = verdict(&Timings {
            launch_floor: Some(2.8),
            ..short.clone()
        });
        assert_eq!(with.kind, "store-bound", "{with:?}");
        assert!(
            with.reasons[0].contains("empty launch takes 2.8 us") && with.reasons[0].contains("13.2 us above it"),
            "{with:?}"
        );
        assert!(
            with.reasons.iter().any(|r| r.contains("writing the output costs 27%")),
            "{with:?}"
        );
        assert!(
            with.reasons.iter().any(|r| r == "load-only = 77% of the full time"),
            "{with:?}"
        );
        let odd = Timings {
            launch_floor: Some(9.0),
            ..short.clone()
        };
        assert_eq!(verdict(&odd), without);
        assert_eq!((short.floor(), odd.floor()), (0.0, 0.0));
        let taken = Timings {
            launch_floor: Some(2.8),
            ..short
        };
        assert_eq!(taken.floor(), 2.8);
    }
}
