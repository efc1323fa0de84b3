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
                if (!cg_keep_a) {
#if CG_A_KMAJOR
#pragma unroll
                    for (int j = 0; j < CG_KSUB; ++j) cg_cpa_tile<BM, 1, CG_CPA_A>(a_s + j * (BM * 128), CG_A_PTR, CG_A_LD, M, K, m0, k0 + j * CG_KROW, tid);
#else
                    cg_cpa_tile<BM, 0, CG_CPA_A>(a_s, CG_A_PTR, CG_A_LD, M, K, m0, k0, tid);
#endif
                }
                if (!cg_keep_b) {
#if CG_B_KMAJOR
#pragma unroll
                    for (int j = 0; j < CG_KSUB; ++j) cg_cpa_tile<BN, 1, CG_CPA_B>(b_s + j * (BN * 128), CG_B_PTR, CG_B_LD, N, K, n0, k0 + j * CG_KROW, tid);
#else
                    cg_cpa_tile<BN, 0, CG_CPA_B>(b_s, CG_B_PTR, CG_B_LD, N, K, n0, k0, tid);
#endif
                }
                asm volatile(\"cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\\n\" :: \"r\"(full) : \"memory\");
#else
                /* The bytes this stage waits for: an operand tile kept from an earlier item
                   (CG_REUSE) is not loaded again. */
                cg_mbar_expect_tx(full, (cg_keep_a ? 0 : A_STAGE_BYTES) + (cg_keep_b ? 0 : B_STAGE_BYTES));
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
                if (!cg_keep_a) {
#if CG_A_KMAJOR
#pragma unroll
                    for (int j = 0; j < CG_KSUB; ++j) CG_TMA_A(a_s + j * (BM * 128), k0 + j * CG_KROW, m0);
#else
#pragma unroll
                    for (int c = 0; c < BM / 64; ++c) CG_TMA_A(a_s + c * 8192, m0 + c * 64, k0);
#endif
                }
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
                if (!cg_keep_b) {
#if CG_B_KMAJOR
#pragma unroll
                    for (int j = 0; j < CG_KSUB; ++j) CG_TMA_B(b_s + j * (BN * 128), k0 + j * CG_KROW, n0);
#else
#pragma unroll
                    for (int c = 0; c < BN / 64; ++c) CG_TMA_B(b_s + c * 8192, n0 + c * 64, k0);
#endif
                }
#endif
#endif"
        .into()
}

/// The cp.async producer's copy helpers (`CG_CPASYNC`): a tile of 128-byte rows in the
/// layout TMA's 128-byte swizzle writes, for rows TMA cannot map.
pub(super) const CPASYNC: &str = r#"#if CG_CPASYNC
/* The cp.async producer (shapes TMA cannot map: rows that are not 16-byte multiples). */
template <int CH> static __device__ __forceinline__ void cg_cpa(unsigned dst, const void* src, unsigned bytes);
template <> __device__ __forceinline__ void cg_cpa<16>(unsigned dst, const void* src, unsigned bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(dst), "l"(src), "r"(bytes) : "memory");
}
template <> __device__ __forceinline__ void cg_cpa<8>(unsigned dst, const void* src, unsigned bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" :: "r"(dst), "l"(src), "r"(bytes) : "memory");
}
template <> __device__ __forceinline__ void cg_cpa<4>(unsigned dst, const void* src, unsigned bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" :: "r"(dst), "l"(src), "r"(bytes) : "memory");
}
/* One operand tile of R shared rows of 128 bytes, in the layout TMA's 128-byte swizzle
   writes (16-byte unit u of row rho at rho * 128 + ((u ^ (rho & 7)) << 4)), by the 128
   producer threads in CH-byte chunks: thread t copies chunk t % PER of rows t / PER,
   + STEP, + 2 STEP, ... (consecutive threads on consecutive chunks of a row).
   K-major (KM = 1): row rho is k0..k0+63 of global row mn0 + rho. MN-major: rows come in
   64-row boxes, row rho is mn0 + 64 * (rho / 64) .. +63 of global row k0 + rho % 64.
   Elements past the extents (mn_ext, k_ext) are zero-filled (src-size); every source
   address is CH-aligned because the pitch ld * CG_ESZ and the base are. EL: elements a
   chunk, RE: elements a 128-byte row. */
template <int R, int KM, int CH>
static __device__ __forceinline__ void cg_cpa_tile(unsigned dst, const cg_ab_t* g, int ld, int mn_ext, int k_ext, int mn0, int k0, int tid) {
    constexpr int PER = 128 / CH, STEP = 128 / PER, EL = CH / CG_ESZ, RE = 128 / CG_ESZ;
    const int cc = tid % PER, rho0 = tid / PER;
    const unsigned unit = (unsigned)(cc * CH) >> 4, within = (unsigned)(cc * CH) & 15;
    if (KM) {
        const int inner = k0 + cc * EL, left = k_ext - inner;
        const unsigned kb = left >= EL ? CH : (left > 0 ? CG_ESZ * left : 0);
        const cg_ab_t* src = g + (long)(mn0 + rho0) * ld + inner;
        const int rows_left = mn_ext - (mn0 + rho0);
#pragma unroll 4
        for (int it = 0; it < R / STEP; ++it) {
            const int rho = rho0 + it * STEP;
            const unsigned b = it * STEP < rows_left ? kb : 0u;
            cg_cpa<CH>(dst + rho * 128 + ((unit ^ (rho & 7)) << 4) + within, b ? (const void*)(src + (long)it * STEP * ld) : (const void*)g, b);
        }
    } else {
        const cg_ab_t* src = g + (long)(k0 + rho0) * ld + mn0 + cc * EL;
        const int rows_left = k_ext - (k0 + rho0);
#pragma unroll 1
        for (int box = 0; box < R / RE; ++box) {
            const int left = mn_ext - (mn0 + box * RE + cc * EL);
            const unsigned mb = left >= EL ? CH : (left > 0 ? CG_ESZ * left : 0);
#pragma unroll 4
            for (int it = 0; it < 64 / STEP; ++it) {
                const int kr = rho0 + it * STEP;
                const unsigned b = it * STEP < rows_left ? mb : 0u;
                cg_cpa<CH>(dst + box * 8192 + kr * 128 + ((unit ^ (kr & 7)) << 4) + within,
                           b ? (const void*)(src + (long)it * STEP * ld + box * RE) : (const void*)g, b);
            }
        }
    }
}
#endif
"#;
