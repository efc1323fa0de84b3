/* crossgemm: cg_f16_bt_silu_f32out_8eb01f64 = (silu((acc - shift)) / 2.0) (mma.sync m16n8k16, A RowMajor, B ColMajor, out f32 RowMajor) */
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
#define SWZ(row, chunk, cpr) ((chunk) ^ (((row) / ((cpr) >= 8 ? 1 : 8 / (cpr))) % ((cpr) < 8 ? (cpr) : 8)))
static __device__ __forceinline__ float cg_epilogue(float acc, int i, int j, int M, int N, const float* p2) {
    (void)i; (void)j; (void)M; (void)N;
    const float v2 = cg_ld_f32(p2, j);
    return (cg_silu((acc - v2)) / 2.0f);
}

#ifndef A_VEC
#define A_VEC 0
#endif
#ifndef B_VEC
#define B_VEC 0
#endif
#ifndef A_ALIGN
#define A_ALIGN 1
#endif
#ifndef B_ALIGN
#define B_ALIGN 1
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
struct alignas(16) cg_u4 { unsigned x, y, z, w; };

/* Triton's grouped launch order: GROUP_M consecutive block rows sweep the columns
   together, so the A rows they share stay in L2. Returns false for a block past the
   last tile (cannot happen with TileConfig::launch's grid). */
static __device__ __forceinline__ bool cg_tile_of_block(int M, int N, int bm, int bn, int* tm, int* tn) {
    const int grid_m = (M + bm - 1) / bm, grid_n = (N + bn - 1) / bn;
    const int pid = blockIdx.x;
    const int width = GROUP_M * grid_n;
    const int first_m = (pid / width) * GROUP_M;
    const int rows = grid_m - first_m < GROUP_M ? grid_m - first_m : GROUP_M;
    if (rows <= 0) return false;
    *tm = first_m + (pid % width) % rows;
    *tn = (pid % width) / rows;
    return *tn < grid_n;
}
#ifndef CG_PROMOTE
#define CG_PROMOTE 0
#endif

#define CG_THREADS (WARPS_M * WARPS_N * 32)
#define CG_WM (BM / WARPS_M)
#define CG_WN (BN / WARPS_N)
#define CG_MI (CG_WM / 16)
#define CG_NI (CG_WN / 8)
#define CG_ESZ 2
#define CG_EPC (16 / CG_ESZ)
#define CG_KSTEP 16
#define A_ROWS BM
#define A_CPR (BK / CG_EPC)
#define B_ROWS BN
#define B_CPR (BK / CG_EPC)
#define A_STAGE_BYTES (BM * BK * CG_ESZ)
#define B_STAGE_BYTES (BN * BK * CG_ESZ)
static_assert(BM % WARPS_M == 0 && BN % WARPS_N == 0, "block tile must split evenly over warps");
static_assert(CG_WM % 16 == 0 && CG_WN % 16 == 0, "warp tile must be a multiple of 16x16");
static_assert(BK % CG_KSTEP == 0 && BK % CG_EPC == 0, "BK must be a multiple of the mma K step");
static_assert(STAGES >= 2, "the cp.async ring needs at least two stages");
static_assert((A_CPR & (A_CPR - 1)) == 0 && (B_CPR & (B_CPR - 1)) == 0, "SWZ permutes power-of-two rows only");
typedef unsigned short cg_ab_t;

static __device__ __forceinline__ unsigned cg_smem_u32(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}
/* Byte offset of logical 16-byte chunk `chunk` of tile row `row` (rows of `cpr` chunks). */
static __device__ __forceinline__ int cg_chunk_off(int row, int chunk, int cpr) {
    return (row * cpr + SWZ(row, chunk, cpr)) * 16;
}
/* src_bytes < 16 zero-fills the rest of the chunk: out-of-range rows/columns become 0,
   which is what the K tail and the M/N edges need. */
static __device__ __forceinline__ void cg_cp_async16(unsigned dst, const void* src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
static __device__ __forceinline__ void cg_cp_commit() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
static __device__ __forceinline__ void cg_cp_wait() {
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
}

/* One operand tile: ROWS rows of CPR chunks, row r holding global outer index o0 + r
   and inner (contiguous) indices i0 + chunk * CG_EPC...; the global matrix is O x I with
   leading dimension LD (at least I). */
template <int ROWS, int CPR, int VEC>
static __device__ __forceinline__ void cg_load_tile(unsigned char* s, const cg_ab_t* __restrict__ g,
                                                    int o0, int O, int i0, int I, int LD, int tid) {
    constexpr int CHUNKS = ROWS * CPR;
    constexpr int ITERS = (CHUNKS + CG_THREADS - 1) / CG_THREADS;
    if constexpr (CG_THREADS % CPR == 0 && (CG_THREADS / CPR) % 8 == 0) {
        /* Each thread keeps one chunk column and steps down by RSTEP rows; SWZ's key
           repeats every 8 rows, so the shared offsets are one base plus constants and
           the global ones one pointer plus multiples of a stride: few live registers. */
        constexpr int RSTEP = CG_THREADS / CPR;
        const int r0 = tid / CPR, ch = tid % CPR;
        const int gi = i0 + ch * CG_EPC;
        const int rows_left = O - (o0 + r0);
        const int left = I - gi;
        const long step = (long)RSTEP * LD;
        const cg_ab_t* p = g + ((long)(o0 + r0) * LD + gi);
        unsigned char* dst = s + cg_chunk_off(r0, ch, CPR);
#pragma unroll
        for (int it = 0; it < ITERS; ++it) {
            if (CHUNKS % CG_THREADS != 0 && r0 + it * RSTEP >= ROWS) break;
            const bool row_ok = it * RSTEP < rows_left;
            if (VEC) {
                /* LD and the view's start are multiples of CG_EPC here, so every chunk is
                   16-byte aligned; one that crosses I is zero-filled past it. */
                const int valid = (row_ok && left > 0) ? (left < CG_EPC ? left : CG_EPC) : 0;
                cg_cp_async16(cg_smem_u32(dst + it * RSTEP * CPR * 16), valid ? p + it * step : g, valid * CG_ESZ);
            } else {
                /* Unaligned chunks: cp.async would fault, so load elements synchronously. */
                alignas(16) cg_ab_t v[CG_EPC];
#pragma unroll
                for (int e = 0; e < CG_EPC; ++e) v[e] = (row_ok && e < left) ? p[it * step + e] : (cg_ab_t)0;
                *reinterpret_cast<cg_u4*>(dst + it * RSTEP * CPR * 16) = *reinterpret_cast<const cg_u4*>(v);
            }
        }
    } else {
#pragma unroll
        for (int it = 0; it < ITERS; ++it) {
            const int c = it * CG_THREADS + tid;
            if (CHUNKS % CG_THREADS != 0 && c >= CHUNKS) break;
            const int r = c / CPR, ch = c % CPR;
            const int go = o0 + r, gi = i0 + ch * CG_EPC;
            unsigned char* dst = s + cg_chunk_off(r, ch, CPR);
            if (VEC) {
                const int left = I - gi;
                const int valid = (go < O && left > 0) ? (left < CG_EPC ? left : CG_EPC) : 0;
                const cg_ab_t* src = valid ? g + ((long)go * LD + gi) : g;
                cg_cp_async16(cg_smem_u32(dst), src, valid * CG_ESZ);
            } else {
                alignas(16) cg_ab_t v[CG_EPC];
#pragma unroll
                for (int e = 0; e < CG_EPC; ++e)
                    v[e] = (go < O && gi + e < I) ? g[(long)go * LD + gi + e] : (cg_ab_t)0;
                *reinterpret_cast<cg_u4*>(dst) = *reinterpret_cast<const cg_u4*>(v);
            }
        }
    }
}

static __device__ __forceinline__ void cg_ldsm_x4(unsigned* r, unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory");
}
static __device__ __forceinline__ void cg_ldsm_x4_trans(unsigned* r, unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory");
}
static __device__ __forceinline__ void cg_mma(float* c, const unsigned* a, const unsigned* b) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

extern "C" __global__ void __launch_bounds__(CG_THREADS) cg_f16_bt_silu_f32out_8eb01f64(int M, int N, int K, float* __restrict__ out, const unsigned short* __restrict__ p0, const unsigned short* __restrict__ p1, const float* __restrict__ p2, int ldo, long offo, int ld0, long off0, int ld1, long off1, long off2, long bso, long bs0, long bs1, long bs2, int nbatch) {
    extern __shared__ __align__(128) unsigned char cg_smem[];
    const long cg_bz = (long)blockIdx.z; out += offo + cg_bz * bso; p0 += off0 + cg_bz * bs0; p1 += off1 + cg_bz * bs1; p2 += off2 + cg_bz * bs2;
    int tm, tn;
    if (!cg_tile_of_block(M, N, BM, BN, &tm, &tn)) return;
    const int m0 = tm * BM, n0 = tn * BN;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
    const cg_ab_t* __restrict__ ga = p0;
    const cg_ab_t* __restrict__ gb = p1;
    unsigned char* const sa = cg_smem;
    unsigned char* const sb = cg_smem + STAGES * A_STAGE_BYTES;
    (void)lane; (void)warp_m; (void)warp_n;

    float c[CG_MI][CG_NI][4];
#pragma unroll
    for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < CG_NI; ++ni)
#pragma unroll
            for (int q = 0; q < 4; ++q) c[mi][ni][q] = 0.0f;
#if CG_PROMOTE
    /* The sums of the accumulators of each run of CG_PROMOTE k-tiles (family::promotes). */
    float cg_sum[CG_MI][CG_NI][4];
#pragma unroll
    for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < CG_NI; ++ni)
#pragma unroll
            for (int q = 0; q < 4; ++q) cg_sum[mi][ni][q] = 0.0f;
#endif

    auto load_stage = [&](int st, int k0) {
        cg_load_tile<A_ROWS, A_CPR, A_VEC>(sa + st * A_STAGE_BYTES, ga, m0, M, k0, K, ld0, tid);
        cg_load_tile<B_ROWS, B_CPR, B_VEC>(sb + st * B_STAGE_BYTES, gb, n0, N, k0, K, ld1, tid);
    };

    const int ktiles = (K + BK - 1) / BK;
    /* Prologue: STAGES-1 tiles in flight. Every slot commits a group, empty or not, so
       that wait_group<STAGES-2> below always means "tile kt has landed". */
#pragma unroll
    for (int st = 0; st < STAGES - 1; ++st) {
        if (st < ktiles) load_stage(st, st * BK);
        cg_cp_commit();
    }
    int rd = 0, wr = STAGES - 1;
    for (int kt = 0; kt < ktiles; ++kt) {
        cg_cp_wait<STAGES - 2>();
        /* Makes tile kt visible to every warp, and tells the producer below that every
           warp is done with the slot it overwrites (consumed in iteration kt-1). */
        __syncthreads();
        if (kt + STAGES - 1 < ktiles) load_stage(wr, (kt + STAGES - 1) * BK);
        cg_cp_commit();
        wr = wr + 1 == STAGES ? 0 : wr + 1;

        const unsigned char* const as = sa + rd * A_STAGE_BYTES;
        const unsigned char* const bs = sb + rd * B_STAGE_BYTES;
        (void)as; (void)bs;
        const unsigned as_u = cg_smem_u32(as), bs_u = cg_smem_u32(bs);
        (void)as_u; (void)bs_u;
        rd = rd + 1 == STAGES ? 0 : rd + 1;
#pragma unroll
        for (int kk = 0; kk < BK / CG_KSTEP; ++kk) {
            unsigned af[CG_MI][4], bf[CG_NI][2];
#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi) {
                const int ar = warp_m * CG_WM + mi * 16 + (lane & 15);
                const int ac = kk * 2 + (lane >> 4);
                cg_ldsm_x4(af[mi], as_u + cg_chunk_off(ar, ac, A_CPR));
            }
#pragma unroll
            for (int nj = 0; nj < CG_NI / 2; ++nj) {
                unsigned r[4];
                const int br = warp_n * CG_WN + nj * 16 + (lane & 7) + ((lane >> 4) << 3);
                const int bc = kk * 2 + ((lane >> 3) & 1);
                cg_ldsm_x4(r, bs_u + cg_chunk_off(br, bc, B_CPR));
                bf[2 * nj][0] = r[0]; bf[2 * nj][1] = r[1];
                bf[2 * nj + 1][0] = r[2]; bf[2 * nj + 1][1] = r[3];
            }

#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                for (int ni = 0; ni < CG_NI; ++ni) cg_mma(c[mi][ni], af[mi], bf[ni]);
        }
#if CG_PROMOTE
        if ((kt + 1) % CG_PROMOTE == 0 || kt + 1 == ktiles) {
#pragma unroll
            for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
                for (int ni = 0; ni < CG_NI; ++ni)
#pragma unroll
                    for (int q = 0; q < 4; ++q) {
                        cg_sum[mi][ni][q] += c[mi][ni][q];
                        c[mi][ni][q] = 0.0f;
                    }
        }
#endif
    }
    cg_cp_wait<0>();
#if CG_PROMOTE
#pragma unroll
    for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < CG_NI; ++ni)
#pragma unroll
            for (int q = 0; q < 4; ++q) c[mi][ni][q] = cg_sum[mi][ni][q];
#endif

    /* Accumulator fragment: c0,c1 at (groupID, 2*tig + {0,1}), c2,c3 eight rows lower. */
#pragma unroll
    for (int mi = 0; mi < CG_MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < CG_NI; ++ni)
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const int i = m0 + warp_m * CG_WM + mi * 16 + (lane >> 2) + (q >> 1) * 8;
                const int j = n0 + warp_n * CG_WN + ni * 8 + (lane & 3) * 2 + (q & 1);
                if (i < M && j < N) {
                    const float acc = c[mi][ni][q];
                    cg_st_f32(out, (long)(i) * ldo + (j), cg_epilogue(acc, i, j, M, N, p2));
                }
            }
}
