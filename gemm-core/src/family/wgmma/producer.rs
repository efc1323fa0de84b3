//! The producer warpgroup's loads for one stage of the ring: TMA boxes (with a cluster,
//! multicast by the first block of each cluster row for A and of each column for B), or
//! the cp.async copies of every producer thread for rows TMA cannot map.

use crate::codegen::Variant;

/// The producer's work for one stage (`@PRODUCE@`): TMA boxes, or for
/// [`Variant::ComputeOnly`] a bare arrival.
pub(super) fn produce(variant: Variant) -> String {
    if variant == Variant::ComputeOnly {
        return "                /* Diagnosis variant compute_only: no loads, the stage is marked full as is. */
                cg_mbar_arrive(full);"
            .into();
    }
    "#if CG_CPASYNC
                /* Every producer thread copies its chunks; its arrival counts once they have landed. */
#if CG_A_KMAJOR
#pragma unroll
                for (int j = 0; j < CG_KSUB; ++j) cg_cpa_tile<BM, 1, CG_CPA_A>(a_s + j * (BM * 128), CG_A_PTR, CG_A_LD, M, K, m0, k0 + j * CG_KROW, tid);
#else
                cg_cpa_tile<BM, 0, CG_CPA_A>(a_s, CG_A_PTR, CG_A_LD, M, K, m0, k0, tid);
#endif
#if CG_B_KMAJOR
#pragma unroll
                for (int j = 0; j < CG_KSUB; ++j) cg_cpa_tile<BN, 1, CG_CPA_B>(b_s + j * (BN * 128), CG_B_PTR, CG_B_LD, N, K, n0, k0 + j * CG_KROW, tid);
#else
                cg_cpa_tile<BN, 0, CG_CPA_B>(b_s, CG_B_PTR, CG_B_LD, N, K, n0, k0, tid);
#endif
                asm volatile(\"cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\\n\" :: \"r\"(full) : \"memory\");
#else
                cg_mbar_expect_tx(full, CG_STAGE_BYTES);
#if CLUSTER_N > 1
                /* The first block of each row of the cluster fetches the row's shared A tile
                   for the blocks of that row (ranks rank_m + CLUSTER_M * j). */
                if (rank_n == 0) {
                    const unsigned short row = (unsigned short)(((1u << CG_CLUSTER) - 1) / ((1u << CLUSTER_M) - 1) << rank_m);
#if CG_A_KMAJOR
#pragma unroll
                    for (int j = 0; j < CG_KSUB; ++j) CG_TMA_A_MC(a_s + j * (BM * 128), k0 + j * CG_KROW, m0, row);
#else
#pragma unroll
                    for (int c = 0; c < BM / 64; ++c) CG_TMA_A_MC(a_s + c * 8192, m0 + c * 64, k0, row);
#endif
                }
#else
#if CG_A_KMAJOR
#pragma unroll
                for (int j = 0; j < CG_KSUB; ++j) CG_TMA_A(a_s + j * (BM * 128), k0 + j * CG_KROW, m0);
#else
#pragma unroll
                for (int c = 0; c < BM / 64; ++c) CG_TMA_A(a_s + c * 8192, m0 + c * 64, k0);
#endif
#endif
#if CLUSTER_M > 1
                /* The first block of each column of the cluster fetches the column's shared B
                   tile for the blocks of that column (ranks CLUSTER_M * rank_n + i). */
                if (rank_m == 0) {
                    const unsigned short col = (unsigned short)(((1u << CLUSTER_M) - 1) << (CLUSTER_M * rank_n));
#if CG_B_KMAJOR
#pragma unroll
                    for (int j = 0; j < CG_KSUB; ++j)
                        CG_TMA_B_MC(b_s + j * (BN * 128), k0 + j * CG_KROW, n0, col);
#else
#pragma unroll
                    for (int c = 0; c < BN / 64; ++c)
                        CG_TMA_B_MC(b_s + c * 8192, n0 + c * 64, k0, col);
#endif
                }
#else
#if CG_B_KMAJOR
#pragma unroll
                for (int j = 0; j < CG_KSUB; ++j) CG_TMA_B(b_s + j * (BN * 128), k0 + j * CG_KROW, n0);
#else
#pragma unroll
                for (int c = 0; c < BN / 64; ++c) CG_TMA_B(b_s + c * 8192, n0 + c * 64, k0);
#endif
#endif
#endif"
        .into()
}
