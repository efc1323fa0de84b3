/* crossgemm: cg_f32_tf32_residual_33093ad6 = (acc + residual) (decode_n mma.sync m16n8k8 tf32 on 8-byte shared loads, swap-AB, A RowMajor, B RowMajor, out f32 RowMajor) */
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
#define CG_NB (NT * 16)
#define CG_MR (MT * 8)
#define CG_BK 16
#define CG_EPC 4
#define CG_ES 4u
typedef float cg_ab_t;
#define CG_WSW(r) ((((r) >> 1) & 3) << 1)
#define CG_XSW(m) ((m) & 2)
#define CG_SUM_COL(g, v) (2 * (g) + ((v) >> 1))

/* Slot sizes in elements; a row of X's chunk is 64 bytes (4 copies). */
#define CG_WCH (CG_NB / CG_EPC)
#define CG_WSLOT (CG_BK * CG_NB)
#define CG_SLOT (CG_WSLOT + CG_MR * CG_BK)
#define CG_RS (CG_NB + 4)
#define CG_COPIES 1
static_assert(BK == CG_BK, "a chunk is 64 bytes of k");
static_assert(NT == 4 || NT == 8, "NT: 4 or 8 (16-column blocks a block)");
static_assert(MT == 1 || MT == 2 || MT == 4, "MT: 1, 2 or 4 (8 to 32 rows)");
static_assert(STAGES >= 2 && STAGES <= 8, "STAGES: 2 to 8");
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
#define CG_R M
#define CG_C N
#define CG_XP p0
#define CG_WP p1
#define CG_LDX ld0
#define CG_LDW ld1

static __device__ __forceinline__ unsigned cg_smem_addr(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}
/* 16 bytes from global to shared; `bytes` < 16 zero-fills the rest (0: all zeros). */
static __device__ __forceinline__ void cg_cp16(unsigned dst, const void* src, int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(dst), "l"(src), "r"(bytes) : "memory");
}
/* The mma reads tf32 operands as f32 bit patterns; round to nearest (away) first, as
   cuBLAS does, rather than letting the hardware truncate. */
static __device__ __forceinline__ unsigned cg_to_tf32(unsigned x) {
    unsigned u;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(u) : "f"(__uint_as_float(x)));
    return u;
}
static __device__ __forceinline__ void cg_lds2(unsigned& a, unsigned& b, unsigned addr) {
    asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];\n" : "=r"(a), "=r"(b) : "r"(addr));
}
static __device__ __forceinline__ void cg_ld_x(unsigned (&x)[4], unsigned slot, int mt, int lane) {
    const int m = mt * 8 + (lane >> 2), q = lane & 3;
#pragma unroll
    for (int s = 0; s < 2; ++s) {
        const int ch = 2 * s + (q >> 1);
        cg_lds2(x[2 * s], x[2 * s + 1], slot + (unsigned)(CG_WSLOT + m * CG_BK + (ch ^ CG_XSW(m)) * CG_EPC + (q & 1) * 2) * CG_ES);
    }
#pragma unroll
    for (int v = 0; v < 4; ++v) x[v] = cg_to_tf32(x[v]);
}
static __device__ __forceinline__ void cg_ld_w(unsigned (&a)[4], unsigned slot, int s, int nt, int lane) {
    const int g = lane >> 2, r = s * 8 + 2 * (lane & 3), ch = nt * 4 + (g >> 1), w = (g & 1) * 2;
    cg_lds2(a[0], a[1], slot + (unsigned)(r * CG_NB + (ch ^ CG_WSW(r)) * CG_EPC + w) * CG_ES);
    cg_lds2(a[2], a[3], slot + (unsigned)((r + 1) * CG_NB + (ch ^ CG_WSW(r + 1)) * CG_EPC + w) * CG_ES);
#pragma unroll
    for (int v = 0; v < 4; ++v) a[v] = cg_to_tf32(a[v]);
}
static __device__ __forceinline__ void cg_mma(float* c, unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
static __device__ __forceinline__ void cg_frag_math(float (&acc)[NT][MT][4], int nt, const unsigned (&a)[4], const unsigned (&x)[MT][4], int s) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) cg_mma(acc[nt][mt], a[0], a[1], a[2], a[3], x[mt][2 * s], x[mt][2 * s + 1]);
}

/* The ring's copies of chunk `c` (CG_BK rows of k from k = CG_BK c) into the slot at
   `slot` (a shared address): each lane CG_BK CG_WCH / 32 16-byte chunks of W's rows and
   MT of X's. Rows of W past K and columns past CG_C are zeros, as are X's k past K; rows
   of X past CG_R read the last one (never stored). */
static __device__ __forceinline__ void cg_copy(unsigned slot, int c, int lane, const cg_ab_t* gx, const cg_ab_t* gw,
                                               long ldx, long ldw, int n0, int R, int C, int K) {
#pragma unroll
    for (int u = 0; u < CG_BK * CG_WCH / 32; ++u) {
        const int idx = u * 32 + lane, r = idx / CG_WCH, ch = idx % CG_WCH;
        const int k = c * CG_BK + r, n = n0 + ch * CG_EPC;
        const int cols = C - n;
        const int bytes = k < K && cols > 0 ? (cols >= CG_EPC ? 16 : cols * (int)CG_ES) : 0;
        const cg_ab_t* src = gw + (long)(k < K ? k : K - 1) * ldw + (cols > 0 ? n : n0);
        cg_cp16(slot + (unsigned)(r * CG_NB + (ch ^ CG_WSW(r)) * CG_EPC) * CG_ES, src, bytes);
    }
#pragma unroll
    for (int u = 0; u < MT; ++u) {
        const int idx = u * 32 + lane, m = idx >> 2, ch = idx & 3;
        const int k = c * CG_BK + ch * CG_EPC;
        const int left = K - k;
        const int bytes = left >= CG_EPC ? 16 : (left > 0 ? left * (int)CG_ES : 0);
        const cg_ab_t* src = gx + (long)(m < R ? m : R - 1) * ldx + (left > 0 ? k : 0);
        cg_cp16(slot + (unsigned)(CG_WSLOT + m * CG_BK + (ch ^ CG_XSW(m)) * CG_EPC) * CG_ES, src, bytes);
    }
}
/* X has CG_R <= CG_MR rows (K-contiguous), W CG_C columns (N-contiguous rows of K);
   C(i, j) = X(i) . W(:, j). One block per SM: the ring is most of its shared memory. */
extern "C" __global__ void __launch_bounds__(CG_THREADS, 1) cg_f32_tf32_residual_33093ad6(
#if KSPLIT > 1
    float* __restrict__ cg_ws, unsigned* __restrict__ cg_flags,
#endif
    int M, int N, int K, float* __restrict__ out, const float* __restrict__ p0, const float* __restrict__ p1, const float* __restrict__ p2, int ldo, long offo, int ld0, long off0, int ld1, long off1, int ld2, long off2, long bso, long bs0, long bs1, long bs2, int nbatch) {
    extern __shared__ __align__(128) unsigned char cg_smem[];
    const long cg_bz = (long)blockIdx.z; out += offo + cg_bz * bso; p0 += off0 + cg_bz * bs0; p1 += off1 + cg_bz * bs1; p2 += off2 + cg_bz * bs2;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int g = lane >> 2, q = lane & 3;
    const int n0 = blockIdx.x * CG_NB;
    const cg_ab_t* __restrict__ gx = CG_XP;
    const cg_ab_t* __restrict__ gw = CG_WP;
    (void)gx; (void)gw;
    /* This block's chunks of K, [cb, ce): split blockIdx.y of KSPLIT; the warps take
       every WARPS-th from cb + warp. */
    const int chunks = (K + CG_BK - 1) / CG_BK;
    const int cb = (int)((long long)blockIdx.y * chunks / KSPLIT);
    const int ce = (int)((long long)(blockIdx.y + 1) * chunks / KSPLIT);
    const int mine = ce - cb - warp > 0 ? (ce - cb - warp + WARPS - 1) / WARPS : 0;
    const unsigned ring = cg_smem_addr(cg_smem) + (unsigned)(warp * STAGES * CG_SLOT) * CG_ES;
    float acc[NT][MT][4];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int v = 0; v < 4; ++v) acc[nt][mt][v] = 0.0f;

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (CG_COPIES && s < mine)
            cg_copy(ring + (unsigned)(s * CG_SLOT) * CG_ES, cb + warp + s * WARPS, lane, gx, gw, CG_LDX, CG_LDW, n0, CG_R, CG_C, K);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
#pragma unroll 1
    for (int it = 0; it < mine; ++it) {
        asm volatile("cp.async.wait_group %0;\n" :: "n"(STAGES - 2) : "memory");
        __syncwarp();
        {
            const int nx = it + STAGES - 1;
            if (CG_COPIES && nx < mine)
                cg_copy(ring + (unsigned)((nx % STAGES) * CG_SLOT) * CG_ES, cb + warp + nx * WARPS, lane, gx, gw, CG_LDX, CG_LDW, n0, CG_R, CG_C, K);
            asm volatile("cp.async.commit_group;\n" ::: "memory");
        }
        const unsigned slot = ring + (unsigned)((it % STAGES) * CG_SLOT) * CG_ES;
        unsigned x[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) cg_ld_x(x[mt], slot, mt, lane);
        /* The chunk's two MMA k-steps (k16 in 16 bits, k8 in tf32). */
#pragma unroll
        for (int s = 0; s < 2; ++s)
#pragma unroll
            for (int nt = 0; nt < NT; ++nt) {
                unsigned a[4];
                cg_ld_w(a, slot, s, nt, lane);
                cg_frag_math(acc, nt, a, x, s);
            }
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    __syncthreads();

    /* Every warp's sums in shared memory (the ring's no longer), row-major with rows of
       CG_RS floats (a warp's stores hit 32 banks); the threads then add them in warp
       order. Element v of block (nt, mt): column 16nt + CG_SUM_COL(g, v), row 8mt + 2q
       (+1 for odd v). */
    float* const cg_sums = reinterpret_cast<float*>(cg_smem);
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int v = 0; v < 4; ++v)
                cg_sums[(warp * CG_MR + mt * 8 + q * 2 + (v & 1)) * CG_RS + nt * 16 + CG_SUM_COL(g, v)] = acc[nt][mt][v];
    __syncthreads();
#define CG_TR CG_MR
#define CG_RED(w, i, jj) cg_sums[((w) * CG_MR + (i)) * CG_RS + (jj)]
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
const int ci = i, cj = j;
            cg_st_f32(out, (long)(ci) * ldo + (cj), cg_epilogue(sum, ci, cj, M, N, p2, ld2));
        }
    }
}
