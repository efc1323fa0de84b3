//! The kernel's build-time config table ([`gemm_core::table`]) at launch: a measured
//! winner for this device and bucket, or the nearest starting point.
//!
//! The table is consulted after the tuning cache: a winner tuned on this very machine
//! knows more than one shipped with the crate. `CROSSGEMM_IGNORE_TABLES` leaves it out.

use crate::cache;
use crate::call::Call;
use crate::spec::TargetKernel;
use gemm_core::table::Seed;
use gemm_core::TileConfig;

/// The table's winner for `bucket` on the call's device (same device name, same
/// signature and epilogue class, same bucket), if it can run the call.
pub(super) fn winner<'t>(call: &Call<'_, '_>, tk: &'t TargetKernel, bucket: &str) -> Option<&'t Seed> {
    winner_in(entries(tk), &call.device().info().name, bucket, |c| call.usable(tk, c))
}

/// The table's best starting point for `bucket` on the call's device.
pub(super) fn nearest<'t>(call: &Call<'_, '_>, tk: &'t TargetKernel, bucket: &str) -> Option<&'t Seed> {
    nearest_in(entries(tk), &call.device().info().name, bucket, |c| call.usable(tk, c))
}

/// The entries a device of this name may run: its winners, or, when the table has none
/// for it, the entry a `cached` launch at each of the table's buckets starts from.
pub(super) fn for_device<'t>(tk: &'t TargetKernel, device: &str) -> Vec<&'t Seed> {
    for_device_in(entries(tk), device)
}

fn for_device_in<'t>(table: &'t [Seed], device: &str) -> Vec<&'t Seed> {
    let mine: Vec<&Seed> = table.iter().filter(|s| s.winner && s.device_name == device).collect();
    if !mine.is_empty() {
        return mine;
    }
    // Every entry would compile the records of every device measured (H100 and H200
    // alike) for a device that runs only the most alike one's wherever both have a bucket.
    let mut out: Vec<&Seed> = Vec::new();
    for s in table {
        if let Some(start) = nearest_in(table, device, &s.bucket, |_| true) {
            if !out.iter().any(|o| std::ptr::eq(*o, start)) {
                out.push(start);
            }
        }
    }
    out
}

fn entries(tk: &TargetKernel) -> &[Seed] {
    if crate::env::ignore_tables() {
        &[]
    } else {
        tk.table()
    }
}

fn winner_in<'t>(
    table: &'t [Seed],
    device: &str,
    bucket: &str,
    usable: impl Fn(&TileConfig) -> bool,
) -> Option<&'t Seed> {
    table
        .iter()
        .find(|s| s.winner && s.bucket == bucket && s.device_name == device && usable(&s.config))
}

/// Entries measured on a device of this name first, then the nearest bucket (log
/// distance, as [`super::choose::nearest_winner`] measures it: a tile that suits the
/// shape matters more than the epilogue it was tuned with), then those of the device
/// whose name shares the longest prefix with this one's (an "NVIDIA H200 NVL" starts
/// from the H200 SXM's records, not the H100's, which the table's order would give it),
/// then winners before starting points. Never this device's winner of `bucket` itself,
/// which is [`winner_in`]'s.
fn nearest_in<'t>(
    table: &'t [Seed],
    device: &str,
    bucket: &str,
    usable: impl Fn(&TileConfig) -> bool,
) -> Option<&'t Seed> {
    // (another device, bucket distance, name unlikeness, not a winner): lowest first.
    type Rank = (u8, f64, std::cmp::Reverse<usize>, u8);
    let mut best: Option<(Rank, &Seed)> = None;
    for s in table {
        let here = s.device_name == device;
        if here && s.winner && s.bucket == bucket {
            continue;
        }
        let Some(dist) = cache::bucket_distance(bucket, &s.bucket) else {
            continue;
        };
        let kin = std::cmp::Reverse(common_prefix(device, &s.device_name));
        let rank = (u8::from(!here), dist, kin, u8::from(!s.winner));
        if best.as_ref().is_some_and(|(r, _)| *r <= rank) || !usable(&s.config) {
            continue;
        }
        best = Some((rank, s));
    }
    best.map(|(_, s)| s)
}

/// Characters `a` and `b` share from their start.
fn common_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

/// How a table entry is named in reports and logs: `table <bucket> (<file>: <kernel>)`.
pub(super) fn describe(s: &Seed) -> String {
    format!("table {} ({})", s.bucket, s.from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::family::SimtTile;

    fn config(mwg: u32) -> TileConfig {
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

    fn seed(bucket: &str, device: &str, winner: bool, mwg: u32) -> Seed {
        Seed {
            bucket: bucket.into(),
            config: config(mwg),
            shape: gemm_core::records::bucket_dims(bucket).unwrap(),
            us: 1.0,
            device_name: device.into(),
            winner,
            from: "t.json: k".into(),
        }
    }

    #[test]
    fn a_winner_is_of_this_device_and_bucket_and_runs() {
        let t = vec![
            seed("pow2:64x64x64", "other", true, 16),
            seed("pow2:64x64x64", "cpu", false, 32),
            seed("pow2:64x64x64", "cpu", true, 64),
        ];
        let any = |_: &TileConfig| true;
        assert_eq!(winner_in(&t, "cpu", "pow2:64x64x64", any).unwrap().config, config(64));
        assert!(winner_in(&t, "cpu", "pow2:128x64x64", any).is_none());
        assert!(winner_in(&t, "gpu", "pow2:64x64x64", any).is_none());
        assert!(winner_in(&t, "cpu", "pow2:64x64x64", |c| *c != config(64)).is_none());
    }

    #[test]
    fn the_nearest_prefers_this_device_then_distance_then_winners() {
        let t = vec![
            seed("pow2:64x64x64", "other", true, 8),
            seed("pow2:64x64x128", "cpu", false, 16),
            seed("pow2:64x64x1024", "cpu", true, 32),
            seed("pow2:64x64x64", "cpu", true, 64),
            seed("pow2:64x64x128", "cpu", true, 128),
        ];
        let any = |_: &TileConfig| true;
        // This device's winner of the bucket itself is not a starting point; of two at
        // the same distance the winner.
        assert_eq!(nearest_in(&t, "cpu", "pow2:64x64x64", any).unwrap().config, config(128));
        assert_eq!(
            nearest_in(&t, "cpu", "pow2:64x64x64", |c| *c != config(128))
                .unwrap()
                .config,
            config(16)
        );
        assert_eq!(
            nearest_in(&t, "cpu", "pow2:64x64x1024", any).unwrap().config,
            config(128),
            "its own bucket's winner excluded, the nearest winner"
        );
        // On a device of another name its entries rank alike: the nearest first.
        assert_eq!(nearest_in(&t, "gpu", "pow2:64x64x64", any).unwrap().config, config(8));
        assert!(nearest_in(&t, "cpu", "not a bucket", any).is_none());
        assert!(nearest_in(&t, "cpu", "pow2:64x64x64", |_| false).is_none());
    }

    #[test]
    fn another_device_starts_from_the_most_alike_name() {
        // The same bucket measured on an H100 and an H200, the H100's listed first (the
        // table sorts by device name): an H200 NVL starts from the H200's, an H100 PCIe
        // from the H100's, whatever the order.
        let h100 = seed("pow2:64x64x64", "NVIDIA H100 80GB HBM3", true, 16);
        let h200 = seed("pow2:64x64x64", "NVIDIA H200", true, 32);
        let any = |_: &TileConfig| true;
        for t in [vec![h100.clone(), h200.clone()], vec![h200.clone(), h100.clone()]] {
            assert_eq!(
                nearest_in(&t, "NVIDIA H200 NVL", "pow2:64x64x64", any).unwrap().config,
                config(32)
            );
            assert_eq!(
                nearest_in(&t, "NVIDIA H100 PCIe", "pow2:64x64x64", any).unwrap().config,
                config(16)
            );
        }
        // A nearer bucket still comes first.
        let t = vec![seed("pow2:64x64x128", "NVIDIA H200", true, 32), h100];
        assert_eq!(
            nearest_in(&t, "NVIDIA H200 NVL", "pow2:64x64x64", any).unwrap().config,
            config(16)
        );
        assert_eq!(common_prefix("NVIDIA H200 NVL", "NVIDIA H200"), 11);
    }

    #[test]
    fn a_device_without_winners_prepares_what_its_launches_start_from() {
        let t = vec![
            seed("pow2:64x64x64", "NVIDIA H100 80GB HBM3", true, 8),
            seed("pow2:64x64x128", "NVIDIA H100 80GB HBM3", true, 16),
            seed("pow2:64x64x64", "NVIDIA H200", true, 32),
            seed("pow2:64x64x64", "NVIDIA H200", false, 64),
            seed("pow2:64x64x1024", "NVIDIA H200", true, 128),
        ];
        let configs = |device| for_device_in(&t, device).iter().map(|s| s.config).collect::<Vec<_>>();
        // Its own winners where it has any.
        assert_eq!(configs("NVIDIA H200"), vec![config(32), config(128)]);
        // Else per bucket the most alike device's winner: the H200's at the bucket both
        // measured, the H100's where only it did; no starting point behind a winner.
        assert_eq!(configs("NVIDIA H200 NVL"), vec![config(32), config(16), config(128)]);
        assert_eq!(configs("NVIDIA H100 PCIe"), vec![config(8), config(16), config(128)]);
        assert!(for_device_in(&[], "NVIDIA H200 NVL").is_empty());
    }
}
