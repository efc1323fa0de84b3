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
/// = 1)`; by default none: the variant is new and not yet measured on a GPU), for
/// cooperative configs of one or two consumers without split-K or a cluster.
pub(super) fn with_streamk(t: WgmmaTile, space: &TuneSpace) -> Vec<WgmmaTile> {
    let fits = t.ksplit == 1 && t.cluster() == 1 && !t.pingpong && t.consumers <= 2;
    if fits && space.pick("streamk", &[0]).contains(&1) {
        vec![WgmmaTile { streamk: true, ..t }]
    } else {
        Vec::new()
    }
}

/// The stream-K wave of `units` work units on `blocks` blocks: how many units are shared
/// out by k-tiles (the last `blocks + units % blocks`, none when `units <= blocks` or
/// `blocks` divides `units`), as the kernel's `cg_walk` counts them.
pub fn streamk_units(units: usize, blocks: usize) -> usize {
    if blocks == 0 || units <= blocks || units.is_multiple_of(blocks) {
        0
    } else {
        blocks + units % blocks
    }
}

/// The workspace of `t` at `p` on `machine`: with split-K, `KSPLIT` f32 slots of the
/// block tile per output tile and one counter per consumer warpgroup of each; with
/// stream-K, two slots per block (the partial tiles its share starts and ends in) and a
/// counter per consumer of each of at most two units a block; `None` for neither.
pub fn workspace(t: &WgmmaTile, p: Problem, machine: Machine) -> Option<Workspace> {
    if t.streamk {
        let blocks = t.grid(p.m, p.n, p.batch, machine.units) as u64;
        return Some(Workspace {
            bytes: blocks * 2 * (t.bm * t.bn) as u64 * 4,
            flags: blocks * 2 * t.consumers as u64,
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
/// and for a stream-K call that it cannot serve (a batch, more k-tiles than 32 bits
/// count). Stream-K's workspace is two tiles per block, bounded by the grid, not the
/// problem. (A split outside 1..=[`MAX_KSPLIT`] is a broken rule, `ksplit`, not a refused
/// call.)
pub(super) fn accepts(t: &WgmmaTile, p: Problem) -> Result<(), String> {
    if t.streamk && p.batch > 1 {
        // Its walk beside the batch's per-product addressing spills (ptxas: 8 bytes at
        // 128x128 with a fused bias).
        return Err(format!("stream-K serves one product, not a batch of {}", p.batch));
    }
    if t.streamk && (t.tiles(p.m, p.n) as u64) * 2 * (p.k as u64).div_ceil(t.bk.max(1) as u64) > i32::MAX as u64 {
        return Err(format!(
            "stream-K counts k-tiles in 32 bits: {}x{}x{} has too many",
            p.m, p.n, p.k
        ));
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
/* Stream-K (data-parallel tiles, then one stream-K wave): of the U work units (tiles of
   every product), the last G + U % G (G blocks; none when U <= G or G divides U) are
   shared out by k-tiles, L = that many units times KT k-tiles, block g taking
   [g L / G, (g + 1) L / G); before them each block takes whole units g, g + G, ... A
   block's share is at least KT k-tiles, so at most two blocks meet in a unit: the one
   with its first k-tiles folds as split 0, the other as split 1 (cg_walk_sharers). The
   producer and the consumers walk the same segments. */
/* Block g of G over U units of KT k-tiles; the stream-K k-tiles number L = sk KT < 2^31
   (the host refuses larger: Wgmma::accepts). Four registers of state: the mainloop's
   accumulators leave few. */
struct CgWalk { int u_dp, next_dp, it, it_end; };
static __device__ __forceinline__ CgWalk cg_walk(int g, int G, int U, int KT) {
    CgWalk w;
    const int sk = (U > G && U % G != 0) ? G + U % G : 0;
    const long long L = (long long)sk * KT;
    w.u_dp = U - sk; w.next_dp = g;
    w.it = (int)((long long)g * L / G);
    w.it_end = (int)((long long)(g + 1) * L / G);
    return w;
}
/* The next segment: k-tiles [kb, ke) of unit `unit`; false when the block is done. */
static __device__ __forceinline__ bool cg_walk_next(CgWalk& w, int G, int KT, int& unit, int& kb, int& ke) {
    if (w.next_dp < w.u_dp) {
        unit = w.next_dp; kb = 0; ke = KT; w.next_dp += G;
        return true;
    }
    if (w.it >= w.it_end) return false;
    const int s = w.it / KT;
    unit = w.u_dp + s;
    kb = w.it - s * KT;
    ke = KT - kb <= w.it_end - w.it ? KT : kb + (w.it_end - w.it);
    w.it += ke - kb;
    return true;
}
/* Block g's split index in stream-K unit s (0 for the block with its first k-tiles) and
   how many blocks share it: blocks gf..gl with gf = ceil((x + 1) G / L) - 1, gl =
   ceil((x + KT) G / L) - 1, x = s KT (the first and last block whose share meets it). */
static __device__ __forceinline__ void cg_walk_sharers(int g, int G, int U, int KT, int s, int* split, int* n) {
    const long long L = (long long)(G + U % G) * KT, x = (long long)s * KT;
    const long long gf = ((x + 1) * G + L - 1) / L - 1, gl = ((x + KT) * G + L - 1) / L - 1;
    *split = g - (int)gf;
    *n = (int)(gl - gf) + 1;
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
    /// (two block tiles of f32 per block), not the problem.
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
        assert_eq!(w.bytes, 132 * 2 * 128 * 256 * 4);
        assert_eq!(w.flags, 132 * 2 * 2);
        assert_eq!(
            workspace(&t, one, Machine { units: 2 }).unwrap().bytes,
            2 * 2 * 128 * 256 * 4
        );
    }

    /// The kernel's `cg_walk` / `cg_walk_next` / `cg_walk_sharers`, line for line: block
    /// `g`'s segments (unit, first k-tile, end).
    fn walk(g: usize, blocks: usize, units: usize, kt: usize) -> Vec<(usize, usize, usize)> {
        let sk = streamk_units(units, blocks);
        let l = sk * kt;
        let u_dp = units - sk;
        let mut out: Vec<(usize, usize, usize)> = (g..u_dp).step_by(blocks).map(|u| (u, 0, kt)).collect();
        let (mut it, end) = (g * l / blocks, (g + 1) * l / blocks);
        while it < end {
            let s = it / kt;
            let kb = it - s * kt;
            let ke = if kt - kb <= end - it { kt } else { kb + (end - it) };
            out.push((u_dp + s, kb, ke));
            it += ke - kb;
        }
        out
    }

    fn sharers(g: usize, blocks: usize, units: usize, kt: usize, s: usize) -> (usize, usize) {
        let l = (blocks + units % blocks) * kt;
        let x = s * kt;
        let gf = ((x + 1) * blocks).div_ceil(l) - 1;
        let gl = ((x + kt) * blocks).div_ceil(l) - 1;
        (g - gf, gl - gf + 1)
    }

    /// Every k-tile of every unit is walked by exactly one block; a unit walked in parts
    /// has two, split 0 holding its first k-tiles, each as the sharers formula says; a
    /// block writes each of its two slots at most once; counters stay below 2 G per
    /// consumer. Over grids and shapes around the H200's (the 2048x11008 tile count, one
    /// more and one fewer than the grid, short K).
    #[test]
    fn the_streamk_walk_covers_every_k_tile_once() {
        for (blocks, units, kt) in [
            (132, 688, 64),
            (132, 133, 1),
            (132, 264, 3),
            (132, 265, 7),
            (4, 9, 4),
            (2, 4, 6),
            (2, 5, 6),
            (132, 100, 16),
            (7, 50, 2),
        ] {
            let mut seen = vec![vec![0u32; kt]; units];
            let mut parts: Vec<Vec<(usize, usize, usize)>> = vec![Vec::new(); units];
            for g in 0..blocks {
                let mut sides = [false; 2];
                for (u, kb, ke) in walk(g, blocks, units, kt) {
                    assert!(
                        kb < ke && ke <= kt,
                        "{blocks} {units} {kt}: block {g} segment {u} [{kb}, {ke})"
                    );
                    seen[u][kb..ke].iter_mut().for_each(|n| *n += 1);
                    if kb != 0 || ke != kt {
                        let s = u - (units - streamk_units(units, blocks));
                        let (split, n) = sharers(g, blocks, units, kt, s);
                        assert_eq!(n, 2, "{blocks} {units} {kt}: unit {u}");
                        assert!(
                            !std::mem::replace(&mut sides[1 - split], true),
                            "block {g} writes a slot twice"
                        );
                        assert!(s < 2 * blocks, "counter {s} past 2 G");
                        parts[u].push((split, kb, ke));
                    }
                }
            }
            assert!(
                seen.iter().flatten().all(|&n| n == 1),
                "{blocks} {units} {kt}: a k-tile walked {seen:?}"
            );
            for (u, p) in parts.iter_mut().enumerate() {
                p.sort();
                assert!(
                    p.is_empty() || (p.len() == 2 && p[0].0 == 0 && p[0].1 == 0 && p[1].0 == 1 && p[1].2 == kt),
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
