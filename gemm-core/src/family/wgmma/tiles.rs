//! The wgmma family's tile space: the block shapes, k-tile depths, ring depths,
//! schedules and clusters the planner enumerates before the rules and the score prune
//! and rank them.

use super::{bk_for, splitk, WgmmaTile};
use crate::family::PlanCtx;
use crate::ir::Layout;
use crate::space::TuneSpace;

/// The block widths a plan tries: the powers of two and 192, and [`WAVE_FIT_BN`].
const BLOCK_N: [u32; 6] = [64, 128, 192, 256, 176, 240];

/// Widths whose tile counts fill the last wave where the usual ones leave it mostly
/// idle: 2048×11008×4096 in 128×256 tiles is 688 tiles, 5.2 waves on 132 SMs (six
/// waves of work for 5.2 waves' worth); in 128×240 tiles it is 736, 5.6 waves of 6% less
/// work each, and in 128×176 tiles 1008, 7.6 waves of 31% less. A wgmma N only has to
/// be a multiple of 8 (the epilogue's 16-column groups make it 16); the epilogue
/// stores the last partial 64-column chunk two elements at a time.
///
/// Measured on the H200 (bench/results/h200-2026-12-02k..m): not the 6% the wave count
/// promised. At 2048×11008×4096 f16 128×240 took 278–280 µs against 271–272 for the
/// 128×256 tile in the same tunes; the chip runs that shape at its power limit, where
/// a partly idle last wave costs less than its share of the time. They won the bf16
/// bias+GELU rows of the M = 2048 LLM shapes, by 1–3% in the tuner's final round.
pub const WAVE_FIT_BN: [u32; 2] = [176, 240];

/// The ring depths the planner tries on every tile (those that fit its shared memory).
const STAGES: [u32; 6] = [3, 4, 5, 6, 8, 10];

/// Whether `t` is one of the tiles planned beside the usual ones, each block tile
/// keeping its best config (a plan class of its own, with room made for it) while the
/// rest rank after every usual config: the wave-fitting widths ([`WAVE_FIT_BN`]), the
/// 192-row tiles of three consumers and the deep rings ([`deep_ring`]). Why 192 rows: at
/// 2048x11008x4096 cuBLAS and cuBLASLt run 192x192 tiles
/// (bench/results/h200-2026-12-02zj: 638 tiles, 4.83 waves on 132 SMs, against 688 and
/// 5.21 for 128x256, and 11% fewer operand bytes a flop).
pub(super) fn apart(t: &WgmmaTile) -> bool {
    WAVE_FIT_BN.contains(&t.bn) || t.consumers == 3 || deep_ring(t)
}

/// Whether `t`'s ring is deeper than any of [`STAGES`]: in the plan, the 64x64 tile of
/// one consumer with K whole and as many stages as shared memory holds
/// ([`deepest_ring`]; 13 of 16 KB for 16-bit operands), or what a user's `stages` asks.
/// Why that tile: at 48-128 rows its loads are bound by their latency, and
/// 13 stages took it from 20.8 to 18.2 µs at 64x4096x4096 with a row-major W, a tie with
/// the tuned winners at 48-64 rows of either layout, and 4-7% ahead of the tuned 64x128
/// with K in 2 at 128x4096x4096 (18.9-19.1 against 19.8-20.3 µs;
/// bench/results/h200-2026-12-04aa5). With K in 2 the depth changed nothing there.
pub(super) fn deep_ring(t: &WgmmaTile) -> bool {
    t.stages > STAGES[STAGES.len() - 1]
}

/// The deep-ring tile of [`deep_ring`] for `cx`, where 16-bit operands (what was
/// measured) give it more stages than [`STAGES`] has and the user's `space` leaves its
/// block tile, k-tile and depth in.
fn deepest_ring(cx: &PlanCtx, space: &TuneSpace) -> Option<WgmmaTile> {
    let row = bk_for(cx.dtype);
    let fits = |stages| WgmmaTile::new(64, 64, stages, 1).smem_bytes(cx.dtype) <= cx.target.smem_per_block_optin;
    let stages = (STAGES[STAGES.len() - 1] + 1..=32).take_while(|&s| fits(s)).last()?;
    let asked = |key, v| space.pick(key, &[v]).contains(&v);
    (cx.dtype.size() == 2
        && asked("block_m", 64)
        && asked("block_n", 64)
        && asked("block_k", row)
        && asked("stages", stages))
    .then(|| WgmmaTile {
        bk: row,
        ..WgmmaTile::new(64, 64, stages, 1)
    })
}

/// The (consumers, ping-pong) schedules the planner tries on `bm`-row tiles: one
/// consumer, two cooperative or in ping-pong (64-row tiles: three in ping-pong too); 192
/// rows only with three consumers of one slab each (the other schedules of 192 rows
/// would take room from the usual tiles).
fn schedules(bm: u32) -> &'static [(u32, bool)] {
    match bm {
        192 => &[(3, false)],
        // Three consumers in ping-pong on 64-row tiles (at most 96 accumulators each):
        // two store while one computes, for shapes whose epilogue outlasts a mainloop.
        64 => &[(1, false), (2, false), (2, true), (3, true)],
        _ => &[(1, false), (2, false), (2, true)],
    }
}

/// The k-tile depths the planner tries on a `bm × bn` tile: one swizzle row (a 128-byte
/// run of each operand row per stage), and on the 64-row tiles of decode-size problems
/// with K-major A and B also two (64×128, 64×64) and four (64×64) rows, which the
/// producer loads as one box per row back to back. Why: at M = 16 these tiles stream B
/// as 128-byte runs of 64 or 128 rows 2·K bytes apart, and longer runs per row and stage
/// may suit the memory better (issue 10).
fn k_tiles(cx: &PlanCtx, bm: u32, bn: u32) -> Vec<u32> {
    let row = bk_for(cx.dtype);
    let k_major = cx.a_layout == Layout::RowMajor && cx.b_layout == Layout::ColMajor;
    match (bm, bn) {
        (64, 64) if k_major => vec![row, 2 * row, 4 * row],
        (64, 128) if k_major => vec![row, 2 * row],
        _ => vec![row],
    }
}

/// Every candidate tile under the user's `space` (its `block_m`, `block_n`, `block_k`,
/// `stages` and `group_m` choices, the planner's by default), with the split-K and
/// stream-K variants it asks for.
pub(super) fn space(cx: &PlanCtx, space: &TuneSpace) -> Vec<WgmmaTile> {
    let quads = space.pick("cluster_n", &[1, 2]).contains(&2);
    let tma_store = space.pick("tma_store", &[0]).contains(&1);
    let reuse = space.pick("reuse", &[0]).contains(&1);
    let mut v = Vec::new();
    for bm in space.pick("block_m", &[64, 128, 192, 256]) {
        for bn in space.pick("block_n", &BLOCK_N) {
            for bk in space.pick("block_k", &k_tiles(cx, bm, bn)) {
                for stages in space.pick("stages", &STAGES) {
                    for &(consumers, pingpong) in schedules(bm) {
                        for group_m in space.pick("group_m", &[8]) {
                            for cluster_m in [1, 2] {
                                let t = WgmmaTile {
                                    bk,
                                    group_m,
                                    cluster_m,
                                    pingpong,
                                    ..WgmmaTile::new(bm, bn, stages, consumers)
                                };
                                v.extend(splitk::with_splits(t, space));
                                v.extend(splitk::with_streamk(t, space));
                                // Where `tune(tma_store = 1)` asks, the same tile with the
                                // TMA-store epilogue: a plan class of its own, so that each
                                // block tile keeps its best one.
                                if tma_store && cluster_m == 1 {
                                    v.push(WgmmaTile { tma_store: true, ..t });
                                }
                                // Where `tune(reuse = 1)` asks, the same tile walking a run
                                // of items and keeping operand tiles in its ring: a plan
                                // class of its own.
                                if reuse && cluster_m == 1 {
                                    v.push(WgmmaTile { reuse: true, ..t });
                                }
                            }
                            // A 2x2 cluster sharing both operands, for the cooperative
                            // schedule of two consumers: a plan class of its own, unless
                            // the kernel's `tune(cluster_n = 1)` leaves it out. On the H200
                            // it is correct (every-config tests, persistent loops, batches,
                            // compute-sanitizer, the cluster test of tests/kernels.rs) and
                            // slower than the same tiles without on sector-aligned rows:
                            // 1000^3 13.44 us (128x128) against 12.50; 4096^3 214 against
                            // 182.5 and 2048x11008x4096 300 against 268 with the grid
                            // lowered to the 30 clusters of 4 that run at once (12 SMs
                            // idle; bench/results/h200-2026-12-02t, -02y). On rows that
                            // start mid-sector it wins where the waves allow: K + 8 views
                            // of 2048x11008x4096 267.5 us against 281 in 2-block clusters
                            // and 394 alone (-03u8); the estimate orders them by the rows
                            // (`Wgmma::estimate_factor`).
                            if quads && consumers == 2 && !pingpong {
                                v.push(WgmmaTile {
                                    bk,
                                    group_m,
                                    cluster_m: 2,
                                    cluster_n: 2,
                                    ..WgmmaTile::new(bm, bn, stages, consumers)
                                });
                            }
                        }
                    }
                }
            }
        }
    }
    v.extend(deepest_ring(cx, space));
    if space.pick("turned", &[0]).contains(&1) {
        v.extend(turned(cx, space));
    }
    v
}

/// The turned-around tiles ([`WgmmaTile::turned`]) that `tune(turned = 1)` asks for: the
/// few rows of C (`block_m`, 32 or 64 by default) as the wgmma N, 64 or 128 of its
/// columns (`block_n`) as the tile's rows, K whole, one consumer a 64-row slab, and the
/// deepest ring that fits (or the user's `stages`). Why these: the products they are for
/// (M of 32 to 128 over wide N) are bound by their loads' latency, where the deepest
/// ring won the plain form's 64x64 tile 13% (bench/results/h200-2026-12-04aa5).
fn turned(cx: &PlanCtx, space: &TuneSpace) -> Vec<WgmmaTile> {
    let mut v = Vec::new();
    for rows_of_c in space.pick("block_m", &[32, 64]) {
        for cols_of_c in space.pick("block_n", &[64, 128]) {
            let consumers = (cols_of_c / 64).max(1);
            let tile = |stages| WgmmaTile {
                bk: bk_for(cx.dtype),
                turned: true,
                ..WgmmaTile::new(cols_of_c, rows_of_c, stages, consumers)
            };
            let fits = |&s: &u32| tile(s).smem_bytes(cx.dtype) <= cx.target.smem_per_block_optin;
            let Some(deepest) = (2..=32).take_while(fits).last() else {
                continue;
            };
            for stages in space.pick("stages", &[deepest]) {
                for group_m in space.pick("group_m", &[8]) {
                    v.push(WgmmaTile {
                        group_m,
                        ..tile(stages)
                    });
                }
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{AccMode, DType, GemmIr};
    use crate::target::{Targets, BUILTIN_TARGETS};

    /// The 2x2 clusters come unless `tune(cluster_n = 1)` leaves them out, one per
    /// two-consumer cooperative tile and ring depth, each passing the family's rules.
    #[test]
    fn two_by_two_clusters_are_planned_unless_left_out() {
        let h200 = Targets::parse(BUILTIN_TARGETS).unwrap().get("h200").unwrap().clone();
        let ir = GemmIr::matmul("q", DType::F16, AccMode::F32, Layout::RowMajor, Layout::ColMajor);
        let cx = PlanCtx::new(&h200, &ir);
        let mut left_out = TuneSpace::default();
        left_out.0.insert("cluster_n".into(), vec![1]);
        assert!(space(&cx, &left_out).iter().all(|t| t.cluster_n == 1));
        let quads: Vec<WgmmaTile> = space(&cx, &TuneSpace::default())
            .into_iter()
            .filter(|t| t.cluster_n == 2)
            .collect();
        assert!(!quads.is_empty());
        assert!(quads.iter().all(|t| t.cluster_m == 2
            && t.consumers == 2
            && !t.pingpong
            && t.ksplit == 1
            && !t.streamk));
        assert!(quads
            .iter()
            .any(|t| t.bm == 128 && t.bn == 128 && t.validate(&ir).is_ok()));
    }

    /// The deep ring: one 64x64 tile of one consumer, K whole, 13 stages for 16-bit
    /// operands (what shared memory holds beside the staging buffers), a plan class of
    /// its own; none for tf32 (not measured) or where the user's stages leave it out.
    #[test]
    fn the_deep_ring_is_the_deepest_that_fits() {
        let h200 = Targets::parse(BUILTIN_TARGETS).unwrap().get("h200").unwrap().clone();
        let deep = |dtype, acc, user: &TuneSpace| -> Vec<WgmmaTile> {
            let ir = GemmIr::matmul("q", dtype, acc, Layout::RowMajor, Layout::RowMajor);
            space(&PlanCtx::new(&h200, &ir), user)
                .into_iter()
                .filter(deep_ring)
                .collect()
        };
        let f16 = deep(DType::F16, AccMode::F32, &TuneSpace::default());
        assert_eq!(f16, [WgmmaTile::new(64, 64, 13, 1)]);
        let ir = GemmIr::matmul("q", DType::F16, AccMode::F32, Layout::RowMajor, Layout::RowMajor);
        assert!(f16[0].validate(&ir).is_ok());
        assert!(WgmmaTile::new(64, 64, 14, 1)
            .validate(&ir)
            .unwrap_err()
            .contains("shared memory"));
        assert!(deep(DType::F32, AccMode::Tf32, &TuneSpace::default()).is_empty());
        let mut shallow = TuneSpace::default();
        shallow.0.insert("stages".into(), vec![4, 8]);
        assert!(deep(DType::Bf16, AccMode::F32, &shallow).is_empty());
        use crate::family::KernelFamily;
        let w = super::super::Wgmma;
        let usual = w.plan_class(&WgmmaTile::new(64, 64, 8, 1));
        assert_ne!(w.plan_class(&f16[0]), usual);
    }

    /// 192-row tiles come with three consumers of one slab each, and only so; the rules
    /// pass them up to 96 accumulators a thread (192x192) and no further.
    #[test]
    fn three_consumers_take_the_192_row_tiles() {
        let h200 = Targets::parse(BUILTIN_TARGETS).unwrap().get("h200").unwrap().clone();
        let ir = GemmIr::matmul("q", DType::F16, AccMode::F32, Layout::RowMajor, Layout::ColMajor);
        let cx = PlanCtx::new(&h200, &ir);
        let all = space(&cx, &TuneSpace::default());
        // Three consumers: cooperative on 192 rows, in ping-pong on 64 rows.
        assert!(all
            .iter()
            .all(|t| t.consumers != 3 || (t.bm == 192 && !t.pingpong) || (t.bm == 64 && t.pingpong)));
        assert!(all.iter().all(|t| t.bm != 192 || t.consumers == 3));
        assert!(all.iter().all(|t| t.consumers != 3 || (!t.streamk && t.ksplit == 1)));
        // Ping-pong of three: 64x64 and 64x128 pass (64 accumulators at most), 64x192 not.
        let pp3 = |bn| WgmmaTile {
            pingpong: true,
            ..WgmmaTile::new(64, bn, 8, 3)
        };
        assert!(pp3(128).validate(&ir).is_ok());
        assert!(pp3(192).validate(&ir).unwrap_err().contains("at most 64"));
        let t = |bn, stages| WgmmaTile::new(192, bn, stages, 3);
        assert!(t(192, 4).validate(&ir).is_ok());
        assert!(t(192, 5).validate(&ir).unwrap_err().contains("shared memory"));
        assert!(t(256, 3).validate(&ir).unwrap_err().contains("at most 96"));
        assert_eq!(t(192, 4).threads(), 512);
        assert_eq!(t(192, 4).est_regs(), 128);
        // Two consumers cannot split 192 rows into 64-row slabs.
        assert!(WgmmaTile::new(192, 128, 4, 2)
            .validate(&ir)
            .unwrap_err()
            .contains("multiple of 64"));
    }

    /// The launch marks the grid persistent, with the cluster it walks in, so that a
    /// launcher may lower it to what runs at once; the other families' grids are their
    /// work.
    #[test]
    fn the_persistent_grid_names_its_cluster() {
        use crate::family::{KernelFamily, Machine, Problem};
        let ir = GemmIr::matmul("q", DType::F16, AccMode::F32, Layout::RowMajor, Layout::ColMajor);
        let quad = WgmmaTile {
            cluster_m: 2,
            cluster_n: 2,
            ..WgmmaTile::new(128, 128, 6, 2)
        };
        let d = super::super::Wgmma.launch(&quad, &ir, Problem::new(4096, 4096, 4096), Machine { units: 132 });
        assert_eq!((d.grid, d.persistent), ([132, 1, 1], Some(4)));
        let plain = WgmmaTile::new(128, 128, 6, 2);
        let d = super::super::Wgmma.launch(&plain, &ir, Problem::new(1000, 1000, 1000), Machine { units: 132 });
        assert_eq!((d.grid, d.persistent), ([64, 1, 1], Some(1)));
    }
}
