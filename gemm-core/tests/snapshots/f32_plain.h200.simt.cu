/* crossgemm: cg_f32_plain_91b242b7 = acc (simt fma, A RowMajor, B RowMajor, out f32 RowMajor) */
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
static __device__ __forceinline__ float cg_epilogue(float acc, int i, int j, int M, int N) {
    (void)i; (void)j; (void)M; (void)N;
    return acc;
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

#define CG_THREADS (MDIMC * NDIMC)
#define CG_MWI (MWG / MDIMC)
#define CG_NWI (NWG / NDIMC)
/* A thread owns its rows (columns) of C in runs of CG_VM (CG_VN) adjacent ones where its
   share allows, so that a k-slice of them is one 16-byte shared load: a quarter of the
   shared-memory instructions of strided ownership, which issued one load a row. Runs of
   4 keep local rows a multiple of 4 floats (pad 4, not 1). */
#define CG_VM ((CG_MWI % 4 == 0) ? 4 : 1)
#define CG_VN ((CG_NWI % 4 == 0) ? 4 : 1)
#define CG_LDA (MWG + (CG_VM == 4 ? 4 : 1))
#define CG_LDB (NWG + (CG_VN == 4 ? 4 : 1))
static_assert(MWG % MDIMC == 0 && NWG % NDIMC == 0, "tile must split evenly over threads");
static_assert(MWG % VW == 0 && NWG % VW == 0 && KWG % VW == 0, "VW must divide the tile");
typedef float cg_ab_t;
struct alignas(VW * sizeof(cg_ab_t)) cg_vec_t { cg_ab_t v[VW]; };
static __device__ __forceinline__ float cg_ab_f32(cg_ab_t x) { return x; }

/* Row `mi` of a thread's share (column: the same with N's constants): runs of V adjacent
   rows, run r of thread t starting at r * DIMC * V + t * V. */
template <int V, int DIMC>
static __device__ __forceinline__ int cg_owned(int t, int mi) {
    return (mi / V) * (DIMC * V) + t * V + (mi % V);
}

/* A thread's share of one operand tile in registers, as float: OUTER x INNER elements of
   the global O x I matrix, VW-wide along INNER. */
template <int OUTER, int INNER>
struct cg_frag {
    static constexpr int IV = INNER / VW;
    static constexpr int TOTAL = OUTER * IV;
    static constexpr int ITERS = (TOTAL + CG_THREADS - 1) / CG_THREADS;
    float v[ITERS][VW];
    /* Load `it` of thread `tid`: its row `o` and first column `iv` of the tile; false
       past the tile's end. Fetch and stash both walk the tile by it. */
    static __device__ __forceinline__ bool at(int it, int tid, int& o, int& iv) {
        const int idx = it * CG_THREADS + tid;
        o = idx / IV;
        iv = (idx % IV) * VW;
        return TOTAL % CG_THREADS == 0 || idx < TOTAL;
    }
};

/* Global to registers: the tile at (o0, i0) of the matrix with leading dimension LD,
   zero past its O x I extent. Issued a tile ahead of the shared-memory step that stores
   it, so that its loads are in flight while the block computes on the tile before. */
template <int OUTER, int INNER, int VEC_OK>
static __device__ __forceinline__ void cg_simt_fetch(cg_frag<OUTER, INNER>& f, const cg_ab_t* __restrict__ g,
                                                     int o0, int O, int i0, int I, int LD, int tid) {
    typedef cg_frag<OUTER, INNER> F;
#pragma unroll
    for (int it = 0; it < F::ITERS; ++it) {
        int o, iv;
        if (!F::at(it, tid, o, iv)) break;
        const int go = o0 + o, gi = i0 + iv;
        if (VEC_OK && go < O && gi + VW <= I) {
            const cg_vec_t t = *reinterpret_cast<const cg_vec_t*>(g + ((long)go * LD + gi));
#pragma unroll
            for (int e = 0; e < VW; ++e) f.v[it][e] = cg_ab_f32(t.v[e]);
        } else {
#pragma unroll
            for (int e = 0; e < VW; ++e) f.v[it][e] = (go < O && gi + e < I) ? cg_ab_f32(g[(long)go * LD + gi + e]) : 0.0f;
        }
    }
}

/* VW floats, one shared store where VW is 2 or 4. */
struct alignas((VW == 2 || VW == 4) ? VW * 4 : 4) cg_fvec_t { float v[VW]; };

/* Registers to local memory. KINNER: the inner dimension is K, so the tile is stored
   transposed ([k][outer]) to keep the compute loop's reads contiguous along M/N, one
   float at a time. Otherwise a thread's VW floats are adjacent and aligned (rows of LDS
   floats, LDS a multiple of VW) and go as one 8- or 16-byte store: a warp's scalar
   stores of every VW-th float would meet VW-way bank conflicts. */
template <int OUTER, int INNER, int KINNER, int LDS>
static __device__ __forceinline__ void cg_simt_stash(float* s, const cg_frag<OUTER, INNER>& f, int tid) {
    typedef cg_frag<OUTER, INNER> F;
    constexpr bool VEC = !KINNER && (VW == 2 || VW == 4) && LDS % VW == 0;
#pragma unroll
    for (int it = 0; it < F::ITERS; ++it) {
        int o, iv;
        if (!F::at(it, tid, o, iv)) break;
        if (VEC) {
            cg_fvec_t t;
#pragma unroll
            for (int e = 0; e < VW; ++e) t.v[e] = f.v[it][e];
            *reinterpret_cast<cg_fvec_t*>(s + o * LDS + iv) = t;
            continue;
        }
#pragma unroll
        for (int e = 0; e < VW; ++e) {
            if (KINNER) s[(iv + e) * LDS + o] = f.v[it][e];
            else s[o * LDS + iv + e] = f.v[it][e];
        }
    }
}

/* A thread's CG_MWI (CG_NWI) values of k-slice `row` of a local tile: 16-byte loads
   where it owns runs of 4. */
template <int N, int V, int DIMC>
static __device__ __forceinline__ void cg_simt_slice(float* x, const float* row, int t) {
#pragma unroll
    for (int r = 0; r < N / V; ++r) {
        if (V == 4) {
            const float4 q = *reinterpret_cast<const float4*>(row + r * DIMC * 4 + t * 4);
            x[4 * r] = q.x; x[4 * r + 1] = q.y; x[4 * r + 2] = q.z; x[4 * r + 3] = q.w;
        } else {
            x[r] = row[r * DIMC + t];
        }
    }
}

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

extern "C" __global__ void __launch_bounds__(CG_THREADS) cg_f32_plain_91b242b7(
#if KSPLIT > 1
    float* __restrict__ cg_ws, unsigned* __restrict__ cg_flags,
#endif
    int M, int N, int K, float* __restrict__ out, const float* __restrict__ p0, const float* __restrict__ p1, int ldo, long offo, int ld0, long off0, int ld1, long off1, long bso, long bs0, long bs1, int nbatch) {
    __shared__ __align__(16) float cg_as[KWG * CG_LDA];
    __shared__ __align__(16) float cg_bs[KWG * CG_LDB];
    const long cg_bz = (long)blockIdx.z; out += offo + cg_bz * bso; p0 += off0 + cg_bz * bs0; p1 += off1 + cg_bz * bs1;
    int tm, tn;
    if (!cg_tile_of_block(M, N, MWG, NWG, &tm, &tn)) return;
    const int m0 = tm * MWG, n0 = tn * NWG;
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * NDIMC + tx;
    const cg_ab_t* __restrict__ ga = p0;
    const cg_ab_t* __restrict__ gb = p1;

    float c[CG_MWI][CG_NWI];
#pragma unroll
    for (int mi = 0; mi < CG_MWI; ++mi)
#pragma unroll
        for (int ni = 0; ni < CG_NWI; ++ni) c[mi][ni] = 0.0f;

    /* This block's share of K, [kb, ke): split blockIdx.y of KSPLIT, in whole KWG steps
       (only the last split's tile may cross K, and reads zeros past it). */
    const int cg_steps = (K + KWG - 1) / KWG;
    const int kb = (int)((long long)blockIdx.y * cg_steps / KSPLIT) * KWG;
    const int ke = min(K, (int)((long long)(blockIdx.y + 1) * cg_steps / KSPLIT) * KWG);
    cg_frag<MWG, KWG> fa;
    cg_frag<KWG, NWG> fb;
    if (kb < ke) {
        cg_simt_fetch<MWG, KWG, (A_ALIGN % VW == 0)>(fa, ga, m0, M, kb, K, ld0, tid);
        cg_simt_fetch<KWG, NWG, (B_ALIGN % VW == 0)>(fb, gb, kb, K, n0, N, ld1, tid);
    }
    for (int k0 = kb; k0 < ke; k0 += KWG) {
        cg_simt_stash<MWG, KWG, 1, CG_LDA>(cg_as, fa, tid);
        cg_simt_stash<KWG, NWG, 0, CG_LDB>(cg_bs, fb, tid);
        __syncthreads();
        if (k0 + KWG < ke) {
            cg_simt_fetch<MWG, KWG, (A_ALIGN % VW == 0)>(fa, ga, m0, M, k0 + KWG, K, ld0, tid);
            cg_simt_fetch<KWG, NWG, (B_ALIGN % VW == 0)>(fb, gb, k0 + KWG, K, n0, N, ld1, tid);
        }
#pragma unroll
        for (int k = 0; k < KWG; ++k) {
            float a[CG_MWI], b[CG_NWI];
            cg_simt_slice<CG_MWI, CG_VM, MDIMC>(a, cg_as + k * CG_LDA, ty);
            cg_simt_slice<CG_NWI, CG_VN, NDIMC>(b, cg_bs + k * CG_LDB, tx);
#pragma unroll
            for (int mi = 0; mi < CG_MWI; ++mi)
#pragma unroll
                for (int ni = 0; ni < CG_NWI; ++ni) c[mi][ni] = fmaf(a[mi], b[ni], c[mi][ni]);
        }
        __syncthreads();
    }

#if KSPLIT > 1
    /* Each split leaves its tile in its slot of the workspace; the last to arrive adds
       the slots in split order (the same bits whichever finishes last) and stores. */
    const long cg_tile = (long)blockIdx.z * gridDim.x + blockIdx.x;
    float* const cg_slots = cg_ws + cg_tile * (KSPLIT * MWG * NWG);
#define CG_SLOT(s, mi, ni) (cg_slots + (s) * (MWG * NWG) + cg_owned<CG_VM, MDIMC>(ty, mi) * NWG + cg_owned<CG_VN, NDIMC>(tx, ni))
#pragma unroll
    for (int mi = 0; mi < CG_MWI; ++mi)
#pragma unroll
        for (int ni = 0; ni < CG_NWI; ++ni) CG_STCG(CG_SLOT(blockIdx.y, mi, ni), c[mi][ni]);
    if (!cg_block_last_to_arrive(cg_flags + cg_tile, tid == 0)) return;
#pragma unroll
    for (int mi = 0; mi < CG_MWI; ++mi)
#pragma unroll
        for (int ni = 0; ni < CG_NWI; ++ni) {
            float sum = 0.0f;
            for (int s = 0; s < KSPLIT; ++s) {
                float v;
                CG_LDCG(CG_SLOT(s, mi, ni), v);
                sum += v;
            }
            c[mi][ni] = sum;
        }
#endif

#pragma unroll
    for (int mi = 0; mi < CG_MWI; ++mi)
#pragma unroll
        for (int ni = 0; ni < CG_NWI; ++ni) {
            const int i = m0 + cg_owned<CG_VM, MDIMC>(ty, mi);
            const int j = n0 + cg_owned<CG_VN, NDIMC>(tx, ni);
            if (i < M && j < N) {
                const float acc = c[mi][ni];
                cg_st_f32(out, (long)(i) * ldo + (j), cg_epilogue(acc, i, j, M, N));
            }
        }
}
