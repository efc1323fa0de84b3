/* crossgemm kernel `f16_bias_relu`: out = relu((acc + bias)) (OpenCL C 1.2, gemv) */
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
static inline float cg_epilogue(float acc, int i, int j, int M, int N, const __global ushort* p2) {
    (void)i; (void)j; (void)M; (void)N;
    const float v2 = cg_ld_f16(p2, j);
    return cg_relu((acc + v2));
}

#ifndef MR
#error "gemv parameters MR WARPS COLS KSPLIT must be defined (-D) at compile time"
#endif
#ifndef A_VEC
#define A_VEC 0
#endif
#ifndef B_VEC
#define B_VEC 0
#endif
#define CG_THREADS (WARPS * 32)
#define CG_GROUPS (WARPS / KSPLIT)
#define CG_NB (CG_GROUPS * COLS)
#define CG_VEC 8
#define CG_P 2
#define CG_E (CG_VEC / CG_P)
#if WARPS % KSPLIT != 0 || CG_NB * MR > CG_THREADS
#error "KSPLIT must divide WARPS, and the block's outputs must not outnumber its work-items"
#endif
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
#define CG_X_ROWS 1
#define CG_IL 0
#define CG_VEC_OK (B_VEC && A_VEC)
#define CG_LOAD_X_VEC(i, k, dst) cg_chunk(gx, (long)(i) * CG_LDX + (k), dst)
#define CG_LOAD_X_WIN(d, i, k, left, dst) cg_win_unpack(cg_row_win(xrow[d], (k), left), dst)
#else
#define CG_R M
#define CG_C N
#define CG_XP p0
#define CG_WP p1
#define CG_LDX ld0
#define CG_LDW ld1
#define CG_X_ROWS 1
#define CG_IL 0
#define CG_VEC_OK (A_VEC && B_VEC)
#define CG_LOAD_X_VEC(i, k, dst) cg_chunk(gx, (long)(i) * CG_LDX + (k), dst)
#define CG_LOAD_X_WIN(d, i, k, left, dst) cg_win_unpack(cg_row_win(xrow[d], (k), left), dst)
#endif

/* The CG_VEC elements of a 16-byte chunk in registers, as floats. */
static inline void cg_unpack4(uint4 w, float* out) {
    vstore8(vload_half8(0, (const __private half*)&w), 0, out);
}
/* CG_VEC consecutive elements from p + i (16 bytes, 16-byte aligned), as floats. */
static inline void cg_chunk(const __global ushort* p, long i, float* out) {
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
    const __global ushort* c;
    uint off;
} cg_row;
static inline cg_row cg_row_at(const __global ushort* p) {
    cg_row r;
    r.off = (uint)((ulong)p & 15);
    r.c = p - r.off / sizeof(ushort);
    return r;
}
/* The window of the row's elements from k (a multiple of CG_VEC), `left` of them from k on. */
static inline cg_win cg_row_win(cg_row r, int k, int left) {
    cg_win w;
    w.off = r.off;
    const __global uint4* c = (const __global uint4*)(r.c + k);
    w.lo = c[0];
    const int valid = left < CG_VEC ? left : CG_VEC;
    w.hi = r.off + valid * sizeof(ushort) > 16 ? c[1] : (uint4)(0u);
    return w;
}
static inline cg_win cg_win_load(const __global ushort* p, int left) {
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

#if !CG_X_ROWS
#if MR >= 8 && 8 >= 8 && CG_X_ALIGN % 8 == 0
#define CG_X_AV 8
#elif MR >= 4 && 8 >= 4 && CG_X_ALIGN % 4 == 0
#define CG_X_AV 4
#elif MR >= 2 && CG_X_ALIGN % 2 == 0
#define CG_X_AV 2
#else
#define CG_X_AV 1
#endif
#define CG_X_AB (CG_X_AV * 2)
/* Where element e of a lane's step lies from its first k: word e / CG_P of the step's
   words s elements apart, element e % CG_P in it. */
#define CG_KE(e, s) (((e) / CG_P) * (s) + (e) % CG_P)
/* The word at p (4-byte aligned). */
static inline unsigned cg_ld4(const __global ushort* p) {
    return *(const __global uint*)p;
}
/* The CG_P elements of a word, as floats. */
static inline void cg_word_unpack(unsigned w, float* f) {
    vstore2(vload_half2(0, (const __private half*)&w), 0, f);
}
/* The CG_X_AV elements of the vector at p (aligned to its size), as floats. */
static inline void cg_x_vec(const __global ushort* p, float* f) {
#if CG_X_AB >= 4
#if CG_X_AB == 16
    const uint4 v = *(const __global uint4*)p;
    const uint w[4] = {v.x, v.y, v.z, v.w};
#elif CG_X_AB == 8
    const uint2 v = *(const __global uint2*)p;
    const uint w[2] = {v.x, v.y};
#else
    const uint w[1] = {cg_ld4(p)};
#endif
    for (int q = 0; q < CG_X_AB / 4; ++q) cg_word_unpack(w[q], f + q * CG_P);
#else
    f[0] = cg_ld_f16(p, 0);
#endif
}
static inline void cg_x_across(const __global ushort* gx, long ldx, int k, int s, int full, int K, int R, float a[MR][CG_VEC]) {
    const int last = (R - 1) / CG_X_AV * CG_X_AV;
    for (int e = 0; e < CG_VEC; ++e) {
        const int ke = CG_KE(e, s), kk = k + ke;
        /* From k's row, not kk's: with kk's ptxas spilled 4 bytes of the 1-row walk
           (f32, 4 warps, 4 columns, K in 4). */
        const __global ushort* row = gx + (long)k * ldx + (long)ke * ldx;
        for (int g = 0; g < MR; g += CG_X_AV) {
            float v[CG_X_AV];
            if (full || kk < K) {
                cg_x_vec(row + (g < last ? g : last), v);
            } else {
                for (int j = 0; j < CG_X_AV; ++j) v[j] = 0.0f;
            }
            for (int j = 0; j < CG_X_AV; ++j) a[g + j][e] = v[j];
        }
    }
}
#endif

/* The elements k + e >= K of a row's CG_VEC from k read as zeros (in X and W alike:
   what lies past K may be anything, NaN too). */
static inline void cg_mask_k(float* f, int k, int K) {
    if (k + CG_VEC > K)
        for (int e = 0; e < CG_VEC; ++e)
            if (k + e >= K) f[e] = 0.0f;
}

__kernel __attribute__((reqd_work_group_size(CG_THREADS, 1, 1)))
void cg_f16_bias_relu_ca192860(int M, int N, int K, __global ushort* restrict out, const __global ushort* restrict p0, const __global ushort* restrict p1, const __global ushort* restrict p2, int ldo, long offo, int ld0, long off0, int ld1, long off1, long off2, long bso, long bs0, long bs1, long bs2, int nbatch)
{
    __local float cg_red[MR][COLS][CG_THREADS];
    const long cg_bz = (long)get_group_id(2); out += offo + cg_bz * bso; p0 += off0 + cg_bz * bs0; p1 += off1 + cg_bz * bs1; p2 += off2 + cg_bz * bs2;
    const int tid = get_local_id(0), lane = tid & 31, warp = tid >> 5;
    const int group = warp / KSPLIT, part = warp % KSPLIT;
    const int n0 = get_group_id(0) * CG_NB + group * COLS;
    const __global ushort* gx = CG_XP;
    const __global ushort* gw = CG_WP;
    float acc[MR][COLS];
    for (int i = 0; i < MR; ++i)
        for (int c = 0; c < COLS; ++c) acc[i][c] = 0.0f;

    /* Rows past CG_R and columns past CG_C read the last one (in bounds: M, N >= 1 at
       launch); those sums are never stored. Where every row of X and W starts on a
       16-byte boundary, whole chunks (the one that crosses K masked); elsewhere each
       work-item's CG_VEC elements of a row from the aligned chunks that hold them. */
#if CG_IL
    {
        int kb = part * (32 * CG_VEC);
        for (; kb <= K - 32 * CG_VEC; kb += KSPLIT * 32 * CG_VEC) {
            const int kl = kb + lane * CG_P;
            float a[MR][CG_VEC];
            cg_x_across(gx, CG_LDX, kl, 32 * CG_P, 1, K, CG_R, a);
            unsigned braw[COLS][CG_E];
            for (int c = 0; c < COLS; ++c) {
                const int n = n0 + c < CG_C ? n0 + c : CG_C - 1;
                const __global ushort* wr = gw + (long)n * CG_LDW + kl;
                for (int q = 0; q < CG_E; ++q)
                    braw[c][q] = 1 || kl + q * 32 * CG_P < K ? cg_ld4(wr + q * 32 * CG_P) : 0u;
            }
            for (int c = 0; c < COLS; ++c) {
                float b[CG_VEC];
                for (int q = 0; q < CG_E; ++q) cg_word_unpack(braw[c][q], b + q * CG_P);
                if (!1) {
                    for (int e = 0; e < CG_VEC; ++e)
                        if (kl + CG_KE(e, 32 * CG_P) >= K) b[e] = 0.0f;
                }
                for (int i = 0; i < MR; ++i)
                    for (int e = 0; e < CG_VEC; ++e) acc[i][c] = fma(a[i][e], b[e], acc[i][c]);
            }
        }
        if (kb < K) {
            const int kl = kb + lane * CG_P;
            float a[MR][CG_VEC];
            cg_x_across(gx, CG_LDX, kl, 32 * CG_P, 0, K, CG_R, a);
            unsigned braw[COLS][CG_E];
            for (int c = 0; c < COLS; ++c) {
                const int n = n0 + c < CG_C ? n0 + c : CG_C - 1;
                const __global ushort* wr = gw + (long)n * CG_LDW + kl;
                for (int q = 0; q < CG_E; ++q)
                    braw[c][q] = 0 || kl + q * 32 * CG_P < K ? cg_ld4(wr + q * 32 * CG_P) : 0u;
            }
            for (int c = 0; c < COLS; ++c) {
                float b[CG_VEC];
                for (int q = 0; q < CG_E; ++q) cg_word_unpack(braw[c][q], b + q * CG_P);
                if (!0) {
                    for (int e = 0; e < CG_VEC; ++e)
                        if (kl + CG_KE(e, 32 * CG_P) >= K) b[e] = 0.0f;
                }
                for (int i = 0; i < MR; ++i)
                    for (int e = 0; e < CG_VEC; ++e) acc[i][c] = fma(a[i][e], b[e], acc[i][c]);
            }
        }
    }
#else
    if (CG_VEC_OK) {
        int k = (part * 32 + lane) * CG_VEC;
        for (; k < K - (CG_VEC - 1); k += KSPLIT * 32 * CG_VEC) {
            float a[MR][CG_VEC];
#if CG_X_ROWS
            for (int d = 0; d < MR; ++d) {
                const int i = d < CG_R ? d : CG_R - 1;
                CG_LOAD_X_VEC(i, k, a[d]);
            }
#else
            cg_x_across(gx, CG_LDX, k, CG_P, 1, K, CG_R, a);
#endif
            for (int c = 0; c < COLS; ++c) {
                const int nn = n0 + c < CG_C ? n0 + c : CG_C - 1;
                float b[CG_VEC];
                cg_chunk(gw, (long)nn * CG_LDW + k, b);
                for (int i = 0; i < MR; ++i)
                    for (int e = 0; e < CG_VEC; ++e) acc[i][c] = fma(a[i][e], b[e], acc[i][c]);
            }
        }
        if (k < K) {
            float a[MR][CG_VEC];
#if CG_X_ROWS
            for (int d = 0; d < MR; ++d) {
                const int i = d < CG_R ? d : CG_R - 1;
                CG_LOAD_X_VEC(i, k, a[d]); cg_mask_k(a[d], k, K);
            }
#else
            cg_x_across(gx, CG_LDX, k, CG_P, 0, K, CG_R, a);
#endif
            for (int c = 0; c < COLS; ++c) {
                const int nn = n0 + c < CG_C ? n0 + c : CG_C - 1;
                float b[CG_VEC];
                cg_chunk(gw, (long)nn * CG_LDW + k, b); cg_mask_k(b, k, K);
                for (int i = 0; i < MR; ++i)
                    for (int e = 0; e < CG_VEC; ++e) acc[i][c] = fma(a[i][e], b[e], acc[i][c]);
            }
        }
    } else {
        cg_row wrow[COLS];
        for (int c = 0; c < COLS; ++c) wrow[c] = cg_row_at(gw + (long)(n0 + c < CG_C ? n0 + c : CG_C - 1) * CG_LDW);
#if CG_X_ROWS
        cg_row xrow[MR];
        for (int d = 0; d < MR; ++d) xrow[d] = cg_row_at(gx + (long)(d < CG_R ? d : CG_R - 1) * CG_LDX);
#endif
        int k = (part * 32 + lane) * CG_VEC;
        for (; k < K - (CG_VEC - 1); k += KSPLIT * 32 * CG_VEC) {
            float a[MR][CG_VEC];
#if CG_X_ROWS
            for (int d = 0; d < MR; ++d) {
                const int i = d < CG_R ? d : CG_R - 1;
                CG_LOAD_X_WIN(d, i, k, CG_VEC, a[d]);
            }
#else
            cg_x_across(gx, CG_LDX, k, CG_P, 1, K, CG_R, a);
#endif
            for (int c = 0; c < COLS; ++c) {
                const int nn = n0 + c < CG_C ? n0 + c : CG_C - 1;
                float b[CG_VEC];
                cg_win_unpack(cg_row_win(wrow[c], k, CG_VEC), b);
                for (int i = 0; i < MR; ++i)
                    for (int e = 0; e < CG_VEC; ++e) acc[i][c] = fma(a[i][e], b[e], acc[i][c]);
            }
        }
        if (k < K) {
            float a[MR][CG_VEC];
#if CG_X_ROWS
            for (int d = 0; d < MR; ++d) {
                const int i = d < CG_R ? d : CG_R - 1;
                CG_LOAD_X_WIN(d, i, k, K - k, a[d]); cg_mask_k(a[d], k, K);
            }
#else
            cg_x_across(gx, CG_LDX, k, CG_P, 0, K, CG_R, a);
#endif
            for (int c = 0; c < COLS; ++c) {
                const int nn = n0 + c < CG_C ? n0 + c : CG_C - 1;
                float b[CG_VEC];
                cg_win_unpack(cg_row_win(wrow[c], k, K - k), b); cg_mask_k(b, k, K);
                for (int i = 0; i < MR; ++i)
                    for (int e = 0; e < CG_VEC; ++e) acc[i][c] = fma(a[i][e], b[e], acc[i][c]);
            }
        }
    }
#endif

    /* Every work-item's partials, then per output the 32 x KSPLIT of its column group
       in work-item order. */
    for (int i = 0; i < MR; ++i)
        for (int c = 0; c < COLS; ++c) cg_red[i][c][tid] = acc[i][c];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (tid < CG_NB * MR) {
        const int i = tid / CG_NB, cc = tid % CG_NB, g = cc / COLS, c = cc % COLS;
        const int j = get_group_id(0) * CG_NB + cc;
        if (i < CG_R && j < CG_C) {
            float sum = 0.0f;
            for (int t = g * KSPLIT * 32; t < (g + 1) * KSPLIT * 32; ++t) sum += cg_red[i][c][t];
#if SWAP
            const int ci = j, cj = i;
#else
            const int ci = i, cj = j;
#endif
            cg_st_f16(out, (long)(ci) * ldo + (cj), cg_epilogue(sum, ci, cj, M, N, p2));
        }
    }
}
