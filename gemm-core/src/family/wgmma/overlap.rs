//! The overlapped cooperative schedule (`CG_OVERLAP`): each consumer keeps two sets of
//! accumulators and runs the epilogue of its previous tile while the first `CG_OVL_KT`
//! k-tiles of its next tile are in flight on the tensor cores.
//!
//! Why: at short K (4096x4096x128) a tile's MMAs take about half as long as writing its
//! output, and the cooperative schedule ran them one after the other (18.5 µs against
//! ping-pong's 16.6, batch 03c's `diagnose`); ping-pong overlaps them but leaves one
//! warpgroup storing a whole tile, which writes slower than two (batch 03p1: 80% of a
//! linear write from one warpgroup a multiprocessor, 95% from two). Here both consumers
//! store at once and the tensor cores work meanwhile. The price is a second set of
//! accumulators (`2 * CG_MI * BN / 2` registers a thread), so it serves tiles of at most
//! 64 accumulators a consumer thread (64 x 128 a consumer).

/// The loop over a block's work items (`@OVERLAP@`).
pub(super) fn source() -> String {
    format!("{HEAD}{}{TAIL}", BODY.replace("@ISSUE@", ISSUE).replace("@REST@", REST))
}

const HEAD: &str = r#"        /* Overlapped epilogue: this tile's first CG_OVL_KT k-tiles go to the tensor cores
           (not waited for), then the previous tile's epilogue runs from the other set of
           accumulators, then the rest of this tile's mainloop. */
        float cg_acc0[CG_MI][BN / 2], cg_acc1[CG_MI][BN / 2];
#pragma unroll
        for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
            for (int r = 0; r < BN / 2; ++r) cg_acc0[mi][r] = cg_acc1[mi][r] = 0.0f;
        const int cg_total = tiles * nbatch;
        int cg_pm0 = 0, cg_pn0 = 0;
        long cg_pbz = 0;
        bool cg_pending = false;
        for (int item = cluster; ; item += clusters) {
"#;

const TAIL: &str = "        }\n";

/// The first `CG_OVL_KT` k-tiles of the current tile, not waited for (`@ISSUE@`).
const ISSUE: &str = r#"                    {
                        float (&acc)[CG_MI][BN / 2] = cg_acc0;
                        for (; kt < kt_end && kt < CG_OVL_KT; ++kt) {
                            cg_mbar_wait(bars + stage * 8, phase);
#if CG_CPASYNC
                            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
                            const unsigned a_s = sa + stage * A_STAGE_BYTES, b_s = sb + stage * B_STAGE_BYTES;
@MMA@
                            if (++stage == STAGES) { stage = 0; phase ^= 1; }
                        }
                    }
"#;

/// The rest of the current tile's mainloop and its last wait (`@REST@`).
const REST: &str = r#"                    {
                        float (&acc)[CG_MI][BN / 2] = cg_acc0;
                        for (; kt < kt_end; ++kt) {
                            /* Groups older than the CG_INFLIGHT newest are done: their stages go back. */
                            cg_wgmma_wait<CG_INFLIGHT>();
                            for (; released < kt - CG_INFLIGHT; ++released) {
                                if (lane == 0) cg_release(bars + (STAGES + rel) * 8);
                                if (++rel == STAGES) rel = 0;
                            }
                            cg_mbar_wait(bars + stage * 8, phase);
#if CG_CPASYNC
                            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
                            const unsigned a_s = sa + stage * A_STAGE_BYTES, b_s = sb + stage * B_STAGE_BYTES;
@MMA@
                            if (++stage == STAGES) { stage = 0; phase ^= 1; }
                        }
                        cg_wgmma_wait<0>();
                        for (; released < kt; ++released) {
                            if (lane == 0) cg_release(bars + (STAGES + rel) * 8);
                            if (++rel == STAGES) rel = 0;
                        }
#pragma unroll
                        for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                            for (int r = 0; r < BN / 2; ++r) cg_fence_acc(acc[mi][r]);
                    }
"#;

/// One work item: `cg_acc0` takes the item's tile while `cg_acc1` holds the previous
/// one's, copied there at the end (64 moves a tile; a loop unrolled by two to swap the
/// sets' roles instead left ptxas placing its wait before the epilogue in one copy).
/// After the last item a pass with no item (`live` false) runs the pending epilogue.
///
/// Only an interior tile's epilogue (`@EPILOGUE_INNER@`: every chunk on the fast path, no
/// branch inside) runs while this tile's MMAs are in flight; an edge tile's runs after the
/// mainloop's last wait. What ptxas (CUDA 13) needs for the overlap to survive, found by
/// reading its SASS: no per-element branch between a wgmma and its wait (else it
/// serializes every wgmma of the kernel, C7518 "WG.DP in divergent path"), no branch on
/// anything derived from `threadIdx` there (so `cg_inner` asks whether the whole tile lies
/// inside, not the consumer's rows), and the issue and the wait on one side of a branch.
const BODY: &str = r#"            {
                const bool live = item < cg_total;
                int m0 = 0, n0 = 0, kt_end = 0;
                long bz = 0;
                if (live) {
                    bz = item / tiles;
                    int tm, tn;
                    cg_tile_coords(item - (int)bz * tiles, grid_m, grid_n, &tm, &tn);
                    m0 = (tm * CLUSTER_M + (int)rank_m) * BM;
                    n0 = (tn * CLUSTER_N + (int)rank_n) * BN;
                    kt_end = ktiles;
                }
                const int kt_begin = 0;
                /* k-tiles issued, stages given back, and the next stage to give back. */
                int kt = 0, released = 0, rel = stage;
                bool cg_inner = false;
                if (cg_pending) {
                    const int m0 = cg_pm0, n0 = cg_pn0;
                    cg_bz = cg_pbz;
                    @REBASE@
@VEC_OK@                    cg_inner = vec_ok && BN % CG_CW == 0 && m0 + BM <= M && n0 + BN <= N;
                }
                /* Each side issues and waits for the whole mainloop: ptxas serializes every
                   wgmma of the kernel (C7518) when two paths with MMAs in flight meet, and
                   places its wait before the epilogue when one with MMAs in flight meets
                   one without. */
                if (cg_inner) {
@ISSUE@                    {
                        float (&acc)[CG_MI][BN / 2] = cg_acc1;
                        const int m0 = cg_pm0, n0 = cg_pn0;
@EPILOGUE_INNER@                    }
@REST@                } else {
@ISSUE@@REST@                }
                if (cg_pending && !cg_inner) {
                    float (&acc)[CG_MI][BN / 2] = cg_acc1;
                    const int m0 = cg_pm0, n0 = cg_pn0;
@EPILOGUE@                }
                if (!live) break;
                /* This tile's vectors into the parameter area, which the previous tile's
                   epilogue has finished reading. */
                cg_bz = bz;
                @REBASE@
@PREFETCH@                /* This tile's accumulators become the previous tile's (after the wait: no
                   register of an MMA in flight is read). */
#pragma unroll
                for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                    for (int r = 0; r < BN / 2; ++r) cg_acc1[mi][r] = cg_acc0[mi][r];
                cg_pending = true;
                cg_pm0 = m0;
                cg_pn0 = n0;
                cg_pbz = bz;
            }
"#;
