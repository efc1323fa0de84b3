/* crossgemm: cg_f32_tf32_residual_33093ad6 = (acc + residual) (gemv fma, A RowMajor, B RowMajor, out f32 RowMajor) */
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
#define CG_GROUPS (WARPS / KSPLIT)
#define CG_NB (CG_GROUPS * COLS)
typedef float cg_ab_t;
#define CG_VEC (16 / (int)sizeof(cg_ab_t))
#define CG_P 1
#define CG_E (CG_VEC / CG_P)
static_assert(MR >= 1 && MR <= 8, "MR: 1 to 8 rows");
static_assert(WARPS % KSPLIT == 0, "KSPLIT must divide WARPS");
static_assert(CG_NB * MR <= CG_THREADS, "one thread per output of the block");
#ifndef SWAP
#define SWAP 0
#endif
#if SWAP
/* Turned around: C^T = B^T A^T, N <= MR. */
#define CG_R N
#define CG_C M
#define CG_XP p1
#define CG_WP p0
#define CG_LDX ld1
#define CG_LDW ld0
#define CG_X_ROWS 0
#define CG_VEC_OK A_VEC
#define CG_X_ALIGN B_ALIGN
#define CG_IL (MR >= 8 && A_ALIGN % CG_P == 0)
#else
#error "this gemv form streams B, which must be column-major (K-contiguous)"
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

#if !CG_X_ROWS
#if MR >= 8 && 4 >= 8 && CG_X_ALIGN % 8 == 0
#define CG_X_AV 8
#elif MR >= 4 && 4 >= 4 && CG_X_ALIGN % 4 == 0
#define CG_X_AV 4
#elif MR >= 2 && CG_X_ALIGN % 2 == 0
#define CG_X_AV 2
#else
#define CG_X_AV 1
#endif
#define CG_X_AB (CG_X_AV * 4)
/* Where element e of a lane's step lies from its first k: word e / CG_P of the step's
   words s elements apart, element e % CG_P in it. */
#define CG_KE(e, s) (((e) / CG_P) * (s) + (e) % CG_P)
/* The word at p (4-byte aligned). */
static __device__ __forceinline__ unsigned cg_ld4(const cg_ab_t* p) {
    unsigned w;
    asm("ld.global.nc.u32 %0, [%1];" : "=r"(w) : "l"(p));
    return w;
}
/* The CG_P elements of a word, as floats. */
static __device__ __forceinline__ void cg_word_unpack(unsigned w, float* f) {
    f[0] = __uint_as_float(w);
}
/* The CG_X_AV elements of the vector at p (aligned to its size), as floats. */
static __device__ __forceinline__ void cg_x_vec(const cg_ab_t* p, float* f) {
#if CG_X_AB >= 4
#if CG_X_AB == 16
    const cg_u4 v = cg_ld16(p);
    const unsigned w[4] = {v.x, v.y, v.z, v.w};
#elif CG_X_AB == 8
    unsigned w[2];
    asm("ld.global.nc.v2.u32 {%0, %1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "l"(p));
#else
    const unsigned w[1] = {cg_ld4(p)};
#endif
#pragma unroll
    for (int q = 0; q < CG_X_AB / 4; ++q) cg_word_unpack(w[q], f + q * CG_P);
#else
    f[0] = cg_elem(p[0]);
#endif
}
static __device__ __forceinline__ void cg_x_across(const cg_ab_t* gx, long ldx, int k, int s, int full, int K, int R, float a[MR][CG_VEC]) {
    const int last = (R - 1) / CG_X_AV * CG_X_AV;
#pragma unroll
    for (int e = 0; e < CG_VEC; ++e) {
        const int ke = CG_KE(e, s), kk = k + ke;
        /* From k's row, not kk's: with kk's ptxas spilled 4 bytes of the 1-row walk
           (f32, 4 warps, 4 columns, K in 4). */
        const cg_ab_t* row = gx + (long)k * ldx + (long)ke * ldx;
#pragma unroll
        for (int g = 0; g < MR; g += CG_X_AV) {
            float v[CG_X_AV];
            if (full || kk < K) {
                cg_x_vec(row + (g < last ? g : last), v);
            } else {
#pragma unroll
                for (int j = 0; j < CG_X_AV; ++j) v[j] = 0.0f;
            }
#pragma unroll
            for (int j = 0; j < CG_X_AV; ++j) a[g + j][e] = v[j];
        }
    }
}
#endif
/* The elements k + e >= K of a row's CG_VEC from k read as zeros (in X and W alike: what
   lies past K, the rest of a padded row or the next row, may be anything, NaN too). The
   walk calls it on the chunk that crosses K only, so the test of k is always true; but
   without it ptxas, bounded by the threads alone, spilled the whole-chunk walk of
   MR = 1, 4 warps, COLS = 4, KSPLIT = 2 on sm_80 (CI's NVRTC check). */
static __device__ __forceinline__ void cg_mask_k(float* f, int k, int K) {
    if (k + CG_VEC > K) {
#pragma unroll
        for (int e = 0; e < CG_VEC; ++e)
            if (k + e >= K) f[e] = 0.0f;
    }
}
/* X has CG_R <= MR rows, W CG_C columns (its K-contiguous rows); C(i, j) = X(i) . W(j),
   stored at (i, j) of the output, or at (j, i) turned around. */
/* The window walk holds two chunks a row in flight: with the threads alone as its bound,
   ptxas capped it at 80 registers and spilled (MR = 8 turned around, f32); unbounded it
   takes up to ~160 and no spill. The whole-chunk walk keeps ptxas's own choice, but at
   MR = 8 (f32: 72 registers and a spill once the walk had its own tail step), where it
   may take 128. */
#if !CG_VEC_OK
#define CG_BOUNDS __launch_bounds__(CG_THREADS, 1)
#elif MR >= 8
#define CG_BOUNDS __launch_bounds__(CG_THREADS, 512 / CG_THREADS)
#else
#define CG_BOUNDS __launch_bounds__(CG_THREADS)
#endif
extern "C" __global__ void CG_BOUNDS cg_f32_tf32_residual_33093ad6(int M, int N, int K, float* __restrict__ out, const float* __restrict__ p0, const float* __restrict__ p1, const float* __restrict__ p2, int ldo, long offo, int ld0, long off0, int ld1, long off1, int ld2, long off2, long bso, long bs0, long bs1, long bs2, int nbatch) {
    __shared__ float cg_red[WARPS][MR][COLS];
    const long cg_bz = (long)blockIdx.z; out += offo + cg_bz * bso; p0 += off0 + cg_bz * bs0; p1 += off1 + cg_bz * bs1; p2 += off2 + cg_bz * bs2;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int group = warp / KSPLIT, part = warp % KSPLIT;
    const int n0 = blockIdx.x * CG_NB + group * COLS;
    const cg_ab_t* __restrict__ gx = CG_XP;
    const cg_ab_t* __restrict__ gw = CG_WP;
    (void)gx; (void)gw;
    float acc[MR][COLS];
#pragma unroll
    for (int i = 0; i < MR; ++i)
#pragma unroll
        for (int c = 0; c < COLS; ++c) acc[i][c] = 0.0f;

    /* Rows past CG_R and columns past CG_C read the last one instead (always in bounds,
       M, N >= 1 at launch): no predicate keeps the loads apart, and those sums are never
       stored. Every column's chunk is in flight before the first multiply. */
#if CG_IL
    {
        /* X stored across, W's rows on 4-byte boundaries: a step's k's interleaved over
           the lanes by words. */
        int kb = part * (32 * CG_VEC);
#pragma unroll 2
        for (; kb <= K - 32 * CG_VEC; kb += KSPLIT * 32 * CG_VEC) {
            const int kl = kb + lane * CG_P;
            float a[MR][CG_VEC];
            cg_x_across(gx, CG_LDX, kl, 32 * CG_P, 1, K, CG_R, a);
            unsigned braw[COLS][CG_E];
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
                const int n = n0 + c < CG_C ? n0 + c : CG_C - 1;
                const cg_ab_t* wr = gw + (long)n * CG_LDW + kl;
#pragma unroll
                for (int q = 0; q < CG_E; ++q)
                    braw[c][q] = 1 || kl + q * 32 * CG_P < K ? cg_ld4(wr + q * 32 * CG_P) : 0u;
            }
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
                float b[CG_VEC];
#pragma unroll
                for (int q = 0; q < CG_E; ++q) cg_word_unpack(braw[c][q], b + q * CG_P);
                if (!1) {
#pragma unroll
                    for (int e = 0; e < CG_VEC; ++e)
                        if (kl + CG_KE(e, 32 * CG_P) >= K) b[e] = 0.0f;
                }
#pragma unroll
                for (int i = 0; i < MR; ++i)
#pragma unroll
                    for (int e = 0; e < CG_VEC; ++e) acc[i][c] = fmaf(a[i][e], b[e], acc[i][c]);
            }
        }
        if (kb < K) {
            const int kl = kb + lane * CG_P;
            float a[MR][CG_VEC];
            cg_x_across(gx, CG_LDX, kl, 32 * CG_P, 0, K, CG_R, a);
            unsigned braw[COLS][CG_E];
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
                const int n = n0 + c < CG_C ? n0 + c : CG_C - 1;
                const cg_ab_t* wr = gw + (long)n * CG_LDW + kl;
#pragma unroll
                for (int q = 0; q < CG_E; ++q)
                    braw[c][q] = 0 || kl + q * 32 * CG_P < K ? cg_ld4(wr + q * 32 * CG_P) : 0u;
            }
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
                float b[CG_VEC];
#pragma unroll
                for (int q = 0; q < CG_E; ++q) cg_word_unpack(braw[c][q], b + q * CG_P);
                if (!0) {
#pragma unroll
                    for (int e = 0; e < CG_VEC; ++e)
                        if (kl + CG_KE(e, 32 * CG_P) >= K) b[e] = 0.0f;
                }
#pragma unroll
                for (int i = 0; i < MR; ++i)
#pragma unroll
                    for (int e = 0; e < CG_VEC; ++e) acc[i][c] = fmaf(a[i][e], b[e], acc[i][c]);
            }
        }
    }
#else
    if (CG_VEC_OK) {
        /* Every row of X and W starts on a 16-byte boundary: whole chunks (the one that
           crosses K masked). */
        int k = (part * 32 + lane) * CG_VEC;
#pragma unroll 2
        for (; k < K - (CG_VEC - 1); k += KSPLIT * 32 * CG_VEC) {
            float a[MR][CG_VEC];
#if CG_X_ROWS
#pragma unroll
            for (int d = 0; d < MR; ++d) {
                const int i = d < CG_R ? d : CG_R - 1;
                CG_LOAD_X_VEC(i, k, a[d]);
            }
#else
            cg_x_across(gx, CG_LDX, k, CG_P, 1, K, CG_R, a);
#endif
            cg_u4 braw[COLS];
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
                const int n = n0 + c < CG_C ? n0 + c : CG_C - 1;
                (void)n;
                braw[c] = cg_ld16(gw + (long)n * CG_LDW + k);
            }
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
                const int n = n0 + c < CG_C ? n0 + c : CG_C - 1;
                (void)n;
                float b[CG_VEC];
                cg_unpack(braw[c], b);
#pragma unroll
                for (int i = 0; i < MR; ++i)
#pragma unroll
                    for (int e = 0; e < CG_VEC; ++e) acc[i][c] = fmaf(a[i][e], b[e], acc[i][c]);
            }
        }
        if (k < K) {
            float a[MR][CG_VEC];
#if CG_X_ROWS
#pragma unroll
            for (int d = 0; d < MR; ++d) {
                const int i = d < CG_R ? d : CG_R - 1;
                CG_LOAD_X_VEC(i, k, a[d]); cg_mask_k(a[d], k, K);
            }
#else
            cg_x_across(gx, CG_LDX, k, CG_P, 0, K, CG_R, a);
#endif
            cg_u4 braw[COLS];
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
                const int n = n0 + c < CG_C ? n0 + c : CG_C - 1;
                (void)n;
                braw[c] = cg_ld16(gw + (long)n * CG_LDW + k);
            }
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
                const int n = n0 + c < CG_C ? n0 + c : CG_C - 1;
                (void)n;
                float b[CG_VEC];
                cg_unpack(braw[c], b); cg_mask_k(b, k, K);
#pragma unroll
                for (int i = 0; i < MR; ++i)
#pragma unroll
                    for (int e = 0; e < CG_VEC; ++e) acc[i][c] = fmaf(a[i][e], b[e], acc[i][c]);
            }
        }
    } else {
        /* Rows at any element alignment: each lane's CG_VEC elements of a row from the
           one or two aligned chunks that hold them (`cg_win`). Not unrolled: twice the
           chunks a step already, and unrolled ptxas took 102 registers for MR = 1,
           COLS = 4 (63 not) and spilled at MR = 4, COLS = 2, KSPLIT = 2. */
        cg_row wrow[COLS];
#pragma unroll
        for (int c = 0; c < COLS; ++c) wrow[c] = cg_row_at(gw + (long)(n0 + c < CG_C ? n0 + c : CG_C - 1) * CG_LDW);
#if CG_X_ROWS
        cg_row xrow[MR];
#pragma unroll
        for (int d = 0; d < MR; ++d) xrow[d] = cg_row_at(gx + (long)(d < CG_R ? d : CG_R - 1) * CG_LDX);
#endif
        int k = (part * 32 + lane) * CG_VEC;
#pragma unroll 1
        for (; k < K - (CG_VEC - 1); k += KSPLIT * 32 * CG_VEC) {
            float a[MR][CG_VEC];
#if CG_X_ROWS
#pragma unroll
            for (int d = 0; d < MR; ++d) {
                const int i = d < CG_R ? d : CG_R - 1;
                CG_LOAD_X_WIN(d, i, k, CG_VEC, a[d]);
            }
#else
            cg_x_across(gx, CG_LDX, k, CG_P, 1, K, CG_R, a);
#endif
            cg_win braw[COLS];
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
                const int n = n0 + c < CG_C ? n0 + c : CG_C - 1;
                (void)n;
                braw[c] = cg_row_win(wrow[c], k, CG_VEC);
            }
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
                const int n = n0 + c < CG_C ? n0 + c : CG_C - 1;
                (void)n;
                float b[CG_VEC];
                cg_win_unpack(braw[c], b);
#pragma unroll
                for (int i = 0; i < MR; ++i)
#pragma unroll
                    for (int e = 0; e < CG_VEC; ++e) acc[i][c] = fmaf(a[i][e], b[e], acc[i][c]);
            }
        }
        if (k < K) {
            float a[MR][CG_VEC];
#if CG_X_ROWS
#pragma unroll
            for (int d = 0; d < MR; ++d) {
                const int i = d < CG_R ? d : CG_R - 1;
                CG_LOAD_X_WIN(d, i, k, K - k, a[d]); cg_mask_k(a[d], k, K);
            }
#else
            cg_x_across(gx, CG_LDX, k, CG_P, 0, K, CG_R, a);
#endif
            cg_win braw[COLS];
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
                const int n = n0 + c < CG_C ? n0 + c : CG_C - 1;
                (void)n;
                braw[c] = cg_row_win(wrow[c], k, K - k);
            }
#pragma unroll
            for (int c = 0; c < COLS; ++c) {
                const int n = n0 + c < CG_C ? n0 + c : CG_C - 1;
                (void)n;
                float b[CG_VEC];
                cg_win_unpack(braw[c], b); cg_mask_k(b, k, K);
#pragma unroll
                for (int i = 0; i < MR; ++i)
#pragma unroll
                    for (int e = 0; e < CG_VEC; ++e) acc[i][c] = fmaf(a[i][e], b[e], acc[i][c]);
            }
        }
    }
#endif

    /* Lanes of a warp, then the KSPLIT warps of a group in part order. */
#pragma unroll
    for (int i = 0; i < MR; ++i)
#pragma unroll
        for (int c = 0; c < COLS; ++c) {
            float v = acc[i][c];
#pragma unroll
            for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
            if (lane == 0) cg_red[warp][i][c] = v;
        }
    __syncthreads();
    if (tid < CG_NB * MR) {
        const int i = tid / CG_NB, cc = tid % CG_NB, g = cc / COLS, c = cc % COLS;
        const int j = blockIdx.x * CG_NB + cc;
        if (i < CG_R && j < CG_C) {
            float acc = 0.0f;
#pragma unroll
            for (int p = 0; p < KSPLIT; ++p) acc += cg_red[g * KSPLIT + p][i][c];
#if SWAP
            const int ci = j, cj = i;
#else
            const int ci = i, cj = j;
#endif
            cg_st_f32(out, (long)(ci) * ldo + (cj), cg_epilogue(acc, ci, cj, M, N, p2, ld2));
        }
    }
}
