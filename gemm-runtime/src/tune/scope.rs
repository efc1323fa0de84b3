//! How much of its candidate list one tune times. Compiling dominates a tune (a few tenths
//! of a second per config under NVRTC, about a second under PoCL), while a problem of a
//! few MFLOP runs within microseconds whatever planned config runs it: timing 48 configs
//! there saves a microsecond per call and costs seconds at the first one. So the count
//! grows with the problem's work, `2·M·N·K`:
//!
//! - below [`FEW_FLOP`], the first candidate that passes verification (the nearest
//!   bucket's winner, else the planner's first) is the winner;
//! - below [`SHORT_FLOP`], the first [`SHORT_LIST`] candidates (the planner ranks them
//!   best first);
//! - above, every listed candidate.
//!
//! A count given explicitly (`CROSSGEMM_TUNE_MAX`, `--max`,
//! [`TuneOptions::max_candidates`](super::TuneOptions::max_candidates)) and a thorough tune
//! ([`TuneOptions::thorough`](super::TuneOptions::thorough), which `crossgemm bench` uses)
//! time the whole list whatever the work. When none of the wanted candidates passes, the
//! tune goes on down the list until one does: a budget never turns a tune into an error.

/// Work below which any planned config is within microseconds of the best: 2^23 FLOP
/// (8.4 MFLOP), 10 µs at 1 TFLOP/s, a fraction of one launch's overhead on a GPU.
pub(crate) const FEW_FLOP: f64 = (1u64 << 23) as f64;
/// Work below which a short list suffices: 2^30 FLOP (1.07 GFLOP), a few microseconds of
/// tensor-core time on the H200, where the planner's top configs differ by launch shape
/// more than by throughput.
pub(crate) const SHORT_FLOP: f64 = (1u64 << 30) as f64;
/// The short list's length.
pub(crate) const SHORT_LIST: usize = 16;

/// How many of a tune's listed candidates it wants timed, and the rule that said so.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Scope {
    /// Candidates to verify and time before the search may stop (at least 1).
    pub(crate) wanted: usize,
    /// The rule, for the report.
    pub(crate) rule: String,
}

/// The scope of a tune of `m × n × k` over `listed` candidates; `explicit`: the count was
/// asked for; `thorough`: every candidate was.
pub(crate) fn scope((m, n, k): (usize, usize, usize), listed: usize, explicit: bool, thorough: bool) -> Scope {
    let flop = 2.0 * m as f64 * n as f64 * k as f64;
    let mflop = flop / 1e6;
    let (wanted, rule) = if thorough {
        (listed, format!("thorough: all {listed} candidates"))
    } else if explicit {
        (listed, format!("the {listed} candidates asked for"))
    } else if flop < FEW_FLOP {
        (
            1,
            format!(
                "{mflop:.2} MFLOP < {:.1}: the first candidate that passes (any config takes microseconds)",
                FEW_FLOP / 1e6
            ),
        )
    } else if flop < SHORT_FLOP {
        (
            SHORT_LIST.min(listed),
            format!(
                "{mflop:.0} MFLOP < {:.0}: the first {SHORT_LIST} candidates",
                SHORT_FLOP / 1e6
            ),
        )
    } else {
        (listed, format!("{mflop:.0} MFLOP: all {listed} candidates"))
    };
    Scope {
        wanted: wanted.max(1),
        rule,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_grows_with_the_work() {
        let s = |shape, listed| scope(shape, listed, false, false).wanted;
        assert_eq!(s((7, 13, 1), 48), 1);
        assert_eq!(s((128, 128, 255), 48), 1, "8.36 MFLOP");
        assert_eq!(s((128, 128, 256), 48), SHORT_LIST, "8.39 MFLOP");
        assert_eq!(s((1, 4096, 11008), 48), SHORT_LIST);
        assert_eq!(s((1024, 1024, 511), 48), SHORT_LIST);
        assert_eq!(s((1024, 1024, 512), 48), 48);
        assert_eq!(s((4096, 4096, 4096), 48), 48);
        assert_eq!(s((1024, 1024, 64), 6), 6, "a short list no longer than the list");
        assert_eq!(s((4096, 4096, 4096), 0), 1, "at least one");
    }

    #[test]
    fn an_explicit_count_or_a_thorough_tune_takes_the_list() {
        assert_eq!(scope((7, 13, 1), 3, true, false).wanted, 3);
        assert_eq!(scope((7, 13, 1), 48, false, true).wanted, 48);
        let r = scope((7, 13, 1), 48, false, false).rule;
        assert!(r.contains("0.00 MFLOP < 8.4") && r.contains("first candidate"), "{r}");
    }
}
