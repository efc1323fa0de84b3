/* crossgemm kernel `bf16_at_scale_gelu_erf`: out = gelu_erf((acc * scale)) (OpenCL C 1.2) */
#ifndef MWG
#error "tile parameters MWG NWG KWG MDIMC NDIMC VW GROUP_M must be defined (-D) at compile time"
#endif
#ifndef KSPLIT
#define KSPLIT 1
#endif
#if KSPLIT < 1 || KSPLIT > 32
#error "KSPLIT: 1 to 32 work-groups along K"
#endif
#define MWI (MWG / MDIMC)
#define NWI (NWG / NDIMC)
#define NTHREADS (MDIMC * NDIMC)
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
static inline void cg_ldv(const __global ushort* p, long base, int n, float* out) {
#if VW == 4
    if (n >= 4) { ushort4 t = vload4(0, p + base); out[0] = cg_bf16_to_f32(t.s0); out[1] = cg_bf16_to_f32(t.s1); out[2] = cg_bf16_to_f32(t.s2); out[3] = cg_bf16_to_f32(t.s3); return; }
#elif VW == 2
    if (n >= 2) { ushort2 t = vload2(0, p + base); out[0] = cg_bf16_to_f32(t.s0); out[1] = cg_bf16_to_f32(t.s1); return; }
#endif
    for (int e = 0; e < VW; e++) out[e] = e < n ? cg_ld_bf16(p, base + e) : 0.0f;
}
static inline float cg_epilogue(float acc, int i, int j, int M, int N, const __global ushort* p2) {
    (void)i; (void)j; (void)M; (void)N;
    const float v2 = cg_ld_bf16(p2, i);
    return cg_gelu_erf((acc * v2));
}

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void cg_bf16_at_scale_gelu_erf_1ce0fec8(
#if KSPLIT > 1
    __global float* cg_ws, __global uint* cg_flags,
#endif
    int M, int N, int K, __global ushort* restrict out, const __global ushort* restrict p0, const __global ushort* restrict p1, const __global ushort* restrict p2, int ldo, long offo, int ld0, long off0, int ld1, long off1, long off2, long bso, long bs0, long bs1, long bs2, int nbatch)
{
    __local float As[KWG][MWG + 1];
    __local float Bs[KWG][NWG + 1];
    const long cg_bz = (long)get_group_id(2); out += offo + cg_bz * bso; p0 += off0 + cg_bz * bs0; p1 += off1 + cg_bz * bs1; p2 += off2 + cg_bz * bs2;
    const __global ushort* A = p0;
    const __global ushort* B = p1;
    const int tx = get_local_id(0);
    const int ty = get_local_id(1);
    const int tid = ty * NDIMC + tx;

    /* Grouped launch order: GROUP_M tile rows are swept together so that neighbouring
       work-groups share rows of A and columns of B in the cache. */
    const int pid = get_group_id(0);
    const int tiles_m = (M + MWG - 1) / MWG;
    const int tiles_n = (N + NWG - 1) / NWG;
    const int in_group = GROUP_M * tiles_n;
    const int first_m = (pid / in_group) * GROUP_M;
    const int group_rows = min(tiles_m - first_m, GROUP_M);
    const int m0 = (first_m + (pid % in_group) % group_rows) * MWG;
    const int n0 = ((pid % in_group) / group_rows) * NWG;

    float acc[MWI][NWI];
#if KSPLIT > 1
    const long cg_tile = (long)get_group_id(2) * get_num_groups(0) + get_group_id(0);
    __global float* const cg_slots = cg_ws + cg_tile * (KSPLIT * MWG * NWG);
#define CG_AT(s, i, j) cg_slots[(s) * (MWG * NWG) + (ty + (i) * MDIMC) * NWG + tx + (j) * NDIMC]
#endif
    for (int i = 0; i < MWI; i++)
        for (int j = 0; j < NWI; j++)
            acc[i][j] = 0.0f;

    /* This work-group's share of K, [kb, ke): split get_group_id(1) of KSPLIT, in whole
       KWG steps (only the last split's tile may cross K, and reads zeros past it). */
    const int steps = (K + KWG - 1) / KWG;
    const int kb = (int)((long)get_group_id(1) * steps / KSPLIT) * KWG;
    const int ke = min(K, (int)((long)(get_group_id(1) + 1) * steps / KSPLIT) * KWG);
    for (int k0 = kb; k0 < ke; k0 += KWG) {
        for (int v = tid; v < MWG * KWG / VW; v += NTHREADS) {
            const int k = v / (MWG / VW);
            const int r = (v % (MWG / VW)) * VW;
            const int gr = m0 + r;
            const int gk = k0 + k;
            float t[VW];
            const int n = gk < K ? min(VW, M - gr) : 0;
            cg_ldv(A, (long)gk * ld0 + gr, n, t);
            for (int e = 0; e < VW; e++) As[k][r + e] = t[e];
        }
        for (int v = tid; v < NWG * KWG / VW; v += NTHREADS) {
            const int k = v / (NWG / VW);
            const int r = (v % (NWG / VW)) * VW;
            const int gr = n0 + r;
            const int gk = k0 + k;
            float t[VW];
            const int n = gk < K ? min(VW, N - gr) : 0;
            cg_ldv(B, (long)gk * ld1 + gr, n, t);
            for (int e = 0; e < VW; e++) Bs[k][r + e] = t[e];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < KWG; kk++) {
            float a[MWI];
            float b[NWI];
            for (int i = 0; i < MWI; i++) a[i] = As[kk][ty + i * MDIMC];
            for (int j = 0; j < NWI; j++) b[j] = Bs[kk][tx + j * NDIMC];
            for (int i = 0; i < MWI; i++)
                for (int j = 0; j < NWI; j++)
                    acc[i][j] += a[i] * b[j];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

#if KSPLIT > 1
    /* Every split leaves its partial tile in its slot, for the second kernel. */
    for (int i = 0; i < MWI; i++)
        for (int j = 0; j < NWI; j++)
            CG_AT(get_group_id(1), i, j) = acc[i][j];
#else
    for (int i = 0; i < MWI; i++) {
        const int gi = m0 + ty + i * MDIMC;
        for (int j = 0; j < NWI; j++) {
            const int gj = n0 + tx + j * NDIMC;
            if (gi < M && gj < N) {
                cg_st_bf16(out, (long)(gj) * ldo + (gi), cg_epilogue(acc[i][j], gi, gj, M, N, p2));
            }
        }
    }
#endif
}

#if KSPLIT > 1
/* The split's second pass (strip_sum::SUM_KERNEL_SUFFIX): every work-group of the first
   has left its sums in its slot of the workspace, in order before this launch. */
__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void cg_bf16_at_scale_gelu_erf_1ce0fec8_sum(
#if KSPLIT > 1
    __global float* cg_ws, __global uint* cg_flags,
#endif
    int M, int N, int K, __global ushort* restrict out, const __global ushort* restrict p0, const __global ushort* restrict p1, const __global ushort* restrict p2, int ldo, long offo, int ld0, long off0, int ld1, long off1, long off2, long bso, long bs0, long bs1, long bs2, int nbatch)
{
    const long cg_bz = (long)get_group_id(2); out += offo + cg_bz * bso; p0 += off0 + cg_bz * bs0; p1 += off1 + cg_bz * bs1; p2 += off2 + cg_bz * bs2;
    const __global ushort* A = p0;
    const __global ushort* B = p1;
    const int tx = get_local_id(0);
    const int ty = get_local_id(1);
    const int tid = ty * NDIMC + tx;

    /* Grouped launch order: GROUP_M tile rows are swept together so that neighbouring
       work-groups share rows of A and columns of B in the cache. */
    const int pid = get_group_id(0);
    const int tiles_m = (M + MWG - 1) / MWG;
    const int tiles_n = (N + NWG - 1) / NWG;
    const int in_group = GROUP_M * tiles_n;
    const int first_m = (pid / in_group) * GROUP_M;
    const int group_rows = min(tiles_m - first_m, GROUP_M);
    const int m0 = (first_m + (pid % in_group) % group_rows) * MWG;
    const int n0 = ((pid % in_group) / group_rows) * NWG;

    float acc[MWI][NWI];
#if KSPLIT > 1
    const long cg_tile = (long)get_group_id(2) * get_num_groups(0) + get_group_id(0);
    __global float* const cg_slots = cg_ws + cg_tile * (KSPLIT * MWG * NWG);
#define CG_AT(s, i, j) cg_slots[(s) * (MWG * NWG) + (ty + (i) * MDIMC) * NWG + tx + (j) * NDIMC]
#endif
    for (int i = 0; i < MWI; i++)
        for (int j = 0; j < NWI; j++) {
            float sum = 0.0f;
            for (int s = 0; s < KSPLIT; ++s) sum += CG_AT(s, i, j);
            acc[i][j] = sum;
        }
    for (int i = 0; i < MWI; i++) {
        const int gi = m0 + ty + i * MDIMC;
        for (int j = 0; j < NWI; j++) {
            const int gj = n0 + tx + j * NDIMC;
            if (gi < M && gj < N) {
                cg_st_bf16(out, (long)(gj) * ldo + (gi), cg_epilogue(acc[i][j], gi, gj, M, N, p2));
            }
        }
    }
}
#endif
