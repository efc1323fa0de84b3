//! Split-K for the wgmma family (`KSPLIT` > 1): `KSPLIT` blocks compute one output tile,
//! each over its share of the k-tiles, and the last of them to finish adds the partial
//! tiles **in split order** and runs the fused epilogue.
//!
//! Why: a skinny problem (decode-size M, N = 4096) has too few output tiles to give every
//! SM a block (16×4096×4096 in 64×64 tiles: 64 blocks for 132 SMs), and each block's ring
//! is latency-bound, so half the chip's bandwidth stays idle; a wider grid of narrower
//! tiles did not help (BN = 32, measured on the H200), so the extra blocks come from K.
//!
//! How (in the kernel, `SOURCE`):
//! - The persistent grid walks `tiles * KSPLIT` work items; item `i` is split
//!   `i % KSPLIT` of tile `i / KSPLIT` and covers k-tiles `[s * kt / KSPLIT, (s + 1) * kt /
//!   KSPLIT)`. The producer walks the same items.
//! - Each consumer warpgroup is one *unit* (block tile row `rank`, consumer `c`) with
//!   `KSPLIT` slots of `BM / CONSUMERS × BN` f32 in the workspace (`cg_ws`) and one arrival
//!   counter (`cg_flags`). A split writes its accumulators to its slot in register order
//!   (16-byte `st.global.cg`, 2 KiB contiguous per warpgroup and step), fences, and one
//!   thread adds 1 to the counter (`atom.acq_rel.gpu`: `cg_arrive_last`, the protocol of
//!   every CUDA split of K, in `family/strip_sum.rs`). The split that sees `KSPLIT - 1`
//!   is the last: it resets the counter to 0, reads the slots back (`ld.global.cg`, L2,
//!   never a stale L1 line; its own too, which keeps a second accumulator array out of
//!   its registers) and sums `slot 0 + slot 1 + ...` in that order, one round of loads
//!   per slot. So the bits do not depend on which split finished last or on the launch
//!   order: a deterministic reduction with no waiting (no block ever spins on another,
//!   so no co-residency is assumed).
//! - Warps whose 16 rows lie past M write and read nothing (at M = 16 three of the four
//!   warps of a 64-row tile).
//! - The counters are zero before a launch and zero after it: the runtime zeroes them
//!   once, when it allocates the workspace ([`crate::family::Workspace`]).
//!
//! The workspace grows with the output (`tiles * BM * BN * KSPLIT * 4` bytes), so the
//! family's `accepts` refuses calls whose partials would exceed [`Workspace::MAX_BYTES`]:
//! problems with that many tiles fill the machine without splitting K.

use super::WgmmaTile;
use crate::family::{Machine, Problem, Workspace};
use crate::space::TuneSpace;

/// The largest `KSPLIT` the source takes.
pub const MAX_KSPLIT: u32 = crate::space::MAX_KSPLIT;

/// The splits the planner tries on tiles small enough to leave SMs idle.
pub const PLANNED: &[u32] = &[1, 2, 4];

/// Block tiles up to this many rows and columns get split-K variants (64×64, 64×128,
/// 128×64, 128×128): larger tiles are for problems that fill the machine anyway.
pub const MAX_SPLIT_TILE: u32 = 128;

pub(super) fn one() -> u32 {
    1
}

pub(super) fn is_one(k: &u32) -> bool {
    *k == 1
}

/// `t` with each split of the user's `ksplit` choices (the planner's by default) that
/// suits it: none for large tiles or clusters (a pair of blocks shares B; one split each
/// would still work, but the planner keeps the space small).
pub(super) fn with_splits(t: WgmmaTile, space: &TuneSpace) -> Vec<WgmmaTile> {
    space
        .pick("ksplit", PLANNED)
        .into_iter()
        .filter(|&k| k == 1 || (t.bm <= MAX_SPLIT_TILE && t.bn <= MAX_SPLIT_TILE && t.cluster() == 1 && !t.pingpong))
        .map(|ksplit| WgmmaTile { ksplit, ..t })
        .collect()
}

/// `t`'s stream-K variant, beside `t` itself, where the kernel asks for it (`tune(streamk
/// = 1)`; by default none: the variant is not yet measured on a GPU in its tail form), for
/// cooperative configs of one or two consumers without split-K or a cluster.
pub(super) fn with_streamk(t: WgmmaTile, space: &TuneSpace) -> Vec<WgmmaTile> {
    let fits = t.ksplit == 1 && t.cluster() == 1 && !t.pingpong && t.consumers <= 2;
    if fits && space.pick("streamk", &[0]).contains(&1) {
        vec![WgmmaTile { streamk: true, ..t }]
    } else {
        Vec::new()
    }
}

/// The largest split of a unit of the partial last wave (the kernel's `CG_TAIL_MAX`):
/// the unit's last split to arrive reads every split's partial tile back, so a tail of
/// one unit on 132 blocks is split 8 ways, not 132.
pub const TAIL_MAX: usize = 8;

/// Stream-K's walk of `units` work units of `kt` k-tiles on `blocks` blocks, as the
/// kernel's `cg_walk` counts it: `(whole, splits)`, the units that run whole (the full
/// waves, or all of them) and how many ways each of the rest (the partial last wave) is
/// split by K, `min(blocks / tail, kt, TAIL_MAX)`, or 1 where that is less than 2.
pub fn streamk_tail(units: usize, blocks: usize, kt: usize) -> (usize, usize) {
    let tail = units.checked_rem(blocks).unwrap_or(0);
    let splits = blocks.checked_div(tail).map_or(1, |s| s.min(kt).min(TAIL_MAX));
    if splits >= 2 {
        (units - tail, splits)
    } else {
        (units, 1)
    }
}

/// The workspace of `t` at `p` on `machine`: with split-K, `KSPLIT` f32 slots of the
/// block tile per output tile and one counter per consumer warpgroup of each; with
/// stream-K, a slot per block (the split of a tail unit it takes: the tail's units times
/// their splits are at most the grid) and a counter per consumer of each tail unit;
/// `None` for neither.
pub fn workspace(t: &WgmmaTile, p: Problem, machine: Machine) -> Option<Workspace> {
    if t.streamk {
        let blocks = t.grid(p.m, p.n, p.batch, machine.units) as u64;
        return Some(Workspace {
            bytes: blocks * (t.bm * t.bn) as u64 * 4,
            flags: blocks * t.consumers as u64,
        });
    }
    split_workspace(t, p)
}

/// Split-K's part of [`workspace`], which does not depend on the grid.
fn split_workspace(t: &WgmmaTile, p: Problem) -> Option<Workspace> {
    if t.ksplit <= 1 {
        return None;
    }
    let blocks = (t.tiles(p.m, p.n) * t.cluster_m.max(1) as usize) as u64;
    Some(Workspace {
        bytes: blocks * (t.bm * t.bn) as u64 * 4 * t.ksplit as u64,
        flags: blocks * t.consumers as u64,
    })
}

/// `Err(why)` when `t` splits K and its workspace at `p` would exceed [`Workspace::MAX_BYTES`],
/// and for a stream-K call of a batch. Stream-K's workspace is a tile per block, bounded
/// by the grid, not the problem. (A split outside 1..=[`MAX_KSPLIT`] is a broken rule,
/// `ksplit`, not a refused call.)
pub(super) fn accepts(t: &WgmmaTile, p: Problem) -> Result<(), String> {
    if t.streamk && p.batch > 1 {
        // Its walk beside the batch's per-product addressing spills (ptxas: 8 bytes at
        // 128x128 with a fused bias).
        return Err(format!("stream-K serves one product, not a batch of {}", p.batch));
    }
    if t.ksplit > 1 && p.batch > 1 {
        return Err(format!(
            "split-K keeps one set of partial tiles, not one per product of a batch of {}",
            p.batch
        ));
    }
    match split_workspace(t, p) {
        Some(w) if w.bytes > Workspace::MAX_BYTES => Err(format!(
            "split-K by {} at {}x{} would keep {} MiB of partial tiles (at most {}): a problem with {} output tiles fills the machine without it",
            t.ksplit,
            p.m,
            p.n,
            w.bytes >> 20,
            Workspace::MAX_BYTES >> 20,
            t.tiles(p.m, p.n)
        )),
        _ => Ok(()),
    }
}

/// The kernel's split-K part ([`SOURCE`] with the largest split the runtime plans and
/// checks, [`MAX_KSPLIT`], written into its `static_assert`).
pub(super) fn source() -> String {
    SOURCE
        .replace("@MAX_KSPLIT@", &MAX_KSPLIT.to_string())
        .replace("@TAIL_MAX@", &TAIL_MAX.to_string())
        .replace("@ARRIVE@", crate::family::strip_sum::CUDA_ARRIVE)
}

/// The kernel's split-K part (its `KSPLIT` default is among the source's configuration,
/// which its checks read before this part): configuration, argument list, and the fold
/// `cg_splitk_fold` that the consumer runs after its mainloop.
const SOURCE: &str = r#"
#ifndef CG_STREAMK
#define CG_STREAMK 0
#endif
static_assert(KSPLIT >= 1 && KSPLIT <= @MAX_KSPLIT@, "KSPLIT must be in [1, @MAX_KSPLIT@]");
static_assert(!CG_STREAMK || (KSPLIT == 1 && CG_CLUSTER == 1 && !CG_PINGPONG), "stream-K takes no split-K, no cluster and the cooperative schedule");
/* The k-tiles of split s: [CG_KT(s), CG_KT(s + 1)). */
#define CG_KT(s) ((int)(((long long)(s) * ktiles) / KSPLIT))
#if CG_STREAMK
/* Stream-K in its tail form (data-parallel waves, then the last partial wave split by
   K): of the U work units on G blocks, the first D G (D = U / G) run whole, block g
   taking units g, g + G, ...; the T = U - D G of the partial wave are split S ways,
   S = min(G / T, KT, CG_TAIL_MAX), block g < T S taking split g % S of unit D G + g / S,
   k-tiles [s KT / S, (s + 1) KT / S). With S < 2 the tail runs whole like the rest. The
   S blocks of a unit fold their partial tiles through the workspace in split order, the
   last to arrive running the epilogue (cg_splitk_fold). Blocks of the same split read
   the same k-slices at once, as whole tiles in grouped order do (the contiguous shares
   of classic stream-K put every block at its own k offset: 9-27% slower on an H100,
   bench/results/h100-2026-12-07ay). The producer and the consumers walk the same
   segments. */
#ifndef CG_TAIL_MAX
#define CG_TAIL_MAX @TAIL_MAX@
#endif
/* Three registers of state: the mainloop's accumulators leave few. `next` is -1 once
   the block's tail segment has been given. */
struct CgWalk { int next, u_dp, splits; };
static __device__ __forceinline__ CgWalk cg_walk(int g, int G, int U, int KT) {
    CgWalk w;
    const int tail = U % G, d = U - tail;
    int s = tail > 0 ? G / tail : 1;
    s = s < KT ? s : KT;
    s = s < CG_TAIL_MAX ? s : CG_TAIL_MAX;
    w.next = g;
    w.splits = s;
    w.u_dp = s >= 2 ? d : U;
    return w;
}
/* The next segment: k-tiles [kb, ke) of unit `unit`; false when the block is done. */
static __device__ __forceinline__ bool cg_walk_next(CgWalk& w, int g, int G, int U, int KT, int& unit, int& kb, int& ke) {
    if (w.next < 0) return false;
    if (w.next < w.u_dp) {
        unit = w.next; kb = 0; ke = KT; w.next += G;
        return true;
    }
    w.next = -1;
    if (w.u_dp == U || g >= (U - w.u_dp) * w.splits) return false;
    const int s = g % w.splits;
    unit = w.u_dp + g / w.splits;
    kb = (int)(((long long)s * KT) / w.splits);
    ke = (int)(((long long)(s + 1) * KT) / w.splits);
    return true;
}
#endif
#if KSPLIT > 1 || CG_STREAMK
#define CG_SPLITK_ARGS float* __restrict__ cg_ws, unsigned* __restrict__ cg_flags,
@ARRIVE@struct __align__(16) cg_f4 { float x, y, z, w; };
/* An L2 load (.cg): another block wrote it, so no L1 line may stand in for it. */
static __device__ __forceinline__ cg_f4 cg_ld_f4(const cg_f4* p) {
    cg_f4 v;
    asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];\n" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p) : "memory");
    return v;
}
/* Consumer warpgroup c's arrival with its partial tile of split `split` of `nsplit`:
   writes it to its slot (slot s at `ws + s * stride` floats; split-K's slots are
   contiguous, stride CG_WG_M * BN), counts itself on `flag`, and returns whether it was
   the last of the tile's splits; if so `acc` is the sum of every slot in split order on
   return (rows past M excepted: `rows` is 0 for a warp with none inside M). */
static __device__ __forceinline__ bool cg_splitk_fold(float (&acc)[CG_MI][BN / 2], float* ws, long stride, unsigned* flag,
                                                       int split, int nsplit, int tid, int c, bool rows) {
    const long S = stride / 4; /* the slots' stride in 16-byte groups */
    cg_f4* const slots = reinterpret_cast<cg_f4*>(ws);
    if (rows) {
#pragma unroll
        for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
            for (int q = 0; q < BN / 8; ++q) {
                cg_f4* const p = slots + split * S + (mi * (BN / 8) + q) * 128 + tid;
                asm volatile("st.global.cg.v4.f32 [%0], {%1, %2, %3, %4};\n" :: "l"(p), "f"(acc[mi][4 * q]),
                             "f"(acc[mi][4 * q + 1]), "f"(acc[mi][4 * q + 2]), "f"(acc[mi][4 * q + 3]) : "memory");
            }
    }
    __threadfence();
    cgw_wg_sync(c);
    unsigned last = tid == 0 && cg_arrive_last(flag, (unsigned)nsplit);
    /* The warpgroup learns what thread 0 saw (the barrier of cgw_wg_sync, with an OR). */
    asm volatile("{\n .reg .pred p, q;\n setp.ne.u32 p, %1, 0;\n barrier.red.or.pred q, %2, 128, p;\n selp.u32 %0, 1, 0, q;\n}\n"
                 : "=r"(last) : "r"(last), "r"(c + 1) : "memory");
    if (!last) return false;
    __threadfence();
    /* Slot 0, then + slot 1, + slot 2 ... (this split's own slot read back like the
       others): one round of 16-byte loads per slot, in flight together. */
    if (rows) {
#pragma unroll
        for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
            for (int q = 0; q < BN / 8; ++q) {
                const cg_f4 v = cg_ld_f4(slots + (mi * (BN / 8) + q) * 128 + tid);
                acc[mi][4 * q] = v.x; acc[mi][4 * q + 1] = v.y; acc[mi][4 * q + 2] = v.z; acc[mi][4 * q + 3] = v.w;
            }
#pragma unroll 1
        for (int s = 1; s < nsplit; ++s)
#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                for (int q = 0; q < BN / 8; ++q) {
                    const cg_f4 v = cg_ld_f4(slots + s * S + (mi * (BN / 8) + q) * 128 + tid);
                    acc[mi][4 * q] += v.x; acc[mi][4 * q + 1] += v.y; acc[mi][4 * q + 2] += v.z; acc[mi][4 * q + 3] += v.w;
                }
    }
    return true;
}
#else
#define CG_SPLITK_ARGS
#endif
"#;

#[cfg(test)]
mod tests {
    use super::*;

    const H200: Machine = Machine { units: 132 };

    /// Stream-K refuses batches, takes one product, and its workspace follows the grid
    /// (a block tile of f32 per block), not the problem.
    #[test]
    fn streamk_serves_one_product_with_a_workspace_per_block() {
        let t = WgmmaTile {
            streamk: true,
            ..WgmmaTile::default()
        };
        let one = Problem::new(2048, 11008, 4096);
        assert!(accepts(&t, one).is_ok());
        let why = accepts(&t, Problem::new(512, 512, 128).batched(4)).unwrap_err();
        assert!(why.contains("batch of 4"), "{why}");
        let w = workspace(&t, one, H200).unwrap();
        assert_eq!(w.bytes, 132 * 128 * 256 * 4);
        assert_eq!(w.flags, 132 * 2);
        assert_eq!(
            workspace(&t, one, Machine { units: 2 }).unwrap().bytes,
            2 * 128 * 256 * 4
        );
    }

    /// The kernel's `cg_walk` / `cg_walk_next`, line for line: block `g`'s segments (unit,
    /// first k-tile, end).
    fn walk(g: usize, blocks: usize, units: usize, kt: usize) -> Vec<(usize, usize, usize)> {
        let (whole, splits) = streamk_tail(units, blocks, kt);
        let mut out: Vec<(usize, usize, usize)> = (g..whole).step_by(blocks).map(|u| (u, 0, kt)).collect();
        if whole < units && g < (units - whole) * splits {
            let s = g % splits;
            out.push((whole + g / splits, s * kt / splits, (s + 1) * kt / splits));
        }
        out
    }

    /// The tail of 2048x11008x4096 in 128x256 tiles on the H200 (688 units, 5 full waves
    /// and 28) is split 4 ways; 4096³'s (512: 116 past 3 waves) runs whole, as does a
    /// problem of whole waves; a tail of one unit is split at most `TAIL_MAX` ways, and
    /// never into more parts than it has k-tiles.
    #[test]
    fn the_partial_wave_is_split_as_the_idle_blocks_allow() {
        assert_eq!(streamk_tail(688, 132, 64), (660, 4));
        assert_eq!(streamk_tail(512, 132, 64), (512, 1));
        assert_eq!(streamk_tail(264, 132, 64), (264, 1));
        assert_eq!(streamk_tail(133, 132, 64), (132, TAIL_MAX));
        assert_eq!(streamk_tail(133, 132, 3), (132, 3));
        assert_eq!(streamk_tail(133, 132, 1), (133, 1));
    }

    /// Every k-tile of every unit is walked by exactly one block; a split unit's parts are
    /// contiguous and in split order, part `s` walked by a block with `g % splits == s`
    /// (the split the consumer folds as); the slot of each such block (`t splits + s`,
    /// `t` the tail unit) and each tail unit's counter are below the grid (the workspace
    /// holds one of each a block). Over grids and shapes around the H200's.
    #[test]
    fn the_streamk_walk_covers_every_k_tile_once() {
        for (blocks, units, kt) in [
            (132, 688, 64),
            (132, 133, 1),
            (132, 133, 5),
            (132, 264, 3),
            (132, 265, 7),
            (132, 512, 64),
            (4, 9, 4),
            (2, 4, 6),
            (2, 5, 6),
            (7, 50, 2),
            (132, 132, 16),
        ] {
            let (whole, splits) = streamk_tail(units, blocks, kt);
            let mut seen = vec![vec![0u32; kt]; units];
            let mut parts: Vec<Vec<(usize, usize, usize)>> = vec![Vec::new(); units];
            let mut slots = vec![false; blocks];
            for g in 0..blocks {
                for (u, kb, ke) in walk(g, blocks, units, kt) {
                    assert!(
                        kb < ke && ke <= kt,
                        "{blocks} {units} {kt}: block {g} segment {u} [{kb}, {ke})"
                    );
                    seen[u][kb..ke].iter_mut().for_each(|n| *n += 1);
                    if kb != 0 || ke != kt {
                        let t = u - whole;
                        let slot = t * splits + g % splits;
                        assert!(
                            slot < blocks && t < blocks,
                            "{blocks} {units} {kt}: slot {slot}, counter {t}"
                        );
                        assert!(!std::mem::replace(&mut slots[slot], true), "slot {slot} written twice");
                        parts[u].push((g % splits, kb, ke));
                    }
                }
            }
            assert!(
                seen.iter().flatten().all(|&n| n == 1),
                "{blocks} {units} {kt}: a k-tile walked {seen:?}"
            );
            for (u, p) in parts.iter_mut().enumerate() {
                p.sort();
                let in_order = p.windows(2).all(|w| w[0].0 + 1 == w[1].0 && w[0].2 == w[1].1);
                assert!(
                    p.is_empty()
                        || (p.len() == splits && p[0].0 == 0 && p[0].1 == 0 && in_order && p[splits - 1].2 == kt),
                    "{blocks} {units} {kt}: unit {u} parts {p:?}"
                );
            }
        }
    }

    #[test]
    fn the_workspace_is_a_slot_per_split_and_a_counter_per_consumer() {
        let t = WgmmaTile {
            ksplit: 4,
            ..WgmmaTile::new(64, 128, 8, 1)
        };
        // 16x4096: one tile row, 32 tile columns.
        let w = workspace(&t, Problem::new(16, 4096, 11008), H200).unwrap();
        assert_eq!(w.bytes, 32 * 64 * 128 * 4 * 4);
        assert_eq!(w.flags, 32);
        assert!(workspace(&WgmmaTile::new(64, 128, 8, 1), Problem::new(16, 4096, 4096), H200).is_none());
        let two = WgmmaTile {
            ksplit: 2,
            ..WgmmaTile::new(128, 128, 6, 2)
        };
        assert_eq!(
            workspace(&two, Problem::new(128, 4096, 4096), H200).unwrap().flags,
            32 * 2
        );
    }

    #[test]
    fn large_outputs_are_refused_with_the_workspace_they_would_need() {
        let t = WgmmaTile {
            ksplit: 2,
            ..WgmmaTile::new(64, 64, 8, 1)
        };
        assert!(accepts(&t, Problem::new(1024, 1024, 4096)).is_ok());
        let why = accepts(&t, Problem::new(8192, 8192, 8192)).unwrap_err();
        assert!(why.contains("512 MiB") && why.contains("16384 output tiles"), "{why}");
        assert!(accepts(&WgmmaTile::new(64, 64, 8, 1), Problem::new(8192, 8192, 8192)).is_ok());
    }

    #[test]
    fn only_small_unclustered_tiles_are_split() {
        let space = TuneSpace::default();
        let small = WgmmaTile::new(64, 128, 8, 1);
        let ks: Vec<u32> = with_splits(small, &space).iter().map(|t| t.ksplit).collect();
        assert_eq!(ks, PLANNED);
        assert_eq!(with_splits(WgmmaTile::new(128, 256, 4, 2), &space).len(), 1);
        let clustered = WgmmaTile { cluster_m: 2, ..small };
        assert_eq!(with_splits(clustered, &space).len(), 1);
        let mut only_one = TuneSpace::default();
        only_one.0.insert("ksplit".into(), vec![1]);
        assert_eq!(with_splits(small, &only_one).len(), 1);
    }
}
