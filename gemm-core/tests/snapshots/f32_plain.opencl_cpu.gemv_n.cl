/* crossgemm kernel `f32_plain`: out = acc (OpenCL C 1.2, gemv_n) */
static inline float cg_bf16_to_f32(ushort h) { return as_float(((uint)h) << 16); }
static inline ushort cg_f32_to_bf16(float f) {
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even */
    return (ushort)(u >> 16);
}
#define CG_EXP exp
#define CG_TANH tanh
#define CG_ERF erf
#define CG_FMAX fmax
#define CG_FMIN fmin
#define CG_FABS fabs
static inline float cg_ld_f32(const __global float* p, long i) { return p[i]; }
static inline void cg_st_f32(__global float* p, long i, float v) { p[i] = v; }
static inline float cg_ld_f16(const __global ushort* p, long i) { return vload_half(i, (const __global half*)p); }
static inline void cg_st_f16(__global ushort* p, long i, float v) { vstore_half_rte(v, i, (__global half*)p); }
static inline float cg_ld_bf16(const __global ushort* p, long i) { return cg_bf16_to_f32(p[i]); }
static inline void cg_st_bf16(__global ushort* p, long i, float v) { p[i] = cg_f32_to_bf16(v); }
static inline float cg_relu(float x) { return CG_FMAX(x, 0.0f); }
static inline float cg_gelu(float x) { return 0.5f * x * (1.0f + CG_TANH(0.7978845608f * (x + 0.044715f * x * x * x))); }
static inline float cg_gelu_erf(float x) { return 0.5f * x * (1.0f + CG_ERF(x * 0.7071067812f)); }
static inline float cg_sigmoid(float x) { return 1.0f / (1.0f + CG_EXP(-x)); }
static inline float cg_silu(float x) { return x / (1.0f + CG_EXP(-x)); }
static inline float cg_tanh(float x) { return CG_TANH(x); }
static inline float cg_exp(float x) { return CG_EXP(x); }
static inline float cg_abs(float x) { return CG_FABS(x); }
static inline float cg_min(float a, float b) { return CG_FMIN(a, b); }
static inline float cg_max(float a, float b) { return CG_FMAX(a, b); }
static inline float cg_clamp(float x, float lo, float hi) { return CG_FMIN(CG_FMAX(x, lo), hi); }
static inline float cg_leaky_relu(float x, float s) { return x > 0.0f ? x : s * x; }
static inline float cg_epilogue(float acc, int i, int j, int M, int N) {
    (void)i; (void)j; (void)M; (void)N;
    return acc;
}

#ifndef MR
#error "gemv_n parameters MR WARPS CHUNKS must be defined (-D) at compile time"
#endif
#ifndef A_VEC
#define A_VEC 0
#endif
#ifndef B_VEC
#define B_VEC 0
#endif
#define CG_THREADS (WARPS * 32)
#define CG_VEC 4
#define CG_NB (CHUNKS * CG_VEC)
#define CG_KL (CG_THREADS / CHUNKS)
#ifndef KSPLIT
#define KSPLIT 1
#endif
#if MR < 1 || MR > 8 || CHUNKS < 1 || CHUNKS > 32 || (CHUNKS & (CHUNKS - 1)) != 0 || KSPLIT < 1 || KSPLIT > 32
#error "MR: 1 to 8 rows; CHUNKS: a power of two up to 32; KSPLIT: 1 to 32 work-groups along K"
#endif
#define CG_TR MR
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
#define CG_X(i, k) cg_ld_f32(gx, (long)(i) * CG_LDX + (k))
#define CG_LOAD_X_STEP(i, k, dst) if (CG_X_VEC) { cg_chunk(gx, (long)(i) * CG_LDX + (k), dst); } else { for (int e = 0; e < CG_VEC; ++e) dst[e] = CG_X(i, (k) + e); }
#endif

/* The CG_VEC elements of a 16-byte chunk in registers, as floats. */
static inline void cg_unpack4(uint4 w, float* out) {
    vstore4(as_float4(w), 0, out);
}
/* CG_VEC consecutive elements from p + i (16 bytes, 16-byte aligned), as floats. */
static inline void cg_chunk(const __global float* p, long i, float* out) {
    cg_unpack4(*(const __global uint4*)(p + i), out);
}
/* CG_VEC consecutive elements of a row from p, where p may lie at any element of a
   16-byte chunk: the aligned chunk holding p and, where the window reaches one of the
   row's elements into it (`left`: the row's elements from p on), the next one; `off`
   bytes of p into the first. No byte outside the chunks holding elements of the row is
   read. */
typedef struct {
    uint4 lo, hi;
    uint off;
} cg_win;
/* Where a row's windows come from: the aligned chunk at or below its start p and the
   bytes p lies into it (a walk along the row takes p apart once). */
typedef struct {
    const __global float* c;
    uint off;
} cg_row;
static inline cg_row cg_row_at(const __global float* p) {
    cg_row r;
    r.off = (uint)((ulong)p & 15);
    r.c = p - r.off / sizeof(float);
    return r;
}
/* The window of the row's elements from k (a multiple of CG_VEC), `left` of them from k on. */
static inline cg_win cg_row_win(cg_row r, int k, int left) {
    cg_win w;
    w.off = r.off;
    const __global uint4* c = (const __global uint4*)(r.c + k);
    w.lo = c[0];
    const int valid = left < CG_VEC ? left : CG_VEC;
    w.hi = r.off + valid * sizeof(float) > 16 ? c[1] : (uint4)(0u);
    return w;
}
static inline cg_win cg_win_load(const __global float* p, int left) {
    return cg_row_win(cg_row_at(p), 0, left);
}
static inline uint cg_fsr(uint lo, uint hi, uint sh) {
    return sh ? (lo >> sh) | (hi << (32u - sh)) : lo;
}
/* A window's elements as floats: its two chunks shifted down by `off` bytes, by whole
   words through selects, then by the rest. */
static inline void cg_win_unpack(cg_win w, float* out) {
    uint x0 = w.lo.x, x1 = w.lo.y, x2 = w.lo.z, x3 = w.lo.w, x4 = w.hi.x, x5 = w.hi.y, x6 = w.hi.z, x7 = w.hi.w;
    if (w.off & 8u) { x0 = x2; x1 = x3; x2 = x4; x3 = x5; x4 = x6; x5 = x7; }
    if (w.off & 4u) { x0 = x1; x1 = x2; x2 = x3; x3 = x4; x4 = x5; }
    const uint sh = (w.off & 3u) * 8u;
    cg_unpack4((uint4)(cg_fsr(x0, x1, sh), cg_fsr(x1, x2, sh), cg_fsr(x2, x3, sh), cg_fsr(x3, x4, sh)), out);
}

__kernel __attribute__((reqd_work_group_size(CG_THREADS, 1, 1)))
void cg_f32_plain_91b242b7(
#if KSPLIT > 1
    __global float* cg_ws, __global uint* cg_flags,
#endif
    int M, int N, int K, __global float* restrict out, const __global float* restrict p0, const __global float* restrict p1, int ldo, long offo, int ld0, long off0, int ld1, long off1, long bso, long bs0, long bs1, int nbatch)
{
    __local float cg_red[CG_THREADS][CG_VEC];
#if KSPLIT > 1
    const long cg_tile = (long)get_group_id(2) * get_num_groups(0) + get_group_id(0);
    __global float* const cg_slots = cg_ws + cg_tile * (KSPLIT * CG_TR * CG_NB);
#define CG_SLOT(i, jj) cg_slots[get_group_id(1) * (CG_TR * CG_NB) + (i) * CG_NB + (jj)]
#endif
    const long cg_bz = (long)get_group_id(2); out += offo + cg_bz * bso; p0 += off0 + cg_bz * bs0; p1 += off1 + cg_bz * bs1;
    const int tid = get_local_id(0);
    const int chunk = tid % CHUNKS, kl = tid / CHUNKS;
    const int j0 = get_group_id(0) * CG_NB + chunk * CG_VEC;
    /* This work-group's rows of K, [kb, ke): split get_group_id(1) of KSPLIT, in whole
       steps but the last (so that X's chunks stay 16-byte aligned). */
    const int steps = (K + CG_VEC - 1) / CG_VEC;
    const int kb = (int)((long)get_group_id(1) * steps / KSPLIT) * CG_VEC;
    const int ke = min(K, (int)((long)(get_group_id(1) + 1) * steps / KSPLIT) * CG_VEC);
    const __global float* gx = CG_XP;
    const __global float* gw = CG_WP;
    float acc[MR][CG_VEC];
    for (int i = 0; i < MR; ++i)
        for (int c = 0; c < CG_VEC; ++c) acc[i][c] = 0.0f;

    if (CG_W_VEC && j0 + CG_VEC <= CG_C) {
        /* Whole chunks of W's rows. */
        int k = kb + kl * CG_VEC;
        for (; k + CG_VEC <= ke; k += CG_KL * CG_VEC) {
            float x[MR][CG_VEC];
            for (int d = 0; d < MR; ++d) {
                const int i = d < CG_R ? d : CG_R - 1;
                CG_LOAD_X_STEP(i, k, x[d]);
            }
            for (int e = 0; e < CG_VEC; ++e) {
                const int kk = k + e;
                float b[CG_VEC];
                cg_chunk(gw, (long)kk * CG_LDW + j0, b);
                for (int i = 0; i < MR; ++i)
                    for (int c = 0; c < CG_VEC; ++c) acc[i][c] = fma(x[i][e], b[c], acc[i][c]);
            }
        }
        /* K's last rows, fewer than a step. */
        for (int t = 0; k + t < ke && t < CG_VEC; ++t) {
            const int kk = k + t, e = 0;
            float x[MR][1];
            for (int i = 0; i < MR; ++i) x[i][0] = i < CG_R ? CG_X(i, kk) : 0.0f;
            float b[CG_VEC];
            cg_chunk(gw, (long)kk * CG_LDW + j0, b);
            for (int i = 0; i < MR; ++i)
                for (int c = 0; c < CG_VEC; ++c) acc[i][c] = fma(x[i][e], b[c], acc[i][c]);
        }
    } else if (j0 < CG_C) {
        /* Rows of W that do not all start on 16-byte boundaries, or the last chunk, which
           crosses CG_C: each row's CG_VEC columns from j0 a window over the aligned
           chunks that hold them (the columns past CG_C read what lies there, and their
           sums are never stored). */
        int k = kb + kl * CG_VEC;
        for (; k + CG_VEC <= ke; k += CG_KL * CG_VEC) {
            float x[MR][CG_VEC];
            for (int d = 0; d < MR; ++d) {
                const int i = d < CG_R ? d : CG_R - 1;
                CG_LOAD_X_STEP(i, k, x[d]);
            }
            for (int e = 0; e < CG_VEC; ++e) {
                const int kk = k + e;
                float b[CG_VEC];
                cg_win_unpack(cg_win_load(gw + (long)kk * CG_LDW + j0, CG_C - j0), b);
                for (int i = 0; i < MR; ++i)
                    for (int c = 0; c < CG_VEC; ++c) acc[i][c] = fma(x[i][e], b[c], acc[i][c]);
            }
        }
        /* K's last rows, fewer than a step. */
        for (int t = 0; k + t < ke && t < CG_VEC; ++t) {
            const int kk = k + t, e = 0;
            float x[MR][1];
            for (int i = 0; i < MR; ++i) x[i][0] = i < CG_R ? CG_X(i, kk) : 0.0f;
            float b[CG_VEC];
            cg_win_unpack(cg_win_load(gw + (long)kk * CG_LDW + j0, CG_C - j0), b);
            for (int i = 0; i < MR; ++i)
                for (int c = 0; c < CG_VEC; ++c) acc[i][c] = fma(x[i][e], b[c], acc[i][c]);
        }
    }

    /* One row at a time: every work-item's partials, then per output its chunk's K-lanes
       in work-item order, stored (with KSPLIT > 1: left in this split's slot). */
    for (int i = 0; i < MR; ++i) {
        for (int c = 0; c < CG_VEC; ++c) cg_red[tid][c] = acc[i][c];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int jj = tid; jj < CG_NB; jj += CG_THREADS) {
            float sum = 0.0f;
            for (int t = jj / CG_VEC; t < CG_THREADS; t += CHUNKS) sum += cg_red[t][jj % CG_VEC];
#if KSPLIT > 1
            CG_SLOT(i, jj) = sum;
#else
            const int j = get_group_id(0) * CG_NB + jj;
            if (i < CG_R && j < CG_C) {
#if SWAP
            const int ci = j, cj = i;
#else
            const int ci = i, cj = j;
#endif
                cg_st_f32(out, (long)(ci) * ldo + (cj), cg_epilogue(sum, ci, cj, M, N));
            }
#endif
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

#if KSPLIT > 1
/* The split's second pass (strip_sum::SUM_KERNEL_SUFFIX): every work-group of the first
   has left its sums in its slot of the workspace, in order before this launch. */
__kernel __attribute__((reqd_work_group_size(CG_THREADS, 1, 1)))
void cg_f32_plain_91b242b7_sum(
#if KSPLIT > 1
    __global float* cg_ws, __global uint* cg_flags,
#endif
    int M, int N, int K, __global float* restrict out, const __global float* restrict p0, const __global float* restrict p1, int ldo, long offo, int ld0, long off0, int ld1, long off1, long bso, long bs0, long bs1, int nbatch)
{
#if KSPLIT > 1
    const long cg_tile = (long)get_group_id(2) * get_num_groups(0) + get_group_id(0);
    __global float* const cg_slots = cg_ws + cg_tile * (KSPLIT * CG_TR * CG_NB);
#define CG_SLOT(i, jj) cg_slots[get_group_id(1) * (CG_TR * CG_NB) + (i) * CG_NB + (jj)]
#endif
    const long cg_bz = (long)get_group_id(2); out += offo + cg_bz * bso; p0 += off0 + cg_bz * bs0; p1 += off1 + cg_bz * bs1;
    const int tid = get_local_id(0);
    for (int o = tid; o < CG_TR * CG_NB; o += CG_THREADS) {
        const int i = o / CG_NB, jj = o % CG_NB;
        const int j = get_group_id(0) * CG_NB + jj;
        if (i < CG_R && j < CG_C) {
            float sum = 0.0f;
            for (int s = 0; s < KSPLIT; ++s) sum += cg_slots[s * (CG_TR * CG_NB) + o];
#if SWAP
            const int ci = j, cj = i;
#else
            const int ci = i, cj = j;
#endif
            cg_st_f32(out, (long)(ci) * ldo + (cj), cg_epilogue(sum, ci, cj, M, N));
        }
    }
}
#endif
