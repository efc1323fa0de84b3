#if SWAP
/* crossgemm: cg_f16_bias_relu_ca192860 = relu((acc + bias)) (wgmma sm_90a f16, A RowMajor K-major, B ColMajor K-major, out f16 ColMajor) */
#else
/* crossgemm: cg_f16_bias_relu_ca192860 = relu((acc + bias)) (wgmma sm_90a f16, A RowMajor K-major, B ColMajor K-major, out f16 RowMajor) */
#endif
#ifndef SWAP
#define SWAP 0
#endif
static __device__ __forceinline__ float cg_f16_to_f32(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
static __device__ __forceinline__ unsigned short cg_f32_to_f16(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
static __device__ __forceinline__ float cg_bf16_to_f32(unsigned short h) { return __uint_as_float(((unsigned int)h) << 16); }
static __device__ __forceinline__ unsigned short cg_f32_to_bf16(float f) { unsigned short h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
#define CG_EXP expf
#define CG_TANH tanhf
#define CG_ERF erff
#define CG_FMAX fmaxf
#define CG_FMIN fminf
#define CG_FABS fabsf
static __device__ __forceinline__ float cg_ld_f32(const float* p, long i) { return p[i]; }
static __device__ __forceinline__ void cg_st_f32(float* p, long i, float v) { p[i] = v; }
static __device__ __forceinline__ float cg_ld_f16(const unsigned short* p, long i) { return cg_f16_to_f32(p[i]); }
static __device__ __forceinline__ void cg_st_f16(unsigned short* p, long i, float v) { p[i] = cg_f32_to_f16(v); }
static __device__ __forceinline__ float cg_ld_bf16(const unsigned short* p, long i) { return cg_bf16_to_f32(p[i]); }
static __device__ __forceinline__ void cg_st_bf16(unsigned short* p, long i, float v) { p[i] = cg_f32_to_bf16(v); }
static __device__ __forceinline__ float cg_relu(float x) { return CG_FMAX(x, 0.0f); }
static __device__ __forceinline__ float cg_gelu(float x) { return 0.5f * x * (1.0f + CG_TANH(0.7978845608f * (x + 0.044715f * x * x * x))); }
static __device__ __forceinline__ float cg_gelu_erf(float x) { return 0.5f * x * (1.0f + CG_ERF(x * 0.7071067812f)); }
static __device__ __forceinline__ float cg_sigmoid(float x) { return 1.0f / (1.0f + CG_EXP(-x)); }
static __device__ __forceinline__ float cg_silu(float x) { return x / (1.0f + CG_EXP(-x)); }
static __device__ __forceinline__ float cg_tanh(float x) { return CG_TANH(x); }
static __device__ __forceinline__ float cg_exp(float x) { return CG_EXP(x); }
static __device__ __forceinline__ float cg_abs(float x) { return CG_FABS(x); }
static __device__ __forceinline__ float cg_min(float a, float b) { return CG_FMIN(a, b); }
static __device__ __forceinline__ float cg_max(float a, float b) { return CG_FMAX(a, b); }
static __device__ __forceinline__ float cg_clamp(float x, float lo, float hi) { return CG_FMIN(CG_FMAX(x, lo), hi); }
static __device__ __forceinline__ float cg_leaky_relu(float x, float s) { return x > 0.0f ? x : s * x; }

#ifndef CG_FAST_MATH
#define CG_FAST_MATH 1
#endif
#ifndef CG_GELU_TANH
#define CG_GELU_TANH 1
#endif
#if CG_FAST_MATH
static __device__ __forceinline__ float cgw_ex2(float x) { float y; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }
static __device__ __forceinline__ float cgw_rcp(float x) { float y; asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }
static __device__ __forceinline__ float cgw_sigmoid(float x) { return cgw_rcp(1.0f + expf(-x)); }
static __device__ __forceinline__ float cgw_silu(float x) { return x * cgw_rcp(1.0f + expf(-x)); }
/* GELU, tanh form: 0.5 x (1 + tanh(u)) = x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3);
   exp(-2u) = 2^(-x (2.3022082 + 0.10294324 x^2)). */
static __device__ __forceinline__ float cgw_gelu(float x) {
#if CG_GELU_TANH
    float t;
    const float u = 0.7978845608f * x * (1.0f + 0.044715f * x * x);
    asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(u));
    const float h = 0.5f * x;
    return h * t + h;
#else
    return x * cgw_rcp(1.0f + cgw_ex2(x * (-2.302208198f - 0.1029432409f * x * x)));
#endif
}
#define cg_gelu cgw_gelu
#define cg_sigmoid cgw_sigmoid
#define cg_silu cgw_silu
#endif
static __device__ __forceinline__ void cgw_cp4(unsigned dst, const void* src, unsigned bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" :: "r"(dst), "l"(src), "r"(bytes) : "memory");
}
static __device__ __forceinline__ void cgw_sts32(unsigned dst, unsigned v) {
    asm volatile("st.shared.u32 [%0], %1;\n" :: "r"(dst), "r"(v) : "memory");
}
/* The named barrier of consumer warpgroup c's 128 threads (ids 1 to 3; 0 is
   __syncthreads; ping-pong's turns use CONSUMERS + 1 on: 3 and 4, or 4 to 6). */
static __device__ __forceinline__ void cgw_wg_sync(int c) {
    asm volatile("bar.sync %0, 128;\n" :: "r"(1 + c) : "memory");
}
#ifndef CG_PROMOTE
#define CG_PROMOTE 0
#endif
#define CG_ESZ 2
typedef unsigned short cg_ab_t;

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 256
#endif
#ifndef BK
#define BK (128 / CG_ESZ)
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef CONSUMERS
#define CONSUMERS 2
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef KSPLIT
#define KSPLIT 1
#endif
#ifndef CG_CPASYNC
#define CG_CPASYNC 0
#endif
#ifndef CG_CPA_A
#define CG_CPA_A 16
#endif
#ifndef CG_CPA_B
#define CG_CPA_B 16
#endif
#ifndef CG_PRODUCER_REGS
#define CG_PRODUCER_REGS (CG_CPASYNC ? 56 : 24)
#endif
#ifndef CG_CONSUMER_REGS
/* Three consumers share the register file four ways (512 threads): 160 each. */
#define CG_CONSUMER_REGS (CONSUMERS == 3 ? (CG_CPASYNC ? 152 : 160) : (CG_CPASYNC ? 224 : 240))
#endif
#ifndef CG_INFLIGHT
#define CG_INFLIGHT (CONSUMERS == 1)
#endif
#ifndef CG_EPI_SMEM
#define CG_EPI_SMEM 1
#endif
#ifndef CG_EPI_TMA
#define CG_EPI_TMA 0
#endif
#if CG_EPI_TMA
/* The TMA-store epilogue stages whole tiles of its own (CG_TSTG_BYTES a consumer): no
   per-warp staging buffers, and the parameter area a 1 KiB region of each consumer. */
#undef CG_EPI_SMEM
#define CG_EPI_SMEM 0
#endif
#ifndef CG_C_TMA3
#define CG_C_TMA3 0
#endif
#ifndef CLUSTER_M
#define CLUSTER_M 1
#endif
#ifndef CLUSTER_N
#define CLUSTER_N 1
#endif
/* Blocks per cluster: CLUSTER_M along M (sharing B) by CLUSTER_N along N (sharing A). */
#define CG_CLUSTER (CLUSTER_M * CLUSTER_N)
#ifndef CG_WATCHDOG
#define CG_WATCHDOG 0
#endif
#ifndef CG_PINGPONG
#define CG_PINGPONG 0
#endif
#ifndef CG_REUSE
#define CG_REUSE 0
#endif
/* Whether k-step kk of k-tile kt adds into the accumulator (else it starts it afresh):
   all but the first of a work item's, or with CG_PROMOTE of each run of CG_PROMOTE
   k-tiles, whose accumulator is then added into the f32 sum (`cg_sum`). */
#if CG_PROMOTE
#define CG_SCALE_D(kt, kk) (((kt) - kt_begin) % CG_PROMOTE != 0 || (kk) > 0)
#else
#define CG_SCALE_D(kt, kk) ((kt) > kt_begin || (kk) > 0)
#endif
#define CG_THREADS (128 * (CONSUMERS + 1))
/* Rows of a tile one consumer computes: its share of the tile (cooperative), or the
   whole tile (ping-pong: the two consumers take alternate tiles). */
#define CG_WG_M (CG_PINGPONG ? BM : BM / CONSUMERS)
/* The first row of the tile that consumer `c` computes. */
#define CG_WG_ROW0 (CG_PINGPONG ? 0 : c * CG_WG_M)
/* Consumers that read each stage of the ring (the arrivals its `empty` barrier counts). */
#define CG_READERS (CG_PINGPONG ? 1 : CONSUMERS)
#define CG_MI (CG_WG_M / 64)
/* wgmma k-steps per k-tile: 32 bytes each (k16 of 16-bit, k8 of tf32 elements). */
#define CG_KSTEPS (BK * CG_ESZ / 32)
/* A k-tile is CG_KSUB swizzle rows of CG_KROW elements (128 bytes): each operand tile of
   a stage is CG_KSUB sub-tiles of rows x 128 bytes, one after the other. */
#define CG_KROW (128 / CG_ESZ)
#define CG_KSUB (BK / CG_KROW)
#define A_STAGE_BYTES (BM * BK * CG_ESZ)
#define B_STAGE_BYTES (BN * BK * CG_ESZ)
#define CG_STAGE_BYTES (A_STAGE_BYTES + B_STAGE_BYTES)
#define CG_STG_PITCH 144
#define CG_CW (128 / CG_OSZ)
/* A consumer's staged tile for the TMA store: its rows by BN elements of CG_ESZ bytes
   (the output's, asserted in the kernel). */
#define CG_TSTG_BYTES (CG_WG_M * BN * CG_ESZ)
#define CG_SMEM_BYTES (1024 + STAGES * CG_STAGE_BYTES + 16 * STAGES + (CG_EPI_TMA ? CONSUMERS * (1024 + CG_TSTG_BYTES) + 1024 : (CG_EPI_SMEM ? CONSUMERS * 4 * 16 * CG_STG_PITCH : 0)))
/* The epilogue's parameter area of a consumer: the 16 padding bytes after each 128-byte
   row of its 4 warps' staging buffers (64 rows: 1 KiB); byte b of the area lies in row
   b / 16 (warp b / 256), at offset 128 + b % 16. With the TMA store, 1 KiB of its own. */
#define CG_PAREA ((CG_EPI_SMEM || CG_EPI_TMA) ? 1024 : 0)
#if CG_EPI_TMA
#define CGW_PA(b) (b)
#else
#define CGW_PA(b) (((b) >> 8) * (16 * CG_STG_PITCH) + (((b) >> 4) & 15) * CG_STG_PITCH + 128 + ((b) & 15))
#endif
#if SWAP
static __device__ __forceinline__ float cgw_epi(float acc, float v2) {
    return cg_relu((acc + v2));
}
#define CGW_OFF_2 (0)
#define CGW_PF_2 (CGW_OFF_2 + CG_WG_M * 2 <= CG_PAREA)
#define CGW_PF_ANY (CGW_PF_2)
#define CG_A_KMAJOR 1
#define CG_B_KMAJOR 1
#define CG_A_PTR p1
#define CG_B_PTR p0
#define CG_A_LD ld1
#define CG_B_LD ld0
#else
static __device__ __forceinline__ float cgw_epi(float acc, float v2) {
    return cg_relu((acc + v2));
}
#define CGW_OFF_2 (0)
#define CGW_PF_2 (CGW_OFF_2 + BN * 2 <= CG_PAREA)
#define CGW_PF_ANY (CGW_PF_2)
#define CG_A_KMAJOR 1
#define CG_B_KMAJOR 1
#define CG_A_PTR p0
#define CG_B_PTR p1
#define CG_A_LD ld0
#define CG_B_LD ld1
#endif

static_assert(BK % CG_KROW == 0 && CG_KSUB >= 1 && CG_KSUB <= 4, "BK must be 1 to 4 128-byte swizzle rows: 64 (or 32 tf32) elements each");
static_assert(CG_KSUB == 1 || (CG_A_KMAJOR && CG_B_KMAJOR), "k-tiles of several swizzle rows need K-major A and B");
static_assert(CG_ESZ == 2 || (CG_A_KMAJOR && CG_B_KMAJOR), "wgmma .tf32 takes K-major operands only (row-major A, column-major B)");
static_assert(CONSUMERS >= 1 && CONSUMERS <= 3, "CONSUMERS must be 1, 2 or 3");
static_assert(BM <= 256 && CG_WG_M % 64 == 0 && CG_WG_M >= 64, "BM / CONSUMERS (ping-pong: BM) must be a multiple of 64, BM <= 256");
static_assert(BN >= 16 && BN <= 256 && BN % 16 == 0, "BN must be a multiple of 16 in [16, 256]");
static_assert(CG_B_KMAJOR || BN % 64 == 0, "an N-major B tile arrives in 64-column boxes: BN must be a multiple of 64");
static_assert(CG_MI * BN / 2 * (CG_PROMOTE ? 2 : 1) <= (CONSUMERS == 3 ? 96 : 128), "at most 128 accumulator registers per consumer thread, 96 with three consumers (ping-pong: BM / 64 * BN / 2; twice that with CG_PROMOTE's sums)");
static_assert(CG_PROMOTE >= 0, "CG_PROMOTE counts k-tiles (0: off)");
static_assert(STAGES >= 2, "the TMA ring needs at least two stages");
static_assert(GROUP_M >= 1, "GROUP_M must be at least 1");
static_assert(CLUSTER_M == 1 || CLUSTER_M == 2 || CLUSTER_M == 4, "CLUSTER_M must be 1, 2 or 4");
static_assert(CLUSTER_N == 1 || CLUSTER_N == 2 || CLUSTER_N == 4, "CLUSTER_N must be 1, 2 or 4");
static_assert(CG_CLUSTER <= 8, "at most 8 blocks a cluster (the portable cluster size)");
static_assert(CLUSTER_N == 1 || KSPLIT == 1, "split-K takes no cluster along N");
static_assert(!CG_CPASYNC || CG_CLUSTER == 1, "the cp.async producer does not multicast: CLUSTER_M and CLUSTER_N must be 1");
static_assert(CG_CPA_A == 4 || CG_CPA_A == 8 || CG_CPA_A == 16, "CG_CPA_A is a cp.async size: 4, 8 or 16 bytes");
static_assert(CG_CPA_B == 4 || CG_CPA_B == 8 || CG_CPA_B == 16, "CG_CPA_B is a cp.async size: 4, 8 or 16 bytes");
static_assert(CG_SMEM_BYTES <= 232448, "the ring does not fit the 232448 bytes of shared memory of sm_90");
static_assert(CG_PRODUCER_REGS % 8 == 0 && CG_CONSUMER_REGS % 8 == 0 && CG_PRODUCER_REGS >= 24 && CG_CONSUMER_REGS <= 256,
              "setmaxnreg counts are multiples of 8 in [24, 256]");
static_assert(CONSUMERS == 1 || 128 * (CG_PRODUCER_REGS + CONSUMERS * CG_CONSUMER_REGS) <= 65536,
              "the register budget of producer plus consumers exceeds the register file");

struct __align__(64) CgTmaMap { unsigned long long v[16]; };
struct __align__(8) cg_f2 { float x, y; };
struct __align__(16) cg_u4 { unsigned x, y, z, w; };

static __device__ __forceinline__ unsigned cg_smem_u32(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}
static __device__ __forceinline__ void cg_mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(bar), "r"(count) : "memory");
}
/* Arrives once and adds `bytes` to the transaction count the phase waits for. */
static __device__ __forceinline__ void cg_mbar_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(bar), "r"(bytes) : "memory");
}
static __device__ __forceinline__ void cg_mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(bar) : "memory");
}
/* Waits until the phase of parity `parity` has completed. A fresh barrier is in phase
   0, and parity 1 names the (complete) phase before it: waiting for parity 1 returns at
   once, which is how the producer's first pass over the ring finds every slot empty. */
static __device__ __forceinline__ void cg_mbar_wait(unsigned bar, unsigned parity) {
    unsigned done;
#if CG_WATCHDOG
    unsigned polls = 0;
#endif
    do {
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
#if CG_WATCHDOG
        if (++polls > (1u << 26)) asm volatile("trap;");
#endif
    } while (!done);
}
#if CG_CLUSTER > 1
static __device__ __forceinline__ unsigned cg_cluster_rank() { unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r)); return r; }
static __device__ __forceinline__ unsigned cg_cluster_id() { unsigned r; asm volatile("mov.u32 %0, %%clusterid.x;\n" : "=r"(r)); return r; }
static __device__ __forceinline__ unsigned cg_cluster_count() { unsigned r; asm volatile("mov.u32 %0, %%nclusterid.x;\n" : "=r"(r)); return r; }
static __device__ __forceinline__ void cg_cluster_sync() {
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
#endif
/* The producer's wait for an empty slot. With clusters the arrivals come from the
   consumers of every block of the cluster; as in CUTLASS's ClusterBarrier, a CTA-scope
   acquire suffices (the wgmma reads were complete before each arrival), and avoids the
   L1 invalidation that a cluster-scope acquire costs. */
static __device__ __forceinline__ void cg_mbar_wait_cluster(unsigned bar, unsigned parity) {
    cg_mbar_wait(bar, parity);
}
/* A consumer warp gives stage barrier `bar` back: to its own block, and with clusters to
   every block of the cluster (each multicasts into the others' shared memory). */
static __device__ __forceinline__ void cg_release(unsigned bar) {
#if CG_CLUSTER > 1
#pragma unroll
    for (unsigned r = 0; r < CG_CLUSTER; ++r)
        asm volatile("{\n .reg .b32 ra;\n mapa.shared::cluster.u32 ra, %0, %1;\n mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n"
                     :: "r"(bar), "r"(r) : "memory");
#else
    cg_mbar_arrive(bar);
#endif
}
/* One 2-D TMA box into shared memory, completing on `bar` (bytes counted). */
static __device__ __forceinline__ void cg_tma_load(unsigned dst, const CgTmaMap* map, unsigned bar, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n"
                 :: "r"(dst), "l"((unsigned long long)map), "r"(bar), "r"(c0), "r"(c1) : "memory");
}
#if CG_CLUSTER > 1
/* The same box into the same offsets of every block in `mask`, completing on each one's `bar`. */
static __device__ __forceinline__ void cg_tma_load_mc(unsigned dst, const CgTmaMap* map, unsigned bar, int c0, int c1, unsigned short mask) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;\n"
                 :: "r"(dst), "l"((unsigned long long)map), "r"(bar), "r"(c0), "r"(c1), "h"(mask) : "memory");
}
#endif
/* The same as one 3-D box: a batched operand's map has the product as its outer
   coordinate `c2`. */
static __device__ __forceinline__ void cg_tma_load3(unsigned dst, const CgTmaMap* map, unsigned bar, int c0, int c1, int c2) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n"
                 :: "r"(dst), "l"((unsigned long long)map), "r"(bar), "r"(c0), "r"(c1), "r"(c2) : "memory");
}
#if CG_CLUSTER > 1
static __device__ __forceinline__ void cg_tma_load3_mc(unsigned dst, const CgTmaMap* map, unsigned bar, int c0, int c1, int c2, unsigned short mask) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, %4, %5}], [%2], %6;\n"
                 :: "r"(dst), "l"((unsigned long long)map), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "h"(mask) : "memory");
}
#endif
/* A's and B's boxes for the producer: rank 3 (`CG_A_TMA3`, `CG_B_TMA3`) for an operand
   with one matrix per product of a batch, at the work item's product `cg_bz`. */
#ifndef CG_A_TMA3
#define CG_A_TMA3 0
#endif
#ifndef CG_B_TMA3
#define CG_B_TMA3 0
#endif
#if CG_A_TMA3
#define CG_TMA_A(dst, c0, c1) cg_tma_load3(dst, &a_map, full, c0, c1, (int)cg_bz)
#define CG_TMA_A_MC(dst, c0, c1, mask) cg_tma_load3_mc(dst, &a_map, full, c0, c1, (int)cg_bz, mask)
#else
#define CG_TMA_A(dst, c0, c1) cg_tma_load(dst, &a_map, full, c0, c1)
#define CG_TMA_A_MC(dst, c0, c1, mask) cg_tma_load_mc(dst, &a_map, full, c0, c1, mask)
#endif
#if CG_B_TMA3
#define CG_TMA_B(dst, c0, c1) cg_tma_load3(dst, &b_map, full, c0, c1, (int)cg_bz)
#define CG_TMA_B_MC(dst, c0, c1, mask) cg_tma_load3_mc(dst, &b_map, full, c0, c1, (int)cg_bz, mask)
#else
#define CG_TMA_B(dst, c0, c1) cg_tma_load(dst, &b_map, full, c0, c1)
#define CG_TMA_B_MC(dst, c0, c1, mask) cg_tma_load_mc(dst, &b_map, full, c0, c1, mask)
#endif
#if CG_EPI_TMA
/* One box of the output from shared memory (the TMA-store epilogue), in this thread's
   current bulk group; TMA writes only the box's elements inside the tensor. */
static __device__ __forceinline__ void cg_tma_store(const CgTmaMap* map, unsigned src, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n"
                 :: "l"((unsigned long long)map), "r"(src), "r"(c0), "r"(c1) : "memory");
}
static __device__ __forceinline__ void cg_tma_store3(const CgTmaMap* map, unsigned src, int c0, int c1, int c2) {
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n"
                 :: "l"((unsigned long long)map), "r"(src), "r"(c0), "r"(c1), "r"(c2) : "memory");
}
#if CG_C_TMA3
#define CG_TMA_C(src, c0, c1) cg_tma_store3(&c_map, src, c0, c1, (int)cg_bz)
#else
#define CG_TMA_C(src, c0, c1) cg_tma_store(&c_map, src, c0, c1)
#endif
#define CG_C_MAP const __grid_constant__ CgTmaMap c_map,
#else
#define CG_C_MAP
#endif
static __device__ __forceinline__ void cg_tma_prefetch(const CgTmaMap* map) {
    asm volatile("prefetch.tensormap [%0];\n" :: "l"((unsigned long long)map) : "memory");
}
/* Shared-memory matrix descriptor, 128-byte swizzle: start address, leading and stride
   byte offsets (all >> 4), base offset 0 (every pattern starts 1024-aligned). */
static __device__ __forceinline__ unsigned long long cg_desc(unsigned addr, unsigned lbo, unsigned sbo) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)(lbo >> 4) << 16) |
           ((unsigned long long)(sbo >> 4) << 32) | (1ull << 62);
}
static __device__ __forceinline__ void cg_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
static __device__ __forceinline__ void cg_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
static __device__ __forceinline__ void cg_wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory");
}
/* Tells the compiler that the accumulator changes here, so that no read of it moves
   above the wgmma wait before it and no write below the wgmma after it. */
static __device__ __forceinline__ void cg_fence_acc(float& r) { asm volatile("" : "+f"(r) :: "memory"); }

/* Advances a ring position by n stages (ping-pong: past the other consumer's k-tiles). */
static __device__ __forceinline__ void cg_ring_skip(int& stage, unsigned& phase, int n) {
    const int at = stage + n;
    stage = at % STAGES;
    phase ^= (unsigned)(at / STAGES) & 1u;
}

/* Triton's grouped order: GROUP_M consecutive tile rows sweep the columns together, so
   the A rows they share stay in L2. */
static __device__ __forceinline__ void cg_tile_coords(int tile, int grid_m, int grid_n, int* tm, int* tn) {
    const int width = GROUP_M * grid_n;
    const int group = tile / width;
    const int first_m = group * GROUP_M;
    const int rows = grid_m - first_m < GROUP_M ? grid_m - first_m : GROUP_M;
    const int in = tile - group * width;
    *tm = first_m + in % rows;
    *tn = in / rows;
}

#if CG_CPASYNC
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
/* d += A(64 x k-step) * B(k-step x BN), both from shared memory; scale_d == 0 overwrites d. */
#if BN == 16
static __device__ __forceinline__ void cg_wgmma(float* d, unsigned long long da, unsigned long long db, int scale_d) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %10, 0;\n wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        : "l"(da), "l"(db), "r"(scale_d));
}
#elif BN == 32
static __device__ __forceinline__ void cg_wgmma(float* d, unsigned long long da, unsigned long long db, int scale_d) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %18, 0;\n wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "l"(da), "l"(db), "r"(scale_d));
}
#elif BN == 48
static __device__ __forceinline__ void cg_wgmma(float* d, unsigned long long da, unsigned long long db, int scale_d) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %26, 0;\n wgmma.mma_async.sync.aligned.m64n48k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23}, %24, %25, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
        : "l"(da), "l"(db), "r"(scale_d));
}
#elif BN == 64
static __device__ __forceinline__ void cg_wgmma(float* d, unsigned long long da, unsigned long long db, int scale_d) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %34, 0;\n wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(da), "l"(db), "r"(scale_d));
}
#elif BN == 80
static __device__ __forceinline__ void cg_wgmma(float* d, unsigned long long da, unsigned long long db, int scale_d) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %42, 0;\n wgmma.mma_async.sync.aligned.m64n80k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39}, %40, %41, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
        : "l"(da), "l"(db), "r"(scale_d));
}
#elif BN == 96
static __device__ __forceinline__ void cg_wgmma(float* d, unsigned long long da, unsigned long long db, int scale_d) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %50, 0;\n wgmma.mma_async.sync.aligned.m64n96k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47}, %48, %49, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
        : "l"(da), "l"(db), "r"(scale_d));
}
#elif BN == 112
static __device__ __forceinline__ void cg_wgmma(float* d, unsigned long long da, unsigned long long db, int scale_d) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %58, 0;\n wgmma.mma_async.sync.aligned.m64n112k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55}, %56, %57, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55])
        : "l"(da), "l"(db), "r"(scale_d));
}
#elif BN == 128
static __device__ __forceinline__ void cg_wgmma(float* d, unsigned long long da, unsigned long long db, int scale_d) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db), "r"(scale_d));
}
#elif BN == 144
static __device__ __forceinline__ void cg_wgmma(float* d, unsigned long long da, unsigned long long db, int scale_d) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %74, 0;\n wgmma.mma_async.sync.aligned.m64n144k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71}, %72, %73, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71])
        : "l"(da), "l"(db), "r"(scale_d));
}
#elif BN == 160
static __device__ __forceinline__ void cg_wgmma(float* d, unsigned long long da, unsigned long long db, int scale_d) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %82, 0;\n wgmma.mma_async.sync.aligned.m64n160k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79}, %80, %81, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79])
        : "l"(da), "l"(db), "r"(scale_d));
}
#elif BN == 176
static __device__ __forceinline__ void cg_wgmma(float* d, unsigned long long da, unsigned long long db, int scale_d) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %90, 0;\n wgmma.mma_async.sync.aligned.m64n176k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87}, %88, %89, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87])
        : "l"(da), "l"(db), "r"(scale_d));
}
#elif BN == 192
static __device__ __forceinline__ void cg_wgmma(float* d, unsigned long long da, unsigned long long db, int scale_d) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %98, 0;\n wgmma.mma_async.sync.aligned.m64n192k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, %96, %97, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
        : "l"(da), "l"(db), "r"(scale_d));
}
#elif BN == 208
static __device__ __forceinline__ void cg_wgmma(float* d, unsigned long long da, unsigned long long db, int scale_d) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %106, 0;\n wgmma.mma_async.sync.aligned.m64n208k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103}, %104, %105, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103])
        : "l"(da), "l"(db), "r"(scale_d));
}
#elif BN == 224
static __device__ __forceinline__ void cg_wgmma(float* d, unsigned long long da, unsigned long long db, int scale_d) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %114, 0;\n wgmma.mma_async.sync.aligned.m64n224k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111}, %112, %113, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111])
        : "l"(da), "l"(db), "r"(scale_d));
}
#elif BN == 240
static __device__ __forceinline__ void cg_wgmma(float* d, unsigned long long da, unsigned long long db, int scale_d) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %122, 0;\n wgmma.mma_async.sync.aligned.m64n240k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119}, %120, %121, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119])
        : "l"(da), "l"(db), "r"(scale_d));
}
#elif BN == 256
static __device__ __forceinline__ void cg_wgmma(float* d, unsigned long long da, unsigned long long db, int scale_d) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %130, 0;\n wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(da), "l"(db), "r"(scale_d));
}
#else
#error "BN must be a multiple of 16 in [16, 256]"
#endif
#define CG_OSZ 2
typedef unsigned short cg_out_t;
#ifndef CG_STSM
#define CG_STSM (CONSUMERS < 3 || BN <= 128)
#endif
static __device__ __forceinline__ unsigned cg_pack2(float v0, float v1) {
    unsigned u;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(u) : "f"(v1), "f"(v0));
    return u;
}
static __device__ __forceinline__ void cg_st2(unsigned short* p, float v0, float v1) {
    *reinterpret_cast<unsigned*>(p) = cg_pack2(v0, v1);
}
/* The same pair into shared memory at `a` (the TMA-store epilogue's staged tile). */
static __device__ __forceinline__ void cg_sts2(unsigned a, float v0, float v1) {
    asm volatile("st.shared.b32 [%0], %1;\n" :: "r"(a), "r"(cg_pack2(v0, v1)) : "memory");
}

#ifndef CG_STREAMK
#define CG_STREAMK 0
#endif
static_assert(KSPLIT >= 1 && KSPLIT <= 16, "KSPLIT must be in [1, 16]");
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
#define CG_TAIL_MAX 8
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
#ifndef CG_STCG
#define CG_STCG(p, v) asm volatile("st.global.cg.f32 [%0], %1;" :: "l"(p), "f"(v) : "memory")
#define CG_LDCG(p, v) asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory")
#define CG_ARRIVE(p, old) asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(p) : "memory")
#define CG_RESET(p) asm volatile("st.relaxed.gpu.global.u32 [%0], 0;" :: "l"(p) : "memory")
#endif
/* One thread's arrival at a tile's counter, after the splits' slots are fenced: whether
   it is the last of n (which resets the counter: this launch's no more). */
static __device__ __forceinline__ bool cg_arrive_last(unsigned* flag, unsigned n) {
    unsigned old;
    CG_ARRIVE(flag, old);
    const bool last = old == n - 1;
    if (last) CG_RESET(flag);
    return last;
}
struct __align__(16) cg_f4 { float x, y, z, w; };
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
#if SWAP

static_assert(!CG_PINGPONG || (CONSUMERS >= 2 && KSPLIT == 1), "ping-pong takes two or three consumers and no split-K");
static_assert(!CG_REUSE || (KSPLIT == 1 && !CG_STREAMK && CG_CLUSTER == 1), "operand reuse takes no split-K, no stream-K and no cluster");
#if CG_CLUSTER > 1
#define CG_CLUSTER_DIMS __cluster_dims__(CG_CLUSTER, 1, 1)
#else
#define CG_CLUSTER_DIMS
#endif
static_assert(!CG_EPI_TMA || (CG_OSZ == CG_ESZ && BN % CG_CW == 0), "the TMA-store epilogue takes an output of the operands' element size and BN a multiple of its 128-byte boxes");
extern "C" __global__ void __launch_bounds__(CG_THREADS, 1) CG_CLUSTER_DIMS cg_f16_bias_relu_ca192860(const __grid_constant__ CgTmaMap a_map, const __grid_constant__ CgTmaMap b_map, CG_C_MAP CG_SPLITK_ARGS int N, int M, int K, unsigned short* __restrict__ out, const unsigned short* __restrict__ p0, const unsigned short* __restrict__ p1, const unsigned short* __restrict__ p2, int ldo, long offo, int ld0, long off0, int ld1, long off1, long off2, long bso, long bs0, long bs1, long bs2, int nbatch) {
    extern __shared__ __align__(1024) unsigned char cg_smem[];
    out += offo; unsigned short* const cg_out0 = out; p0 += off0; const unsigned short* const cg_p00 = p0; p1 += off1; const unsigned short* const cg_p10 = p1; p2 += off2; const unsigned short* const cg_p20 = p2; long cg_bz = 0; (void)nbatch;
    /* The ring: STAGES A tiles, STAGES B tiles, then full[STAGES] and empty[STAGES]. */
    const unsigned smem = (cg_smem_u32(cg_smem) + 1023u) & ~1023u;
    const unsigned sa = smem;
    const unsigned sb = smem + STAGES * A_STAGE_BYTES;
    const unsigned bars = sb + STAGES * B_STAGE_BYTES;
    const int wg = threadIdx.x / 128;
    const int tid = threadIdx.x % 128;
#if CG_CLUSTER > 1
    /* A cluster is CLUSTER_M x CLUSTER_N output tiles, block `rank` at (rank % CLUSTER_M,
       rank / CLUSTER_M); the blocks of a column share (multicast) the B tile, those of a
       row the A tile. */
    const unsigned rank = cg_cluster_rank();
    const int cluster = (int)cg_cluster_id(), clusters = (int)cg_cluster_count();
#else
    const unsigned rank = 0;
    const int cluster = blockIdx.x, clusters = gridDim.x;
#endif
    const unsigned rank_m = rank % CLUSTER_M, rank_n = rank / CLUSTER_M;
    (void)rank; (void)rank_m; (void)rank_n;
    if (threadIdx.x == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            cg_mbar_init(bars + s * 8, CG_CPASYNC ? 128 : 1);                 /* full: the producer's expect_tx, or every producer thread's cp.async */
            cg_mbar_init(bars + (STAGES + s) * 8, 4 * CG_READERS * CG_CLUSTER); /* empty: lane 0 of every consumer warp that reads the stage, in every block of the cluster */
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#if !CG_CPASYNC
        cg_tma_prefetch(&a_map);
        cg_tma_prefetch(&b_map);
#endif
    }
#if CG_CLUSTER > 1
    cg_cluster_sync();
#else
    __syncthreads();
#endif
    /* Tiles in units of CLUSTER_M x CLUSTER_N tiles: block `rank` of a cluster takes tile
       row CLUSTER_M * tm + rank_m and column CLUSTER_N * tn + rank_n (possibly past M or
       N: it still loads its share and stores nothing). */
    const int grid_m = (M + BM * CLUSTER_M - 1) / (BM * CLUSTER_M), grid_n = (N + BN * CLUSTER_N - 1) / (BN * CLUSTER_N);
    const int tiles = grid_m * grid_n;
    const int ktiles = (K + BK - 1) / BK;
#if CG_REUSE
    /* The work item the walk's `item` stands for: the block's items are a consecutive run
       (as many as the strided walk cluster, cluster + clusters, ... gives it, from
       cg_run0), so that the items STAGES / ktiles apart, which fill the same stages with
       the same k-tiles, are mostly neighbours in the grouped raster (see cg_keep). */
    const int cg_run0 = cluster * (tiles * nbatch / clusters) + min(cluster, tiles * nbatch % clusters);
#define CG_ITEM(item) (cg_run0 + ((item) - cluster) / clusters)
    /* Every item fills ktiles stages in turn, so the item cg_back before one filled the
       same stages with the same k-tiles where STAGES is a multiple of ktiles (else 0). */
    const int cg_back = ktiles <= STAGES && STAGES % ktiles == 0 ? STAGES / ktiles : 0;
#else
#define CG_ITEM(item) (item)
#endif

    if (wg == 0) {
        /* Producer warpgroup: one thread issues every TMA load; with CG_CPASYNC all 128
           threads copy. */
#if CONSUMERS > 1
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" :: "n"(CG_PRODUCER_REGS));
#endif
        if (CG_CPASYNC || tid == 0) {
            int stage = 0;
            unsigned phase = 0;
#if CG_STREAMK
            CgWalk walk = cg_walk(cluster, clusters, tiles * nbatch, ktiles);
            int item, kt_lo, kt_hi;
            while (cg_walk_next(walk, cluster, clusters, tiles * nbatch, ktiles, item, kt_lo, kt_hi)) {
#else
            for (int item = cluster; item < tiles * KSPLIT * nbatch; item += clusters) {
#endif
                const int witem = CG_ITEM(item);
                cg_bz = witem / (tiles * KSPLIT);
                out = cg_out0 + cg_bz * bso; p0 = cg_p00 + cg_bz * bs0; p1 = cg_p10 + cg_bz * bs1; p2 = cg_p20 + cg_bz * bs2;
                const int tile = (witem - (int)cg_bz * tiles * KSPLIT) / KSPLIT, split = witem - (int)cg_bz * tiles * KSPLIT - tile * KSPLIT;
                int tm, tn;
                cg_tile_coords(tile, grid_m, grid_n, &tm, &tn);
                const int m0 = (tm * CLUSTER_M + (int)rank_m) * BM, n0 = (tn * CLUSTER_N + (int)rank_n) * BN;
                (void)m0; (void)n0; (void)split;
#if CG_REUSE
                /* An operand tile this item shares with the item cg_back before it (A in the
                   same row of tiles, B in the same column, of the same product) is still in
                   place in the stages: their consumers only read it, and this producer alone
                   writes the ring. */
                bool cg_keep_a = false, cg_keep_b = false;
                if (cg_back > 0 && witem - cg_back >= cg_run0) {
                    const int pz = (witem - cg_back) / tiles;
                    int ptm, ptn;
                    cg_tile_coords(witem - cg_back - pz * tiles, grid_m, grid_n, &ptm, &ptn);
                    cg_keep_a = pz == (int)cg_bz && ptm == tm;
                    cg_keep_b = pz == (int)cg_bz && ptn == tn;
                }
#else
                const bool cg_keep_a = false, cg_keep_b = false;
#endif
                (void)cg_keep_a; (void)cg_keep_b;
#if CG_STREAMK
                for (int kt = kt_lo; kt < kt_hi; ++kt) {
#else
                for (int kt = CG_KT(split); kt < CG_KT(split + 1); ++kt) {
#endif
                    const int k0 = kt * BK;
                    (void)k0;
                    const unsigned full = bars + stage * 8;
                    const unsigned a_s = sa + stage * A_STAGE_BYTES, b_s = sb + stage * B_STAGE_BYTES;
                    (void)a_s; (void)b_s;
                    cg_mbar_wait_cluster(bars + (STAGES + stage) * 8, phase ^ 1);
#if CG_CPASYNC
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
                asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" :: "r"(full) : "memory");
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
#endif
                    if (++stage == STAGES) { stage = 0; phase ^= 1; }
                }
            }
#if CG_CPASYNC
            asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
        }
    } else {
        /* Consumer warpgroup c: rows [CG_WG_ROW0, CG_WG_ROW0 + CG_WG_M) of every tile it
           takes (every tile; with ping-pong, every other one, whole). */
#if CONSUMERS > 1
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" :: "n"(CG_CONSUMER_REGS));
#endif
        const int c = wg - 1;
        const int warp = tid / 32, lane = tid % 32;
#if CG_EPI_SMEM
        /* This warp's epilogue staging buffer: 16 rows of CG_STG_PITCH bytes. */
        unsigned char* const stg = cg_smem + (bars + 16 * STAGES - cg_smem_u32(cg_smem)) + (c * 4 + warp) * 16 * CG_STG_PITCH;
#endif
        /* This warpgroup's staging buffers, whose row padding is the parameter area of the
           epilogue's vectors of the current tile (CGW_PA). */
        unsigned char* const pbuf = cg_smem + (bars + 16 * STAGES - cg_smem_u32(cg_smem)) + c * (CG_EPI_TMA ? 1024 : 4 * 16 * CG_STG_PITCH);
        const unsigned pbuf_s = cg_smem_u32(pbuf);
        (void)pbuf; (void)pbuf_s;
#if CG_EPI_TMA
        /* This consumer's staged tile for the TMA store, after the parameter areas,
           1024-aligned (the swizzle pattern's period). */
        const unsigned cg_tstg = ((bars + 16 * STAGES + CONSUMERS * 1024 + 1023u) & ~1023u) + c * CG_TSTG_BYTES;
#endif
        float acc[CG_MI][BN / 2];
#pragma unroll
        for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
            for (int r = 0; r < BN / 2; ++r) acc[mi][r] = 0.0f;
#if CG_PROMOTE
        /* The work item's f32 sum of its runs of CG_PROMOTE k-tiles (CG_SCALE_D). */
        float cg_sum[CG_MI][BN / 2];
#endif
        int stage = 0;
        unsigned phase = 0;
#if CG_PINGPONG
        /* Ping-pong: this block's work items rotate between the consumers (c takes the
           block's items c, c + CONSUMERS, ...). The producer fills the ring item after
           item, so a consumer skips the others' k-tiles; and the mainloops run strictly
           in turn (named barrier CONSUMERS + 1 + c is c's turn, given by the consumer
           before it), so a consumer only waits on a stage whose previous fill has been
           consumed (an mbarrier parity names a phase only modulo 2), while its epilogue
           overlaps the others' mainloops: with three consumers two store while one
           computes (one warpgroup's stores write a tile slower than two,
           bench/results/h200-2026-12-03p1). */
        const int cg_total = tiles * nbatch;
        const unsigned cg_my_turn = CONSUMERS + 1 + c, cg_their_turn = CONSUMERS + 1 + (c + 1) % CONSUMERS;
        if (c > 0) cg_ring_skip(stage, phase, c * ktiles);
        for (int item = cluster + c * clusters; item < cg_total; item += CONSUMERS * clusters) {
            if (item != cluster) asm volatile("bar.sync %0, 256;\n" :: "r"(cg_my_turn) : "memory");
#elif CG_STREAMK
        /* Stream-K: the segments of cg_walk (whole units, then a split of a unit of the
           partial last wave), as the producer walks them. */
        CgWalk walk = cg_walk(cluster, clusters, tiles * nbatch, ktiles);
        int item, kt_lo, kt_hi;
        while (cg_walk_next(walk, cluster, clusters, tiles * nbatch, ktiles, item, kt_lo, kt_hi)) {
#else
        /* Work items: split `split` of tile `tile` of product `cg_bz` (KSPLIT = 1: the
           tiles of every product of the batch, product after product). */
        for (int item = cluster; item < tiles * KSPLIT * nbatch; item += clusters) {
#endif
            const int witem = CG_ITEM(item);
            cg_bz = witem / (tiles * KSPLIT);
            out = cg_out0 + cg_bz * bso; p0 = cg_p00 + cg_bz * bs0; p1 = cg_p10 + cg_bz * bs1; p2 = cg_p20 + cg_bz * bs2;
            const int tile = (witem - (int)cg_bz * tiles * KSPLIT) / KSPLIT, split = witem - (int)cg_bz * tiles * KSPLIT - tile * KSPLIT;
#if CG_STREAMK
            const int kt_begin = kt_lo, kt_end = kt_hi;
#else
            const int kt_begin = CG_KT(split), kt_end = CG_KT(split + 1);
#endif
            (void)split;
            int tm, tn;
            cg_tile_coords(tile, grid_m, grid_n, &tm, &tn);
            const int m0 = (tm * CLUSTER_M + (int)rank_m) * BM, n0 = (tn * CLUSTER_N + (int)rank_n) * BN;
#if CGW_PF_ANY
            cgw_wg_sync(c);
#if CGW_PF_2
            {
                const bool al = ((unsigned long long)p2 & 3) == 0;
                for (int u = tid; u < CG_WG_M / 2; u += 128) {
                    const int e = m0 + CG_WG_ROW0 + 2 * u, left = M - e;
                    const unsigned dst = pbuf_s + CGW_PA(CGW_OFF_2 + 4 * u);
                    if (al && left != 1) {
                        /* A whole pair, or none (zero-filled) past the end. */
                        cgw_cp4(dst, left >= 2 ? (const void*)(p2 + e) : (const void*)p2, left >= 2 ? 4u : 0u);
                    } else {
                        /* The last element of an odd extent (a 4-byte copy would read past
                           the vector) or an unaligned base: element loads. */
                        const unsigned lo = left >= 1 ? p2[e] : 0u, hi = left >= 2 ? p2[e + 1] : 0u;
                        cgw_sts32(dst, lo | (hi << 16));
                    }
                }
            }
#endif
            asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
#if CG_INFLIGHT
            int prev = 0;
#endif
#if CG_PROMOTE
#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                for (int r = 0; r < BN / 2; ++r) cg_sum[mi][r] = 0.0f;
#endif
            for (int kt = kt_begin; kt < kt_end; ++kt) {
                cg_mbar_wait(bars + stage * 8, phase);
#if CG_CPASYNC
                /* cp.async wrote through the generic proxy; wgmma reads through the async one. */
                asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
                const unsigned a_s = sa + stage * A_STAGE_BYTES, b_s = sb + stage * B_STAGE_BYTES;
                cg_wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < CG_KSTEPS; ++kk) {
#pragma unroll
                    for (int mi = 0; mi < CG_MI; ++mi) {
#if CG_A_KMAJOR
                        /* K-major: rows of 128 bytes, 8-row groups 1024 apart; a k-step = 32 bytes,
                           four to a sub-tile. */
                        const unsigned long long da = cg_desc(a_s + (kk / 4) * (BM * 128) + (CG_WG_ROW0 + mi * 64) * 128 + (kk % 4) * 32, 16, 1024);
#else
                        /* M-major: 64-row boxes of 8 KiB; k16 = 16 rows of 128 bytes. */
                        const unsigned long long da = cg_desc(a_s + (CG_WG_ROW0 / 64 + mi) * 8192 + kk * 2048, 8192, 1024);
#endif
#if CG_B_KMAJOR
                        const unsigned long long db = cg_desc(b_s + (kk / 4) * (BN * 128) + (kk % 4) * 32, 16, 1024);
#else
                        /* N-major: 64-column boxes 8 KiB apart (LBO), 8-row k groups 1024 apart (SBO). */
                        const unsigned long long db = cg_desc(b_s + kk * 2048, 8192, 1024);
#endif
                        cg_wgmma(acc[mi], da, db, CG_SCALE_D(kt, kk) ? 1 : 0);
                    }
                }
                cg_wgmma_commit();
#if CG_INFLIGHT
                /* Keep this stage's group in flight; the previous one is done, so its
                   stage goes back to the producer(s). */
                cg_wgmma_wait<1>();
                if (kt > kt_begin && lane == 0) cg_release(bars + (STAGES + prev) * 8);
#else
                /* Wait for this stage's group and give the stage back at once: one stage
                   held per consumer, the rest of the ring prefetching. */
                cg_wgmma_wait<0>();
                if (lane == 0) cg_release(bars + (STAGES + stage) * 8);
#endif
#if CG_INFLIGHT
                prev = stage;
#endif
#if CG_PROMOTE
                if ((kt - kt_begin + 1) % CG_PROMOTE == 0 || kt + 1 == kt_end) {
                    /* The run's last group must be done before its accumulator is read;
                       the fences keep the adds after the wait. */
                    cg_wgmma_wait<0>();
#pragma unroll
                    for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                        for (int r = 0; r < BN / 2; ++r) {
                            cg_fence_acc(acc[mi][r]);
                            cg_sum[mi][r] += acc[mi][r];
                        }
                }
#endif
                if (++stage == STAGES) { stage = 0; phase ^= 1; }
            }
            cg_wgmma_wait<0>();
#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                for (int r = 0; r < BN / 2; ++r) cg_fence_acc(acc[mi][r]);
#if CG_PROMOTE
#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                for (int r = 0; r < BN / 2; ++r) acc[mi][r] = cg_sum[mi][r];
#endif
#if CG_INFLIGHT
            if (lane == 0 && kt_end > kt_begin) cg_release(bars + (STAGES + prev) * 8);
#endif
#if CG_PINGPONG
            /* The next consumer's turn, if it has the next item; then skip the others' k-tiles. */
            if (item + clusters < cg_total) asm volatile("bar.arrive %0, 256;\n" :: "r"(cg_their_turn) : "memory");
            cg_ring_skip(stage, phase, (CONSUMERS - 1) * ktiles);
#endif
#if KSPLIT > 1
            /* More splits than k-tiles leave some with none: they add zeros. */
            if (kt_end == kt_begin) {
#pragma unroll
                for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                    for (int r = 0; r < BN / 2; ++r) acc[mi][r] = 0.0f;
            }
            {
                const long unit = ((long)tile * CLUSTER_M + rank) * CONSUMERS + c;
                const bool rows = m0 + c * CG_WG_M + warp * 16 < M;
                if (!cg_splitk_fold(acc, cg_ws + unit * KSPLIT * (CG_WG_M * BN), CG_WG_M * BN, cg_flags + unit, split, KSPLIT, tid, c, rows)) {
#if CGW_PF_ANY
                    /* Not the last split: no epilogue, but this tile's prefetch must land
                       before the next one's reuses the area. */
                    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
                    continue;
                }
            }
#endif
#if CG_STREAMK
            /* A split of a unit of the partial last wave: folded with the other splits'. */
            if (kt_begin != 0 || kt_end != ktiles) {
                const int t = item - walk.u_dp;
                /* Slots by block of the tail (block t S + s holds split s of tail unit t),
                   a slot per consumer: consumer c's slot of split s of unit t is
                   ((t S + s) CONSUMERS + c) CG_WG_M BN floats in; a counter per consumer
                   of each tail unit (fewer than G of them). */
                const long tile_f = (long)CG_WG_M * BN;
                const long flag = (long)t * CONSUMERS + c;
                const bool rows = m0 + CG_WG_ROW0 + warp * 16 < M;
                if (!cg_splitk_fold(acc, cg_ws + ((long)t * walk.splits * CONSUMERS + c) * tile_f, CONSUMERS * tile_f, cg_flags + flag,
                                    cluster % walk.splits, walk.splits, tid, c, rows)) {
#if CGW_PF_ANY
                    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
                    continue;
                }
            }
#endif

#if CG_EPI_TMA
            {
            const bool inside = m0 + CG_WG_ROW0 + CG_WG_M <= M && n0 + BN <= N;
            if (tid == 0) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
            cgw_wg_sync(c);
#if CGW_PF_ANY
            asm volatile("cp.async.wait_group 0;\n" ::: "memory");
            cgw_wg_sync(c);
#endif
#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi) {
                const int wrow = m0 + CG_WG_ROW0 + mi * 64 + warp * 16;
                (void)wrow;
                float cv2[2];
#pragma unroll
                for (int h = 0; h < 2; ++h) {
#if CGW_PF_2
                    const int il = mi * 64 + warp * 16 + (lane >> 2) + 8 * h;
                    cv2[h] = cg_f16_to_f32((unsigned short)(*(const unsigned short*)(pbuf + CGW_PA(CGW_OFF_2 + 2 * il))));
#else
                    const int i = wrow + (lane >> 2) + 8 * h;
                    cv2[h] = i < M ? cg_ld_f16(p2, i) : 0.0f;
#endif
                }
#pragma unroll
                for (int q = 0; q < BN / CG_CW; ++q) {
                    const int r_lo = q * CG_CW / 2;
#pragma unroll
                    for (int p = 0; p < CG_CW / 4; ++p) {
                        const int r = r_lo + 2 * p;
                        const int rr = mi * 64 + warp * 16 + (lane >> 2) + 8 * ((r >> 1) & 1);
                        const int i = m0 + CG_WG_ROW0 + rr;
                        const int j = n0 + 8 * (r >> 2) + 2 * (lane & 3);
                        const unsigned byte = (8 * ((r - r_lo) >> 2) + 2 * (lane & 3)) * CG_OSZ;
                        const unsigned dst = cg_tstg + q * (CG_WG_M * 128) + rr * 128 + ((((byte >> 4) ^ (unsigned)(rr & 7))) << 4) + (byte & 15);
                        if (inside) {
                            const float v0 = cgw_epi(acc[mi][r], cv2[(r >> 1) & 1]);
                            const float v1 = cgw_epi(acc[mi][r + 1], cv2[(r >> 1) & 1]);
                            cg_sts2(dst, v0, v1);
                        } else if (i < M && j < N) {
                            const bool two = j + 1 < N;
                            const float v0 = cgw_epi(acc[mi][r], cv2[(r >> 1) & 1]);
                            const float v1 = two ? cgw_epi(acc[mi][r + 1], cv2[(r >> 1) & 1]) : 0.0f;
                            cg_sts2(dst, v0, v1);
                        }
                    }
                }
            }
            /* The generic proxy's writes, seen by TMA's (the async proxy) before it reads. */
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            cgw_wg_sync(c);
            if (tid == 0) {
#pragma unroll
                for (int q = 0; q < BN / CG_CW; ++q)
                    if (n0 + q * CG_CW < N) CG_TMA_C(cg_tstg + q * (CG_WG_M * 128), n0 + q * CG_CW, m0 + CG_WG_ROW0);
                asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
            }
            }
#else
            const bool pair_ok = (ldo & 1) == 0 && ((unsigned long long)out & (2 * CG_OSZ - 1)) == 0;
#if CG_EPI_SMEM && 0
            const bool vec_ok = (ldo * CG_OSZ) % 16 == 0 && ((unsigned long long)out & 15) == 0;
#else
            const bool vec_ok = 0 ? pair_ok : true;
#endif
#if CGW_PF_ANY
            asm volatile("cp.async.wait_group 0;\n" ::: "memory");
            cgw_wg_sync(c);
#endif
#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi) {
                const int wrow = m0 + CG_WG_ROW0 + mi * 64 + warp * 16;
                float cv2[2];
#pragma unroll
                for (int h = 0; h < 2; ++h) {
#if CGW_PF_2
                    const int il = mi * 64 + warp * 16 + (lane >> 2) + 8 * h;
                    cv2[h] = cg_f16_to_f32((unsigned short)(*(const unsigned short*)(pbuf + CGW_PA(CGW_OFF_2 + 2 * il))));
#else
                    const int i = wrow + (lane >> 2) + 8 * h;
                    cv2[h] = i < M ? cg_ld_f16(p2, i) : 0.0f;
#endif
                }
#pragma unroll
                for (int q = 0; q < (BN + CG_CW - 1) / CG_CW; ++q) {
                    const int r_lo = q * CG_CW / 2;
                    const int r_hi = ((q + 1) * CG_CW < BN ? (q + 1) * CG_CW : BN) / 2;
                    if (vec_ok && (q + 1) * CG_CW <= BN && wrow + 16 <= M && n0 + (q + 1) * CG_CW <= N) {
#if !(CG_EPI_SMEM && 0)
#pragma unroll
                        for (int p = 0; p < CG_CW / 4; ++p) {
                            const int r = r_lo + 2 * p;
                            if (r >= r_hi) break;
                            const int i = wrow + (lane >> 2) + 8 * ((r >> 1) & 1);
                            const int j = n0 + 8 * (r >> 2) + 2 * (lane & 3);
                            const float v0 = cgw_epi(acc[mi][r], cv2[(r >> 1) & 1]);
                            const float v1 = cgw_epi(acc[mi][r + 1], cv2[(r >> 1) & 1]);
                            cg_st_f16(out, (long)(j) * ldo + (i), v0); cg_st_f16(out, (long)(j + 1) * ldo + (i), v1);
                        }
#endif
                    } else {
#pragma unroll
                        for (int p = 0; p < CG_CW / 4; ++p) {
                            const int r = r_lo + 2 * p;
                            if (r >= r_hi) break;
                            const int i = wrow + (lane >> 2) + 8 * ((r >> 1) & 1);
                            const int j = n0 + 8 * (r >> 2) + 2 * (lane & 3);
                            if (i < M && j < N) {
                                const bool two = j + 1 < N;
                                const float v0 = cgw_epi(acc[mi][r], cv2[(r >> 1) & 1]);
                            const float v1 = two ? cgw_epi(acc[mi][r + 1], cv2[(r >> 1) & 1]) : 0.0f;
                                cg_st_f16(out, (long)(j) * ldo + (i), v0); if (two) cg_st_f16(out, (long)(j + 1) * ldo + (i), v1);
                            }
                        }
                    }
                }
            }
#endif
        }
#if CG_EPI_TMA
        /* The block's shared memory must outlive the reads of its last stores. */
        if (tid == 0) asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#endif
    }
#if CG_CLUSTER > 1
    /* No block may leave while its peers can still arrive on its barriers or write its
       shared memory. */
    cg_cluster_sync();
#endif
}
#else

static_assert(!CG_PINGPONG || (CONSUMERS >= 2 && KSPLIT == 1), "ping-pong takes two or three consumers and no split-K");
static_assert(!CG_REUSE || (KSPLIT == 1 && !CG_STREAMK && CG_CLUSTER == 1), "operand reuse takes no split-K, no stream-K and no cluster");
#if CG_CLUSTER > 1
#define CG_CLUSTER_DIMS __cluster_dims__(CG_CLUSTER, 1, 1)
#else
#define CG_CLUSTER_DIMS
#endif
static_assert(!CG_EPI_TMA || (CG_OSZ == CG_ESZ && BN % CG_CW == 0), "the TMA-store epilogue takes an output of the operands' element size and BN a multiple of its 128-byte boxes");
extern "C" __global__ void __launch_bounds__(CG_THREADS, 1) CG_CLUSTER_DIMS cg_f16_bias_relu_ca192860(const __grid_constant__ CgTmaMap a_map, const __grid_constant__ CgTmaMap b_map, CG_C_MAP CG_SPLITK_ARGS int M, int N, int K, unsigned short* __restrict__ out, const unsigned short* __restrict__ p0, const unsigned short* __restrict__ p1, const unsigned short* __restrict__ p2, int ldo, long offo, int ld0, long off0, int ld1, long off1, long off2, long bso, long bs0, long bs1, long bs2, int nbatch) {
    extern __shared__ __align__(1024) unsigned char cg_smem[];
    out += offo; unsigned short* const cg_out0 = out; p0 += off0; const unsigned short* const cg_p00 = p0; p1 += off1; const unsigned short* const cg_p10 = p1; p2 += off2; const unsigned short* const cg_p20 = p2; long cg_bz = 0; (void)nbatch;
    /* The ring: STAGES A tiles, STAGES B tiles, then full[STAGES] and empty[STAGES]. */
    const unsigned smem = (cg_smem_u32(cg_smem) + 1023u) & ~1023u;
    const unsigned sa = smem;
    const unsigned sb = smem + STAGES * A_STAGE_BYTES;
    const unsigned bars = sb + STAGES * B_STAGE_BYTES;
    const int wg = threadIdx.x / 128;
    const int tid = threadIdx.x % 128;
#if CG_CLUSTER > 1
    /* A cluster is CLUSTER_M x CLUSTER_N output tiles, block `rank` at (rank % CLUSTER_M,
       rank / CLUSTER_M); the blocks of a column share (multicast) the B tile, those of a
       row the A tile. */
    const unsigned rank = cg_cluster_rank();
    const int cluster = (int)cg_cluster_id(), clusters = (int)cg_cluster_count();
#else
    const unsigned rank = 0;
    const int cluster = blockIdx.x, clusters = gridDim.x;
#endif
    const unsigned rank_m = rank % CLUSTER_M, rank_n = rank / CLUSTER_M;
    (void)rank; (void)rank_m; (void)rank_n;
    if (threadIdx.x == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            cg_mbar_init(bars + s * 8, CG_CPASYNC ? 128 : 1);                 /* full: the producer's expect_tx, or every producer thread's cp.async */
            cg_mbar_init(bars + (STAGES + s) * 8, 4 * CG_READERS * CG_CLUSTER); /* empty: lane 0 of every consumer warp that reads the stage, in every block of the cluster */
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#if !CG_CPASYNC
        cg_tma_prefetch(&a_map);
        cg_tma_prefetch(&b_map);
#endif
    }
#if CG_CLUSTER > 1
    cg_cluster_sync();
#else
    __syncthreads();
#endif
    /* Tiles in units of CLUSTER_M x CLUSTER_N tiles: block `rank` of a cluster takes tile
       row CLUSTER_M * tm + rank_m and column CLUSTER_N * tn + rank_n (possibly past M or
       N: it still loads its share and stores nothing). */
    const int grid_m = (M + BM * CLUSTER_M - 1) / (BM * CLUSTER_M), grid_n = (N + BN * CLUSTER_N - 1) / (BN * CLUSTER_N);
    const int tiles = grid_m * grid_n;
    const int ktiles = (K + BK - 1) / BK;
#if CG_REUSE
    /* The work item the walk's `item` stands for: the block's items are a consecutive run
       (as many as the strided walk cluster, cluster + clusters, ... gives it, from
       cg_run0), so that the items STAGES / ktiles apart, which fill the same stages with
       the same k-tiles, are mostly neighbours in the grouped raster (see cg_keep). */
    const int cg_run0 = cluster * (tiles * nbatch / clusters) + min(cluster, tiles * nbatch % clusters);
#define CG_ITEM(item) (cg_run0 + ((item) - cluster) / clusters)
    /* Every item fills ktiles stages in turn, so the item cg_back before one filled the
       same stages with the same k-tiles where STAGES is a multiple of ktiles (else 0). */
    const int cg_back = ktiles <= STAGES && STAGES % ktiles == 0 ? STAGES / ktiles : 0;
#else
#define CG_ITEM(item) (item)
#endif

    if (wg == 0) {
        /* Producer warpgroup: one thread issues every TMA load; with CG_CPASYNC all 128
           threads copy. */
#if CONSUMERS > 1
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" :: "n"(CG_PRODUCER_REGS));
#endif
        if (CG_CPASYNC || tid == 0) {
            int stage = 0;
            unsigned phase = 0;
#if CG_STREAMK
            CgWalk walk = cg_walk(cluster, clusters, tiles * nbatch, ktiles);
            int item, kt_lo, kt_hi;
            while (cg_walk_next(walk, cluster, clusters, tiles * nbatch, ktiles, item, kt_lo, kt_hi)) {
#else
            for (int item = cluster; item < tiles * KSPLIT * nbatch; item += clusters) {
#endif
                const int witem = CG_ITEM(item);
                cg_bz = witem / (tiles * KSPLIT);
                out = cg_out0 + cg_bz * bso; p0 = cg_p00 + cg_bz * bs0; p1 = cg_p10 + cg_bz * bs1; p2 = cg_p20 + cg_bz * bs2;
                const int tile = (witem - (int)cg_bz * tiles * KSPLIT) / KSPLIT, split = witem - (int)cg_bz * tiles * KSPLIT - tile * KSPLIT;
                int tm, tn;
                cg_tile_coords(tile, grid_m, grid_n, &tm, &tn);
                const int m0 = (tm * CLUSTER_M + (int)rank_m) * BM, n0 = (tn * CLUSTER_N + (int)rank_n) * BN;
                (void)m0; (void)n0; (void)split;
#if CG_REUSE
                /* An operand tile this item shares with the item cg_back before it (A in the
                   same row of tiles, B in the same column, of the same product) is still in
                   place in the stages: their consumers only read it, and this producer alone
                   writes the ring. */
                bool cg_keep_a = false, cg_keep_b = false;
                if (cg_back > 0 && witem - cg_back >= cg_run0) {
                    const int pz = (witem - cg_back) / tiles;
                    int ptm, ptn;
                    cg_tile_coords(witem - cg_back - pz * tiles, grid_m, grid_n, &ptm, &ptn);
                    cg_keep_a = pz == (int)cg_bz && ptm == tm;
                    cg_keep_b = pz == (int)cg_bz && ptn == tn;
                }
#else
                const bool cg_keep_a = false, cg_keep_b = false;
#endif
                (void)cg_keep_a; (void)cg_keep_b;
#if CG_STREAMK
                for (int kt = kt_lo; kt < kt_hi; ++kt) {
#else
                for (int kt = CG_KT(split); kt < CG_KT(split + 1); ++kt) {
#endif
                    const int k0 = kt * BK;
                    (void)k0;
                    const unsigned full = bars + stage * 8;
                    const unsigned a_s = sa + stage * A_STAGE_BYTES, b_s = sb + stage * B_STAGE_BYTES;
                    (void)a_s; (void)b_s;
                    cg_mbar_wait_cluster(bars + (STAGES + stage) * 8, phase ^ 1);
#if CG_CPASYNC
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
                asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" :: "r"(full) : "memory");
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
#endif
                    if (++stage == STAGES) { stage = 0; phase ^= 1; }
                }
            }
#if CG_CPASYNC
            asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
        }
    } else {
        /* Consumer warpgroup c: rows [CG_WG_ROW0, CG_WG_ROW0 + CG_WG_M) of every tile it
           takes (every tile; with ping-pong, every other one, whole). */
#if CONSUMERS > 1
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" :: "n"(CG_CONSUMER_REGS));
#endif
        const int c = wg - 1;
        const int warp = tid / 32, lane = tid % 32;
#if CG_EPI_SMEM
        /* This warp's epilogue staging buffer: 16 rows of CG_STG_PITCH bytes. */
        unsigned char* const stg = cg_smem + (bars + 16 * STAGES - cg_smem_u32(cg_smem)) + (c * 4 + warp) * 16 * CG_STG_PITCH;
#endif
        /* This warpgroup's staging buffers, whose row padding is the parameter area of the
           epilogue's vectors of the current tile (CGW_PA). */
        unsigned char* const pbuf = cg_smem + (bars + 16 * STAGES - cg_smem_u32(cg_smem)) + c * (CG_EPI_TMA ? 1024 : 4 * 16 * CG_STG_PITCH);
        const unsigned pbuf_s = cg_smem_u32(pbuf);
        (void)pbuf; (void)pbuf_s;
#if CG_EPI_TMA
        /* This consumer's staged tile for the TMA store, after the parameter areas,
           1024-aligned (the swizzle pattern's period). */
        const unsigned cg_tstg = ((bars + 16 * STAGES + CONSUMERS * 1024 + 1023u) & ~1023u) + c * CG_TSTG_BYTES;
#endif
        float acc[CG_MI][BN / 2];
#pragma unroll
        for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
            for (int r = 0; r < BN / 2; ++r) acc[mi][r] = 0.0f;
#if CG_PROMOTE
        /* The work item's f32 sum of its runs of CG_PROMOTE k-tiles (CG_SCALE_D). */
        float cg_sum[CG_MI][BN / 2];
#endif
        int stage = 0;
        unsigned phase = 0;
#if CG_PINGPONG
        /* Ping-pong: this block's work items rotate between the consumers (c takes the
           block's items c, c + CONSUMERS, ...). The producer fills the ring item after
           item, so a consumer skips the others' k-tiles; and the mainloops run strictly
           in turn (named barrier CONSUMERS + 1 + c is c's turn, given by the consumer
           before it), so a consumer only waits on a stage whose previous fill has been
           consumed (an mbarrier parity names a phase only modulo 2), while its epilogue
           overlaps the others' mainloops: with three consumers two store while one
           computes (one warpgroup's stores write a tile slower than two,
           bench/results/h200-2026-12-03p1). */
        const int cg_total = tiles * nbatch;
        const unsigned cg_my_turn = CONSUMERS + 1 + c, cg_their_turn = CONSUMERS + 1 + (c + 1) % CONSUMERS;
        if (c > 0) cg_ring_skip(stage, phase, c * ktiles);
        for (int item = cluster + c * clusters; item < cg_total; item += CONSUMERS * clusters) {
            if (item != cluster) asm volatile("bar.sync %0, 256;\n" :: "r"(cg_my_turn) : "memory");
#elif CG_STREAMK
        /* Stream-K: the segments of cg_walk (whole units, then a split of a unit of the
           partial last wave), as the producer walks them. */
        CgWalk walk = cg_walk(cluster, clusters, tiles * nbatch, ktiles);
        int item, kt_lo, kt_hi;
        while (cg_walk_next(walk, cluster, clusters, tiles * nbatch, ktiles, item, kt_lo, kt_hi)) {
#else
        /* Work items: split `split` of tile `tile` of product `cg_bz` (KSPLIT = 1: the
           tiles of every product of the batch, product after product). */
        for (int item = cluster; item < tiles * KSPLIT * nbatch; item += clusters) {
#endif
            const int witem = CG_ITEM(item);
            cg_bz = witem / (tiles * KSPLIT);
            out = cg_out0 + cg_bz * bso; p0 = cg_p00 + cg_bz * bs0; p1 = cg_p10 + cg_bz * bs1; p2 = cg_p20 + cg_bz * bs2;
            const int tile = (witem - (int)cg_bz * tiles * KSPLIT) / KSPLIT, split = witem - (int)cg_bz * tiles * KSPLIT - tile * KSPLIT;
#if CG_STREAMK
            const int kt_begin = kt_lo, kt_end = kt_hi;
#else
            const int kt_begin = CG_KT(split), kt_end = CG_KT(split + 1);
#endif
            (void)split;
            int tm, tn;
            cg_tile_coords(tile, grid_m, grid_n, &tm, &tn);
            const int m0 = (tm * CLUSTER_M + (int)rank_m) * BM, n0 = (tn * CLUSTER_N + (int)rank_n) * BN;
#if CGW_PF_ANY
            cgw_wg_sync(c);
#if CGW_PF_2
            {
                const bool al = ((unsigned long long)p2 & 3) == 0;
                for (int u = tid; u < BN / 2; u += 128) {
                    const int e = n0 + 2 * u, left = N - e;
                    const unsigned dst = pbuf_s + CGW_PA(CGW_OFF_2 + 4 * u);
                    if (al && left != 1) {
                        /* A whole pair, or none (zero-filled) past the end. */
                        cgw_cp4(dst, left >= 2 ? (const void*)(p2 + e) : (const void*)p2, left >= 2 ? 4u : 0u);
                    } else {
                        /* The last element of an odd extent (a 4-byte copy would read past
                           the vector) or an unaligned base: element loads. */
                        const unsigned lo = left >= 1 ? p2[e] : 0u, hi = left >= 2 ? p2[e + 1] : 0u;
                        cgw_sts32(dst, lo | (hi << 16));
                    }
                }
            }
#endif
            asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
#if CG_INFLIGHT
            int prev = 0;
#endif
#if CG_PROMOTE
#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                for (int r = 0; r < BN / 2; ++r) cg_sum[mi][r] = 0.0f;
#endif
            for (int kt = kt_begin; kt < kt_end; ++kt) {
                cg_mbar_wait(bars + stage * 8, phase);
#if CG_CPASYNC
                /* cp.async wrote through the generic proxy; wgmma reads through the async one. */
                asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
                const unsigned a_s = sa + stage * A_STAGE_BYTES, b_s = sb + stage * B_STAGE_BYTES;
                cg_wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < CG_KSTEPS; ++kk) {
#pragma unroll
                    for (int mi = 0; mi < CG_MI; ++mi) {
#if CG_A_KMAJOR
                        /* K-major: rows of 128 bytes, 8-row groups 1024 apart; a k-step = 32 bytes,
                           four to a sub-tile. */
                        const unsigned long long da = cg_desc(a_s + (kk / 4) * (BM * 128) + (CG_WG_ROW0 + mi * 64) * 128 + (kk % 4) * 32, 16, 1024);
#else
                        /* M-major: 64-row boxes of 8 KiB; k16 = 16 rows of 128 bytes. */
                        const unsigned long long da = cg_desc(a_s + (CG_WG_ROW0 / 64 + mi) * 8192 + kk * 2048, 8192, 1024);
#endif
#if CG_B_KMAJOR
                        const unsigned long long db = cg_desc(b_s + (kk / 4) * (BN * 128) + (kk % 4) * 32, 16, 1024);
#else
                        /* N-major: 64-column boxes 8 KiB apart (LBO), 8-row k groups 1024 apart (SBO). */
                        const unsigned long long db = cg_desc(b_s + kk * 2048, 8192, 1024);
#endif
                        cg_wgmma(acc[mi], da, db, CG_SCALE_D(kt, kk) ? 1 : 0);
                    }
                }
                cg_wgmma_commit();
#if CG_INFLIGHT
                /* Keep this stage's group in flight; the previous one is done, so its
                   stage goes back to the producer(s). */
                cg_wgmma_wait<1>();
                if (kt > kt_begin && lane == 0) cg_release(bars + (STAGES + prev) * 8);
#else
                /* Wait for this stage's group and give the stage back at once: one stage
                   held per consumer, the rest of the ring prefetching. */
                cg_wgmma_wait<0>();
                if (lane == 0) cg_release(bars + (STAGES + stage) * 8);
#endif
#if CG_INFLIGHT
                prev = stage;
#endif
#if CG_PROMOTE
                if ((kt - kt_begin + 1) % CG_PROMOTE == 0 || kt + 1 == kt_end) {
                    /* The run's last group must be done before its accumulator is read;
                       the fences keep the adds after the wait. */
                    cg_wgmma_wait<0>();
#pragma unroll
                    for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                        for (int r = 0; r < BN / 2; ++r) {
                            cg_fence_acc(acc[mi][r]);
                            cg_sum[mi][r] += acc[mi][r];
                        }
                }
#endif
                if (++stage == STAGES) { stage = 0; phase ^= 1; }
            }
            cg_wgmma_wait<0>();
#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                for (int r = 0; r < BN / 2; ++r) cg_fence_acc(acc[mi][r]);
#if CG_PROMOTE
#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                for (int r = 0; r < BN / 2; ++r) acc[mi][r] = cg_sum[mi][r];
#endif
#if CG_INFLIGHT
            if (lane == 0 && kt_end > kt_begin) cg_release(bars + (STAGES + prev) * 8);
#endif
#if CG_PINGPONG
            /* The next consumer's turn, if it has the next item; then skip the others' k-tiles. */
            if (item + clusters < cg_total) asm volatile("bar.arrive %0, 256;\n" :: "r"(cg_their_turn) : "memory");
            cg_ring_skip(stage, phase, (CONSUMERS - 1) * ktiles);
#endif
#if KSPLIT > 1
            /* More splits than k-tiles leave some with none: they add zeros. */
            if (kt_end == kt_begin) {
#pragma unroll
                for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                    for (int r = 0; r < BN / 2; ++r) acc[mi][r] = 0.0f;
            }
            {
                const long unit = ((long)tile * CLUSTER_M + rank) * CONSUMERS + c;
                const bool rows = m0 + c * CG_WG_M + warp * 16 < M;
                if (!cg_splitk_fold(acc, cg_ws + unit * KSPLIT * (CG_WG_M * BN), CG_WG_M * BN, cg_flags + unit, split, KSPLIT, tid, c, rows)) {
#if CGW_PF_ANY
                    /* Not the last split: no epilogue, but this tile's prefetch must land
                       before the next one's reuses the area. */
                    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
                    continue;
                }
            }
#endif
#if CG_STREAMK
            /* A split of a unit of the partial last wave: folded with the other splits'. */
            if (kt_begin != 0 || kt_end != ktiles) {
                const int t = item - walk.u_dp;
                /* Slots by block of the tail (block t S + s holds split s of tail unit t),
                   a slot per consumer: consumer c's slot of split s of unit t is
                   ((t S + s) CONSUMERS + c) CG_WG_M BN floats in; a counter per consumer
                   of each tail unit (fewer than G of them). */
                const long tile_f = (long)CG_WG_M * BN;
                const long flag = (long)t * CONSUMERS + c;
                const bool rows = m0 + CG_WG_ROW0 + warp * 16 < M;
                if (!cg_splitk_fold(acc, cg_ws + ((long)t * walk.splits * CONSUMERS + c) * tile_f, CONSUMERS * tile_f, cg_flags + flag,
                                    cluster % walk.splits, walk.splits, tid, c, rows)) {
#if CGW_PF_ANY
                    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
                    continue;
                }
            }
#endif

#if CG_EPI_TMA
            {
            const bool inside = m0 + CG_WG_ROW0 + CG_WG_M <= M && n0 + BN <= N;
            if (tid == 0) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
            cgw_wg_sync(c);
#if CGW_PF_ANY
            asm volatile("cp.async.wait_group 0;\n" ::: "memory");
            cgw_wg_sync(c);
#endif
#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi) {
                const int wrow = m0 + CG_WG_ROW0 + mi * 64 + warp * 16;
                (void)wrow;
#pragma unroll
                for (int q = 0; q < BN / CG_CW; ++q) {
                    const int r_lo = q * CG_CW / 2;
#if CGW_PF_2
                    float rb2[CG_CW / 8][2];
#pragma unroll
                    for (int g = 0; g < CG_CW / 8; ++g) {
                        const int jl = q * CG_CW + 8 * g + 2 * (lane & 3);
                        if (q * CG_CW + 8 * g < BN) {
                            const unsigned w = *(const unsigned*)(pbuf + CGW_PA(CGW_OFF_2 + 2 * jl));
                            rb2[g][0] = cg_f16_to_f32((unsigned short)(w));
                            rb2[g][1] = cg_f16_to_f32((unsigned short)(w >> 16));
                        } else {
                            rb2[g][0] = rb2[g][1] = 0.0f;
                        }
                    }
#endif
#pragma unroll
                    for (int p = 0; p < CG_CW / 4; ++p) {
                        const int r = r_lo + 2 * p;
                        const int rr = mi * 64 + warp * 16 + (lane >> 2) + 8 * ((r >> 1) & 1);
                        const int i = m0 + CG_WG_ROW0 + rr;
                        const int j = n0 + 8 * (r >> 2) + 2 * (lane & 3);
                        const unsigned byte = (8 * ((r - r_lo) >> 2) + 2 * (lane & 3)) * CG_OSZ;
                        const unsigned dst = cg_tstg + q * (CG_WG_M * 128) + rr * 128 + ((((byte >> 4) ^ (unsigned)(rr & 7))) << 4) + (byte & 15);
                        if (inside) {
                            #if CGW_PF_2
                            const float a2_0 = rb2[(r - r_lo) >> 2][0], a2_1 = rb2[(r - r_lo) >> 2][1];
#else
                            const float a2_0 = cg_ld_f16(p2, j), a2_1 = cg_ld_f16(p2, j + 1);
#endif
                            const float v0 = cgw_epi(acc[mi][r], a2_0);
                            const float v1 = cgw_epi(acc[mi][r + 1], a2_1);
                            cg_sts2(dst, v0, v1);
                        } else if (i < M && j < N) {
                            const bool two = j + 1 < N;
                            #if CGW_PF_2
                            const float a2_0 = rb2[(r - r_lo) >> 2][0], a2_1 = rb2[(r - r_lo) >> 2][1];
#else
                            const float a2_0 = cg_ld_f16(p2, j), a2_1 = two ? cg_ld_f16(p2, j + 1) : 0.0f;
#endif
                            const float v0 = cgw_epi(acc[mi][r], a2_0);
                            const float v1 = two ? cgw_epi(acc[mi][r + 1], a2_1) : 0.0f;
                            cg_sts2(dst, v0, v1);
                        }
                    }
                }
            }
            /* The generic proxy's writes, seen by TMA's (the async proxy) before it reads. */
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            cgw_wg_sync(c);
            if (tid == 0) {
#pragma unroll
                for (int q = 0; q < BN / CG_CW; ++q)
                    if (n0 + q * CG_CW < N) CG_TMA_C(cg_tstg + q * (CG_WG_M * 128), n0 + q * CG_CW, m0 + CG_WG_ROW0);
                asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
            }
            }
#else
            const bool pair_ok = (ldo & 1) == 0 && ((unsigned long long)out & (2 * CG_OSZ - 1)) == 0;
#if CG_EPI_SMEM && 1
            const bool vec_ok = (ldo * CG_OSZ) % 16 == 0 && ((unsigned long long)out & 15) == 0;
#else
            const bool vec_ok = 1 ? pair_ok : true;
#endif
#if CGW_PF_ANY
            asm volatile("cp.async.wait_group 0;\n" ::: "memory");
            cgw_wg_sync(c);
#endif
#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi) {
                const int wrow = m0 + CG_WG_ROW0 + mi * 64 + warp * 16;
#pragma unroll
                for (int q = 0; q < (BN + CG_CW - 1) / CG_CW; ++q) {
                    const int r_lo = q * CG_CW / 2;
                    const int r_hi = ((q + 1) * CG_CW < BN ? (q + 1) * CG_CW : BN) / 2;
#if CGW_PF_2
                    float rb2[CG_CW / 8][2];
#pragma unroll
                    for (int g = 0; g < CG_CW / 8; ++g) {
                        const int jl = q * CG_CW + 8 * g + 2 * (lane & 3);
                        if (q * CG_CW + 8 * g < BN) {
                            const unsigned w = *(const unsigned*)(pbuf + CGW_PA(CGW_OFF_2 + 2 * jl));
                            rb2[g][0] = cg_f16_to_f32((unsigned short)(w));
                            rb2[g][1] = cg_f16_to_f32((unsigned short)(w >> 16));
                        } else {
                            rb2[g][0] = rb2[g][1] = 0.0f;
                        }
                    }
#endif
                    if (vec_ok && (q + 1) * CG_CW <= BN && wrow + 16 <= M && n0 + (q + 1) * CG_CW <= N) {
#if CG_EPI_SMEM
#if CG_STSM
                        /* Block pp of 16 columns: matrices (its first 8 columns, rows 0-7), (the
                           same, rows 8-15), (its last 8 columns, rows 0-7), (rows 8-15), whose
                           row addresses lanes 0-7, 8-15, 16-23 and 24-31 give. */
#pragma unroll
                        for (int pp = 0; pp < CG_CW / 16; ++pp) {
                            unsigned w[4];
#pragma unroll
                            for (int e = 0; e < 4; ++e) {
                                const int r = r_lo + 8 * pp + 2 * e;
                                const int i = wrow + (lane >> 2) + 8 * ((r >> 1) & 1);
                                const int j = n0 + 8 * (r >> 2) + 2 * (lane & 3);
                                #if CGW_PF_2
                            const float a2_0 = rb2[(r - r_lo) >> 2][0], a2_1 = rb2[(r - r_lo) >> 2][1];
#else
                            const float a2_0 = cg_ld_f16(p2, j), a2_1 = cg_ld_f16(p2, j + 1);
#endif
                            const float v0 = cgw_epi(acc[mi][r], a2_0);
                            const float v1 = cgw_epi(acc[mi][r + 1], a2_1);
                                w[e] = cg_pack2(v0, v1);
                            }
                            const int mx = lane >> 3;
                            const unsigned a = cg_smem_u32(stg) + ((lane & 7) + 8 * (mx & 1)) * CG_STG_PITCH + (16 * pp + 8 * (mx >> 1)) * CG_OSZ;
                            asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
                                         :: "r"(a), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]) : "memory");
                        }
#else
#pragma unroll
                        for (int p = 0; p < CG_CW / 4; ++p) {
                            const int r = r_lo + 2 * p;
                            if (r >= r_hi) break;
                            const int i = wrow + (lane >> 2) + 8 * ((r >> 1) & 1);
                            const int j = n0 + 8 * (r >> 2) + 2 * (lane & 3);
                            #if CGW_PF_2
                            const float a2_0 = rb2[(r - r_lo) >> 2][0], a2_1 = rb2[(r - r_lo) >> 2][1];
#else
                            const float a2_0 = cg_ld_f16(p2, j), a2_1 = cg_ld_f16(p2, j + 1);
#endif
                            const float v0 = cgw_epi(acc[mi][r], a2_0);
                            const float v1 = cgw_epi(acc[mi][r + 1], a2_1);
                            cg_st2(reinterpret_cast<cg_out_t*>(stg + ((lane >> 2) + 8 * ((r >> 1) & 1)) * CG_STG_PITCH +
                                                               (8 * ((r - r_lo) >> 2) + 2 * (lane & 3)) * CG_OSZ),
                                   v0, v1);
                        }
#endif
                        __syncwarp();
#pragma unroll
                        for (int t = 0; t < 4; ++t) {
                            const int row = t * 4 + (lane >> 3), c16 = lane & 7;
                            const cg_u4 v = *reinterpret_cast<const cg_u4*>(stg + row * CG_STG_PITCH + c16 * 16);
                            *reinterpret_cast<cg_u4*>(out + (long)(wrow + row) * ldo + n0 + q * CG_CW + c16 * (16 / CG_OSZ)) = v;
                        }
                        __syncwarp();
#endif
#if !(CG_EPI_SMEM && 1)
#pragma unroll
                        for (int p = 0; p < CG_CW / 4; ++p) {
                            const int r = r_lo + 2 * p;
                            if (r >= r_hi) break;
                            const int i = wrow + (lane >> 2) + 8 * ((r >> 1) & 1);
                            const int j = n0 + 8 * (r >> 2) + 2 * (lane & 3);
                            #if CGW_PF_2
                            const float a2_0 = rb2[(r - r_lo) >> 2][0], a2_1 = rb2[(r - r_lo) >> 2][1];
#else
                            const float a2_0 = cg_ld_f16(p2, j), a2_1 = cg_ld_f16(p2, j + 1);
#endif
                            const float v0 = cgw_epi(acc[mi][r], a2_0);
                            const float v1 = cgw_epi(acc[mi][r + 1], a2_1);
                            cg_st2(out + (long)i * ldo + j, v0, v1);
                        }
#endif
                    } else {
#pragma unroll
                        for (int p = 0; p < CG_CW / 4; ++p) {
                            const int r = r_lo + 2 * p;
                            if (r >= r_hi) break;
                            const int i = wrow + (lane >> 2) + 8 * ((r >> 1) & 1);
                            const int j = n0 + 8 * (r >> 2) + 2 * (lane & 3);
                            if (i < M && j < N) {
                                const bool two = j + 1 < N;
                                #if CGW_PF_2
                            const float a2_0 = rb2[(r - r_lo) >> 2][0], a2_1 = rb2[(r - r_lo) >> 2][1];
#else
                            const float a2_0 = cg_ld_f16(p2, j), a2_1 = two ? cg_ld_f16(p2, j + 1) : 0.0f;
#endif
                            const float v0 = cgw_epi(acc[mi][r], a2_0);
                            const float v1 = two ? cgw_epi(acc[mi][r + 1], a2_1) : 0.0f;
                                if (two && pair_ok) cg_st2(out + (long)i * ldo + j, v0, v1);
                                else { cg_st_f16(out, (long)(i) * ldo + (j), v0); if (two) cg_st_f16(out, (long)(i) * ldo + (j + 1), v1); }
                            }
                        }
                    }
                }
            }
#endif
        }
#if CG_EPI_TMA
        /* The block's shared memory must outlive the reads of its last stores. */
        if (tid == 0) asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#endif
    }
#if CG_CLUSTER > 1
    /* No block may leave while its peers can still arrive on its barriers or write its
       shared memory. */
    cg_cluster_sync();
#endif
}
#endif
