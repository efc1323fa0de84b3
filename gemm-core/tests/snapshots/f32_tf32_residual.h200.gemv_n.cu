/* crossgemm: cg_f32_tf32_residual_33093ad6 = (acc + residual) (gemv_n fma, A RowMajor, B RowMajor, out f32 RowMajor) */
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
static __device__ __forceinline__ float cg_epilogue(float acc, int i, int j, int M, int N, const float* p2, int ld2) {
    (void)i; (void)j; (void)M; (void)N;
    const float v2 = cg_ld_f32(p2, (long)i * ld2 + j);
    return (acc + v2);
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

#define CG_THREADS (WARPS * 32)
typedef float cg_ab_t;
#define CG_VEC (16 / (int)sizeof(cg_ab_t))
#define CG_NB (CHUNKS * CG_VEC)
#define CG_KL (CG_THREADS / CHUNKS)
static_assert(MR >= 1 && MR <= 8, "MR: 1 to 8 rows");
static_assert(CHUNKS >= 1 && CHUNKS <= 32 && (CHUNKS & (CHUNKS - 1)) == 0, "CHUNKS: a power of two up to 32");
#ifndef KSPLIT
#define KSPLIT 1
#endif
static_assert(KSPLIT >= 1 && KSPLIT <= 32, "KSPLIT: 1 to 32 blocks along K");
#if KSPLIT > 1
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
static __device__ __forceinline__ bool cg_block_last_to_arrive(unsigned* flag, bool leader) {
    __shared__ unsigned cg_last;
    __threadfence();
    __syncthreads();
    if (leader) cg_last = cg_arrive_last(flag, KSPLIT);
    __syncthreads();
    if (!cg_last) return false;
    __threadfence();
    return true;
}
#endif
#ifndef SWAP
#define SWAP 0
#endif
#if SWAP
/* Turned around: C^T = B^T A^T, N <= MR. */
#error "this gemv_n form streams A, which must be column-major (M-contiguous)"
#else
#define CG_R M
#define CG_C N
#define CG_XP p0
#define CG_WP p1
#define CG_LDX ld0
#define CG_LDW ld1
#define CG_X_ROWS 1
#define CG_X_VEC A_VEC
#define CG_W_VEC B_VEC
#define CG_X(i, k) cg_elem(gx[(long)(i) * CG_LDX + (k)])
#define CG_LOAD_X_STEP(i, k, dst) if (CG_X_VEC) { cg_unpack(cg_ld16(gx + (long)(i) * CG_LDX + (k)), dst); } else { for (int e = 0; e < CG_VEC; ++e) dst[e] = CG_X(i, (k) + e); }
#endif

/* By whole words through selects (no indexing, which would put the words in local
   memory), then by the rest through funnel shifts. */
static __device__ __forceinline__ cg_u4 cg_shift_down(const cg_u4& lo, const cg_u4& hi, unsigned off) {
    unsigned x0 = lo.x, x1 = lo.y, x2 = lo.z, x3 = lo.w, x4 = hi.x, x5 = hi.y, x6 = hi.z, x7 = hi.w;
    if (off & 8u) { x0 = x2; x1 = x3; x2 = x4; x3 = x5; x4 = x6; x5 = x7; }
    if (off & 4u) { x0 = x1; x1 = x2; x2 = x3; x3 = x4; x4 = x5; }
    const unsigned sh = (off & 3u) * 8u;
    return cg_u4{__funnelshift_r(x0, x1, sh), __funnelshift_r(x1, x2, sh), __funnelshift_r(x2, x3, sh), __funnelshift_r(x3, x4, sh)};
}
static __device__ __forceinline__ float cg_elem(cg_ab_t x) { return x; }
/* One 16-byte chunk through the read-only path (B and A are never written here). Not
   volatile: the compiler may hoist the next iteration's loads above this one's math. */
static __device__ __forceinline__ cg_u4 cg_ld16(const cg_ab_t* p) {
    cg_u4 v;
    asm("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
/* The CG_VEC elements of one 16-byte chunk, as floats. */
static __device__ __forceinline__ void cg_unpack(const cg_u4& v, float* f) {
    f[0] = __uint_as_float(v.x); f[1] = __uint_as_float(v.y); f[2] = __uint_as_float(v.z); f[3] = __uint_as_float(v.w);
}
/* CG_VEC consecutive elements of a row from p, where p may lie at any element of a
   16-byte chunk (a pitch, view offset or batch stride that is not a multiple of CG_VEC):
   the aligned chunk holding p and, where the window reaches one of the row's elements
   into it (`left`: the row's elements from p on), the next one; `off` bytes of p into
   the first. No byte outside the chunks holding elements of the row is read. */
struct cg_win {
    cg_u4 lo, hi;
    unsigned off;
};
/* Where a row's windows come from: the aligned chunk at or below its start p and the
   bytes p lies into it. A walk whose k steps by whole chunks reads every window of the
   row from it (cg_row_win), without taking p apart again each step. */
struct cg_row {
    const cg_ab_t* c;
    unsigned off;
};
static __device__ __forceinline__ cg_row cg_row_at(const cg_ab_t* p) {
    const unsigned off = (unsigned)(unsigned long long)p & 15u;
    return cg_row{p - off / (unsigned)sizeof(cg_ab_t), off};
}
/* The window of the row's elements from k (a multiple of CG_VEC), `left` of them from k on. */
static __device__ __forceinline__ cg_win cg_row_win(const cg_row& r, int k, int left) {
    cg_win w;
    w.off = r.off;
    w.lo = cg_ld16(r.c + k);
    const int valid = left < CG_VEC ? left : CG_VEC;
    w.hi = r.off + valid * (unsigned)sizeof(cg_ab_t) > 16u ? cg_ld16(r.c + k + CG_VEC) : cg_u4{0u, 0u, 0u, 0u};
    return w;
}
static __device__ __forceinline__ cg_win cg_win_load(const cg_ab_t* p, int left) {
    return cg_row_win(cg_row_at(p), 0, left);
}
/* A window's elements as floats. */
static __device__ __forceinline__ void cg_win_unpack(const cg_win& w, float* f) {
    cg_unpack(cg_shift_down(w.lo, w.hi, w.off), f);
}

/* X has CG_R <= MR rows, W CG_C columns (N-contiguous rows of K); C(i, j) = X(i) . W(:, j),
   stored at (i, j) of the output, or at (j, i) turned around. */
/* One block per SM is all the bound asks: at 8 blocks ptxas spills MR = 1 at 32 registers. */
extern "C" __global__ void __launch_bounds__(CG_THREADS, 1) cg_f32_tf32_residual_33093ad6(
#if KSPLIT > 1
    float* __restrict__ cg_ws, unsigned* __restrict__ cg_flags,
#endif
    int M, int N, int K, float* __restrict__ out, const float* __restrict__ p0, const float* __restrict__ p1, const float* __restrict__ p2, int ldo, long offo, int ld0, long off0, int ld1, long off1, int ld2, long off2, long bso, long bs0, long bs1, long bs2, int nbatch) {
    __shared__ float cg_red[WARPS][CHUNKS][MR][CG_VEC];
    const long cg_bz = (long)blockIdx.z; out += offo + cg_bz * bso; p0 += off0 + cg_bz * bs0; p1 += off1 + cg_bz * bs1; p2 += off2 + cg_bz * bs2;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int chunk = lane % CHUNKS;
    const int kl = warp * (32 / CHUNKS) + lane / CHUNKS;
    const int j0 = blockIdx.x * CG_NB + chunk * CG_VEC;
    /* This block's rows of K, [kb, ke): split blockIdx.y of KSPLIT, in whole steps but
       the last (so that X's chunks stay 16-byte aligned). */
    const int steps = (K + CG_VEC - 1) / CG_VEC;
    const int kb = (int)((long long)blockIdx.y * steps / KSPLIT) * CG_VEC;
    const int ke = min(K, (int)((long long)(blockIdx.y + 1) * steps / KSPLIT) * CG_VEC);
    const cg_ab_t* __restrict__ gx = CG_XP;
    const cg_ab_t* __restrict__ gw = CG_WP;
    (void)gx; (void)gw;
    float acc[MR][CG_VEC];
#pragma unroll
    for (int i = 0; i < MR; ++i)
#pragma unroll
        for (int c = 0; c < CG_VEC; ++c) acc[i][c] = 0.0f;

    if (CG_W_VEC && j0 + CG_VEC <= CG_C) {
        /* A whole 16-byte chunk of each row of W. */
        /* Rows of X past CG_R read the last one (always in bounds, M, N >= 1 at launch):
           those sums are never stored. */
        int k = kb + kl * CG_VEC;
        /* A step's CG_VEC chunks are enough in flight; unrolled further, MR = 1 spills. */
#pragma unroll 1
        for (; k + CG_VEC <= ke; k += CG_KL * CG_VEC) {
            cg_u4 w[CG_VEC];
#pragma unroll
            for (int e = 0; e < CG_VEC; ++e) {
                const int kk = k + e;
                w[e] = cg_ld16(gw + (long)(kk) * CG_LDW + j0);
            }
            float x[MR][CG_VEC];
#pragma unroll
            for (int d = 0; d < MR; ++d) {
                const int i = d < CG_R ? d : CG_R - 1;
                CG_LOAD_X_STEP(i, k, x[d]);
            }
#pragma unroll
            for (int e = 0; e < CG_VEC; ++e) {
                float b[CG_VEC];
                cg_unpack(w[e], b);
#pragma unroll
                for (int i = 0; i < MR; ++i)
#pragma unroll
                    for (int c = 0; c < CG_VEC; ++c) acc[i][c] = fmaf(x[i][e], b[c], acc[i][c]);
            }
        }
        /* K's last rows, fewer than a step (one lane of the block has them). */
        for (int t = 0; k + t < ke && t < CG_VEC; ++t) {
            const int kk = k + t, e = 0;
            float b[CG_VEC];
            cg_unpack(cg_ld16(gw + (long)(kk) * CG_LDW + j0), b);
            float x[MR][1];
#pragma unroll
            for (int i = 0; i < MR; ++i) x[i][0] = i < CG_R ? CG_X(i, kk) : 0.0f;
#pragma unroll
            for (int i = 0; i < MR; ++i)
#pragma unroll
                for (int c = 0; c < CG_VEC; ++c) acc[i][c] = fmaf(x[i][e], b[c], acc[i][c]);
        }
    } else if (j0 < CG_C) {
        /* Rows of W that do not all start on 16-byte boundaries (an odd N, a view of odd
           pitch), or the last chunk, which crosses CG_C: the same walk, each row's
           CG_VEC columns from j0 a window over the aligned chunks that hold them
           (cg_win; the columns past CG_C read what lies there, and their sums are never
           stored). Once element by element: eight 2-byte loads a row's chunk. */
        /* Rows of X past CG_R read the last one (always in bounds, M, N >= 1 at launch):
           those sums are never stored. */
        int k = kb + kl * CG_VEC;
        /* A step's CG_VEC chunks are enough in flight; unrolled further, MR = 1 spills. */
#pragma unroll 1
        for (; k + CG_VEC <= ke; k += CG_KL * CG_VEC) {
            cg_win w[CG_VEC];
#pragma unroll
            for (int e = 0; e < CG_VEC; ++e) {
                const int kk = k + e;
                w[e] = cg_win_load(gw + (long)(kk) * CG_LDW + j0, CG_C - j0);
            }
            float x[MR][CG_VEC];
#pragma unroll
            for (int d = 0; d < MR; ++d) {
                const int i = d < CG_R ? d : CG_R - 1;
                CG_LOAD_X_STEP(i, k, x[d]);
            }
#pragma unroll
            for (int e = 0; e < CG_VEC; ++e) {
                float b[CG_VEC];
                cg_win_unpack(w[e], b);
#pragma unroll
                for (int i = 0; i < MR; ++i)
#pragma unroll
                    for (int c = 0; c < CG_VEC; ++c) acc[i][c] = fmaf(x[i][e], b[c], acc[i][c]);
            }
        }
        /* K's last rows, fewer than a step (one lane of the block has them). */
        for (int t = 0; k + t < ke && t < CG_VEC; ++t) {
            const int kk = k + t, e = 0;
            float b[CG_VEC];
            cg_win_unpack(cg_win_load(gw + (long)(kk) * CG_LDW + j0, CG_C - j0), b);
            float x[MR][1];
#pragma unroll
            for (int i = 0; i < MR; ++i) x[i][0] = i < CG_R ? CG_X(i, kk) : 0.0f;
#pragma unroll
            for (int i = 0; i < MR; ++i)
#pragma unroll
                for (int c = 0; c < CG_VEC; ++c) acc[i][c] = fmaf(x[i][e], b[c], acc[i][c]);
        }
    }

    /* The K-lanes of a chunk within the warp, then the warps in order. */
#pragma unroll
    for (int i = 0; i < MR; ++i)
#pragma unroll
        for (int c = 0; c < CG_VEC; ++c) {
            float v = acc[i][c];
#pragma unroll
            for (int off = 16; off >= CHUNKS; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
            if (lane < CHUNKS) cg_red[warp][lane][i][c] = v;
        }
    __syncthreads();
#define CG_TR MR
#define CG_RED(w, i, jj) cg_red[w][(jj) / CG_VEC][i][(jj) % CG_VEC]
#if KSPLIT > 1
    const long cg_strip = (long)blockIdx.z * gridDim.x + blockIdx.x;
    float* const cg_slots = cg_ws + cg_strip * (KSPLIT * CG_TR * CG_NB);
    for (int o = tid; o < CG_TR * CG_NB; o += CG_THREADS) {
        float v = 0.0f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) v += CG_RED(w, o / CG_NB, o % CG_NB);
        CG_STCG(cg_slots + blockIdx.y * (CG_TR * CG_NB) + o, v);
    }
    if (!cg_block_last_to_arrive(cg_flags + cg_strip, tid == 0)) return;
#endif
    for (int o = tid; o < CG_TR * CG_NB; o += CG_THREADS) {
        const int i = o / CG_NB, jj = o % CG_NB;
        const int j = blockIdx.x * CG_NB + jj;
        if (i < CG_R && j < CG_C) {
            float sum = 0.0f;
#if KSPLIT > 1
            for (int s = 0; s < KSPLIT; ++s) {
                float v;
                CG_LDCG(cg_slots + s * (CG_TR * CG_NB) + o, v);
                sum += v;
            }
#else
#pragma unroll
            for (int w = 0; w < WARPS; ++w) sum += CG_RED(w, i, jj);
#endif
#if SWAP
            const int ci = j, cj = i;
#else
            const int ci = i, cj = j;
#endif
            cg_st_f32(out, (long)(ci) * ldo + (cj), cg_epilogue(sum, ci, cj, M, N, p2, ld2));
        }
    }
}
