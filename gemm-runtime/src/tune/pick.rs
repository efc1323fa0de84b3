//! The winner among the verified, timed candidates. The fastest median wins, except that
//! candidates whose medians lie within the noise of the fastest (the tie band) are one
//! tie, decided by a fixed order: the planner's rank, then the config's text. Two
//! processes, or two identical GPUs, timing the same shape then pick the same config
//! whenever their timings differ by noise only, and the tie goes to the config the planner
//! ranks first (the one other shapes of the bucket are most likely to share).

use crate::measure::Timed;
use gemm_core::TileConfig;

/// Narrowest tie band: medians within 1% tie even when the fastest's runs agreed to the
/// last digit (a device clock's step, launch jitter between processes).
pub(crate) const MIN_TIE: f64 = 0.01;
/// Widest: a noisy device (a CPU under load) does not make a config 10% slower a tie.
pub(crate) const MAX_TIE: f64 = 0.05;

/// Most candidates re-timed together in the final round ([`finalists`]). Six, not four:
/// on the H200 the first pass of a tune at 2048x11008x4096 left out 128x128 s6, which the
/// bench then found 4% ahead of the winner (bench/results/h200-2026-12-02zg); each
/// finalist adds about 20 ms of device time (its share of the rounds).
pub(crate) const FINALISTS: usize = 6;
/// How far behind the fastest a candidate may be and still go to the final round: past
/// the clock drift one tune has shown (on the H200 at 2048x11008x4096 the same config's
/// median moved from 266 to 307 us between processes, as the chip ran into its power
/// limit), so that a config timed while the chip was slower still gets its rematch.
pub(crate) const FINAL_BAND: f64 = 0.10;

/// The candidates of the final round: the up to [`FINALISTS`] fastest of `entries`
/// whose medians lie within `band` ([`FINAL_BAND`] but in tests) of the fastest, fastest
/// first; none when fewer than two qualify (one candidate has nothing to be compared
/// with).
pub(crate) fn finalists(entries: &[Entry], band: f64) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..entries.len()).collect();
    idx.sort_by(|&a, &b| entries[a].timed.ms.total_cmp(&entries[b].timed.ms));
    let Some(&first) = idx.first() else {
        return Vec::new();
    };
    let limit = entries[first].timed.ms * (1.0 + band);
    idx.retain(|&i| entries[i].timed.ms <= limit);
    idx.truncate(FINALISTS);
    if idx.len() < 2 {
        idx.clear();
    }
    idx
}

/// One verified, timed candidate.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    /// The config.
    pub(crate) config: TileConfig,
    /// Its position in the plan's config list (`usize::MAX` for one not in it, such as a
    /// nearest-bucket winner of another build).
    pub(crate) rank: usize,
    /// Its timing.
    pub(crate) timed: Timed,
}

/// What [`pick`] decided.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Picked {
    /// Index of the winner in the entries.
    pub(crate) winner: usize,
    /// The fastest median, ms.
    pub(crate) fastest_ms: f64,
    /// The band: medians up to `fastest_ms * (1 + band)` tie.
    pub(crate) band: f64,
    /// The configs in the tie, the winner first, then in the fixed order.
    pub(crate) tied: Vec<TileConfig>,
}

/// The winner of `entries` (`None` when empty): the fixed order's first among those
/// within the band of the fastest, the band being the fastest's own spread, clamped to
/// [`MIN_TIE`]..[`MAX_TIE`].
pub(crate) fn pick(entries: &[Entry]) -> Option<Picked> {
    let fastest = entries.iter().min_by(|a, b| a.timed.ms.total_cmp(&b.timed.ms))?;
    let band = fastest.timed.spread.clamp(MIN_TIE, MAX_TIE);
    let limit = fastest.timed.ms * (1.0 + band);
    let mut tied: Vec<usize> = (0..entries.len()).filter(|&i| entries[i].timed.ms <= limit).collect();
    tied.sort_by_cached_key(|&i| (entries[i].rank, entries[i].config.to_string()));
    Some(Picked {
        winner: tied[0],
        fastest_ms: fastest.timed.ms,
        band,
        tied: tied.iter().map(|&i| entries[i].config).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::SimtTile;

    fn cfg(mwg: u32) -> TileConfig {
        TileConfig::Simt(SimtTile {
            mwg,
            nwg: 32,
            kwg: 16,
            mdimc: 8,
            ndimc: 8,
            vw: 1,
            group_m: 1,
            ksplit: 1,
        })
    }

    fn entry(mwg: u32, rank: usize, ms: f64, spread: f64) -> Entry {
        Entry {
            config: cfg(mwg),
            rank,
            timed: Timed { ms, spread },
        }
    }

    #[test]
    fn the_fastest_wins_outside_the_band() {
        let p = pick(&[entry(16, 0, 1.10, 0.0), entry(32, 1, 1.00, 0.0)]).unwrap();
        assert_eq!((p.winner, p.band, p.tied.len()), (1, MIN_TIE, 1));
        assert!(pick(&[]).is_none());
    }

    #[test]
    fn a_tie_goes_to_the_planners_first() {
        // 0.5% apart: a tie under the narrowest band, whichever process measured faster.
        for (a, b) in [(1.000, 1.005), (1.005, 1.000)] {
            let p = pick(&[entry(32, 3, a, 0.0), entry(16, 1, b, 0.0), entry(64, 0, 1.2, 0.0)]).unwrap();
            assert_eq!(p.winner, 1, "{a} {b}");
            assert_eq!(p.tied, vec![cfg(16), cfg(32)]);
        }
    }

    #[test]
    fn the_band_follows_the_fastests_noise_within_limits() {
        // 3% apart: a tie when the fastest's runs spread 4%, not when they spread 0.
        let noisy = pick(&[entry(32, 1, 1.00, 0.04), entry(16, 0, 1.03, 0.0)]).unwrap();
        assert_eq!((noisy.winner, noisy.band), (1, 0.04));
        let quiet = pick(&[entry(32, 1, 1.00, 0.0), entry(16, 0, 1.03, 0.0)]).unwrap();
        assert_eq!(quiet.winner, 0);
        // A spread of 50% still ties only within 5%.
        let wild = pick(&[entry(32, 1, 1.00, 0.5), entry(16, 0, 1.06, 0.0)]).unwrap();
        assert_eq!((wild.winner, wild.band), (0, MAX_TIE));
    }

    #[test]
    fn the_final_round_takes_the_fastest_few_within_its_band() {
        let e = [
            entry(16, 0, 1.30, 0.0),
            entry(32, 1, 1.05, 0.0),
            entry(64, 2, 1.00, 0.0),
            entry(128, 3, 1.09, 0.0),
            entry(8, 4, 1.02, 0.0),
            entry(4, 5, 1.08, 0.0),
        ];
        // Fastest first; 1.30 is out of the band.
        assert_eq!(finalists(&e, FINAL_BAND), vec![2, 4, 1, 5, 3]);
        // Nothing within the band of the fastest: no final round.
        assert!(finalists(&[entry(16, 0, 1.0, 0.0), entry(32, 1, 1.2, 0.0)], FINAL_BAND).is_empty());
        assert!(finalists(&[entry(16, 0, 1.0, 0.0)], FINAL_BAND).is_empty());
        assert!(finalists(&[], FINAL_BAND).is_empty());
        // A wider band lets more in, still FINALISTS at most.
        assert_eq!(finalists(&e, f64::INFINITY), vec![2, 4, 1, 5, 3, 0]);
        let seven: Vec<Entry> = (0..7).map(|i| entry(16 << i, i, 1.0 + 0.001 * i as f64, 0.0)).collect();
        assert_eq!(finalists(&seven, FINAL_BAND), (0..FINALISTS).collect::<Vec<_>>());
        assert_eq!(finalists(&e[..2], f64::INFINITY), vec![1, 0]);
    }

    #[test]
    fn equal_ranks_fall_back_to_the_configs_text() {
        let p = pick(&[entry(32, usize::MAX, 1.0, 0.0), entry(16, usize::MAX, 1.0, 0.0)]).unwrap();
        assert_eq!(
            p.tied[0],
            if cfg(16).to_string() < cfg(32).to_string() {
                cfg(16)
            } else {
                cfg(32)
            }
        );
    }

    #[test]
    fn a_final_round_under_drift_is_decided_by_the_pairs() {
        // Batch zg's f16 tune in miniature: the planner's first (rank 0) runs 3% behind a
        // later config in every round while the clock drifts 8% over the rounds. Medians
        // alone spread 4% and tie them, which gives the planner's first the win; round by
        // round the later config wins.
        let rounds = 20;
        let drift = |t: usize| 1.0 + 0.08 * t as f64 / rounds as f64;
        let times: Vec<Vec<f64>> = [1.03, 1.0]
            .iter()
            .map(|&k| {
                (0..rounds)
                    .map(|t| k * drift(t) * if t % 3 == 0 { 1.004 } else { 1.0 })
                    .collect()
            })
            .collect();
        let by_medians: Vec<Entry> = times
            .iter()
            .enumerate()
            .map(|(i, t)| Entry {
                config: cfg(16 << i),
                rank: i,
                timed: crate::measure::Timed::of(&mut t.clone()),
            })
            .collect();
        assert_eq!(pick(&by_medians).unwrap().winner, 0, "medians tie: {by_medians:?}");
        let by_pairs: Vec<Entry> = crate::measure::paired(&times)
            .into_iter()
            .enumerate()
            .map(|(i, timed)| Entry {
                config: cfg(16 << i),
                rank: i,
                timed,
            })
            .collect();
        let p = pick(&by_pairs).unwrap();
        assert_eq!((p.winner, p.tied.len()), (1, 1), "{by_pairs:?}");
    }
}
