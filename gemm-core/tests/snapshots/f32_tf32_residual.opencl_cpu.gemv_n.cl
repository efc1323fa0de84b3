/* crossgemm kernel `f32_tf32_residual`: out = (acc + residual) (OpenCL C 1.2, gemv_n) */
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
static inline float cg_epilogue(float acc, int i, int j, int M, int N, const __global float* p2, int ld2) {
    (void)i; (void)j; (void)M; (void)N;
    const float v2 = cg_ld_f32(p2, (long)i * ld2 + j);
    return (acc + v2);
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
#if MR < 1 || MR > 8 || CHUNKS < 1 || CHUNKS > 32 || (CHUNKS & (CHUNKS - 1)) != 0 || KSPLIT != 1
#error "MR: 1 to 8 rows; CHUNKS: a power of two up to 32; KSPLIT 1 (the CUDA source splits K over blocks)"
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

__kernel __attribute__((reqd_work_group_size(CG_THREADS, 1, 1)))
void cg_f32_tf32_residual_33093ad6(int M, int N, int K, __global float* restrict out, const __global float* restrict p0, const __global float* restrict p1, const __global float* restrict p2, int ldo, long offo, int ld0, long off0, int ld1, long off1, int ld2, long off2, long bso, long bs0, long bs1, long bs2, int nbatch)
{
    __local float cg_red[CG_THREADS][CG_VEC];
    const long cg_bz = (long)get_group_id(2); out += offo + cg_bz * bso; p0 += off0 + cg_bz * bs0; p1 += off1 + cg_bz * bs1; p2 += off2 + cg_bz * bs2;
    const int tid = get_local_id(0);
    const int chunk = tid % CHUNKS, kl = tid / CHUNKS;
    const int j0 = get_group_id(0) * CG_NB + chunk * CG_VEC;
    const int kb = 0, ke = K; /* no split of K on OpenCL (KSPLIT 1) */
    const __global float* gx = CG_XP;
    const __global float* gw = CG_WP;
    float acc[MR][CG_VEC];
    for (int i = 0; i < MR; ++i)
        for (int c = 0; c < CG_VEC; ++c) acc[i][c] = 0.0f;

    if (CG_W_VEC && j0 + CG_VEC <= CG_C) {
        /* Whole chunks of W's rows; rows of X past CG_R read the last one (in bounds:
           M, N >= 1 at launch), and those sums are never stored. */
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
        /* The last chunk past CG_C, or rows of W not 16-byte aligned: element by element. */
        for (int kk = kb + kl; kk < ke; kk += CG_KL) {
            const int e = 0;
            float x[MR][1];
            for (int i = 0; i < MR; ++i) x[i][0] = i < CG_R ? CG_X(i, kk) : 0.0f;
            float b[CG_VEC];
            for (int c = 0; c < CG_VEC; ++c) {
                const int j = j0 + c;
                b[c] = j < CG_C ? cg_ld_f32(gw, (long)kk * CG_LDW + j) : 0.0f;
            }
            for (int i = 0; i < MR; ++i)
                for (int c = 0; c < CG_VEC; ++c) acc[i][c] = fma(x[i][e], b[c], acc[i][c]);
        }
    }

    /* One row at a time: every work-item's partials, then per output its chunk's K-lanes
       in work-item order. */
    for (int i = 0; i < MR; ++i) {
        for (int c = 0; c < CG_VEC; ++c) cg_red[tid][c] = acc[i][c];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int jj = tid; jj < CG_NB; jj += CG_THREADS) {
            const int j = get_group_id(0) * CG_NB + jj;
            if (i < CG_R && j < CG_C) {
                float sum = 0.0f;
                for (int t = jj / CG_VEC; t < CG_THREADS; t += CHUNKS) sum += cg_red[t][jj % CG_VEC];
#if SWAP
            const int ci = j, cj = i;
#else
            const int ci = i, cj = j;
#endif
                cg_st_f32(out, (long)(ci) * ldo + (cj), cg_epilogue(sum, ci, cj, M, N, p2, ld2));
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
