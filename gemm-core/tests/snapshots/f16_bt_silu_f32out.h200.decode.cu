/* crossgemm: cg_f16_bt_silu_f32out_8eb01f64 = (silu((acc - shift)) / 2.0) (decode mma.sync m16n8k16, swap-AB, A RowMajor, B ColMajor, out f32 RowMajor) */
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

#define CG_THREADS (WARPS * 32)
#define CG_GROUPS (WARPS / KW)
#define CG_WN (NT * 16)
#define CG_NB (CG_GROUPS * CG_WN)
#define CG_FR (NT * MT * 4)
#define CG_CK 32
typedef unsigned short cg_ab_t;
#define CG_EPC 8
#define CG_XK (8 * (lane >> 3) + ((lane >> 2) & 1))
#define CG_XR (2 * q)
static __device__ __forceinline__ cg_u4 cg_ld_part(const cg_ab_t* p, int valid) {
    unsigned e[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) e[i] = i < valid ? (unsigned)p[i] : 0u;
    return cg_u4{e[0] | e[1] << 16, e[2] | e[3] << 16, e[4] | e[5] << 16, e[6] | e[7] << 16};
}
static_assert(BK == CG_CK, "a chunk is four lanes' 16 bytes: 32 k of 16-bit elements, 16 of f32");
static_assert(WARPS % KW == 0, "KW must divide WARPS");
static_assert(MT >= 1 && MT <= 8 && NT >= 1 && NT <= 4, "MT 1-8, NT 1-4");
#ifndef SWAP
#define SWAP 0
#endif
#if SWAP
/* Turned around: C^T = B^T A^T, N <= 8 * MT. */
#define CG_R N
#define CG_C M
#define CG_XP p1
#define CG_WP p0
#define CG_LDX ld1
#define CG_LDW ld0
#define CG_X_KMAJ 1
#define CG_X_VEC B_VEC
#define CG_X_ALIGN B_ALIGN
#define CG_W_VEC A_VEC
#else
#define CG_R M
#define CG_C N
#define CG_XP p0
#define CG_WP p1
#define CG_LDX ld0
#define CG_LDW ld1
#define CG_X_KMAJ 1
#define CG_X_VEC A_VEC
#define CG_X_ALIGN A_ALIGN
#define CG_W_VEC B_VEC
#endif

/* Chunks in flight a super-step: a window holds two chunks until it is shifted, so rows
   at any alignment take half the unroll (at the whole one ptxas spilled at 128
   registers: MT = 4 with NT = 2, or with a rotated walk), and so does a small side
   stored across from 32 rows on, or from 16 where a pair is two loads (their loads
   spilled at 128 registers); four loads of f32 elements count as pairs. So does tf32
   at 32 accumulators: rounding the words spilled 4 bytes at 128 registers (MT = 4 with
   NT = 2, whole chunks). */
#if CG_X_KMAJ
#define CG_X_HEAVY 0
#elif CG_X_ALIGN >= 2 || CG_EPC == 4
#define CG_X_HEAVY (MT >= 4)
#else
#define CG_X_HEAVY (MT >= 2)
#endif
#if CG_W_VEC && CG_X_VEC && !CG_X_HEAVY && !(CG_EPC == 4 && MT * NT >= 8)
#define CG_UNROLL UNROLL
#else
#define CG_UNROLL ((UNROLL + 1) / 2)
#endif
#ifndef ROT
#define ROT 0
#endif
/* B: read once by the whole grid. The L1 keeps none of it, and the L2 fetches the
   256 bytes around each miss (a column's next chunks, which this lane's quad reads next). */
static __device__ __forceinline__ cg_u4 cg_ld_stream(const cg_ab_t* p) {
    cg_u4 v;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
/* A: read by every block; the column groups of a block read the same chunk (L1 hits). */
static __device__ __forceinline__ cg_u4 cg_ld_cached(const cg_ab_t* p) {
    cg_u4 v;
    asm("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
/* By whole words through selects (no indexing, which would put the words in local
   memory), then by the rest through funnel shifts. */
static __device__ __forceinline__ cg_u4 cg_shift_down(const cg_u4& lo, const cg_u4& hi, unsigned off) {
    unsigned x0 = lo.x, x1 = lo.y, x2 = lo.z, x3 = lo.w, x4 = hi.x, x5 = hi.y, x6 = hi.z, x7 = hi.w;
    if (off & 8u) { x0 = x2; x1 = x3; x2 = x4; x3 = x5; x4 = x6; x5 = x7; }
    if (off & 4u) { x0 = x1; x1 = x2; x2 = x3; x3 = x4; x4 = x5; }
    const unsigned sh = (off & 3u) * 8u;
    return cg_u4{__funnelshift_r(x0, x1, sh), __funnelshift_r(x1, x2, sh), __funnelshift_r(x2, x3, sh), __funnelshift_r(x3, x4, sh)};
}
/* A chunk's CG_EPC elements at p where rows may start anywhere in a 16-byte chunk (an odd K,
   a view of odd pitch): the aligned chunk holding p and, unless p is aligned, the next,
   which holds the window's last element (whole chunks only: every element is the row's),
   shifted down into place. Through the L1 (unlike B's aligned stream): a lane's second
   chunk is its neighbour's first. */
static __device__ __forceinline__ cg_u4 cg_ld_win(const cg_ab_t* p) {
    const unsigned off = (unsigned)(unsigned long long)p & 15u;
    const cg_ab_t* c = p - off / sizeof(cg_ab_t);
    const cg_u4 lo = cg_ld_cached(c);
    return cg_shift_down(lo, off ? cg_ld_cached(c + CG_EPC) : lo, off);
}
/* Diagnosis variant compute_only's stand-in for a load: words that depend on the chunk. */
static __device__ __forceinline__ cg_u4 cg_fake(int c, unsigned salt) {
    const unsigned h = (unsigned)c * 0x9E3779B9u + salt;
    return cg_u4{h & 0x3bff3bffu, (h >> 3) & 0x3bff3bffu, (h >> 5) & 0x3bff3bffu, (h >> 7) & 0x3bff3bffu};
}
/* A chunk's 16 bytes at p (chunk index c). */
#if CG_W_VEC
#define CG_LOAD_B(p, c) cg_ld_stream(p)
#else
#define CG_LOAD_B(p, c) cg_ld_win(p)
#endif
#if CG_X_VEC
#define CG_LOAD_A(p, c) cg_ld_cached(p)
#else
#define CG_LOAD_A(p, c) cg_ld_win(p)
#endif
#if !CG_X_KMAJ
static __device__ __forceinline__ unsigned short cg_ld_u16(const cg_ab_t* p) {
    unsigned short v;
    asm("ld.global.nc.u16 %0, [%1];" : "=h"(v) : "l"(p));
    return v;
}
static __device__ __forceinline__ unsigned cg_ld_u32(const cg_ab_t* p) {
    unsigned v;
    asm("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}
/* movmatrix.trans takes lane l's pair (rows 2(l % 4), +1 of the block) at row l / 4 of an
   8x8 piece and gives lane (g, q) row g's entries 2q, 2q + 1 of it: with piece row
   rho = l / 4 standing for k = 8(rho / 2) + 2j + rho % 2 (xk + 2j, xk the lane's k of
   word 0), lane (g, q) gets row g's k pair 8q + 2j, 8q + 2j + 1: word j of the chunk.
   Where the side's pitch and start are even (CG_X_ALIGN >= 2) a pair is one 4-byte
   load, and the last row of an odd count is read alone (the pair's other row is past
   the last: its sums are never stored, whatever it reads); else two 2-byte loads, rows
   past the last reading the last. k past K reads zero. */
static __device__ __forceinline__ cg_u4 cg_ld_across(const cg_ab_t* xq, int xk, int xr, int mt, int c, int kvalid, int rows, long ld) {
    const int r0 = min(8 * mt + xr, rows - 1);
    const cg_ab_t* pc = xq + (long)c * CG_CK * ld + r0;
    unsigned w[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const cg_ab_t* p = pc + 2 * j * ld;
        unsigned v = 0u;
        if (xk + 2 * j < kvalid) {
#if CG_X_ALIGN >= 2
            v = r0 + 1 < rows ? cg_ld_u32(p) : (unsigned)cg_ld_u16(p) * 0x10001u;
#else
            v = (unsigned)cg_ld_u16(p) | (unsigned)cg_ld_u16(p + (r0 + 1 < rows)) << 16;
#endif
        }
        asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(w[j]) : "r"(v));
    }
    return cg_u4{w[0], w[1], w[2], w[3]};
}
#define CG_LOAD_ACROSS(mt, c, kvalid) cg_ld_across(xq, xk, xr, mt, c, kvalid, CG_R, CG_LDX)
#endif
static __device__ __forceinline__ void cg_mma(float* c, unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
static __device__ __forceinline__ void cg_chunk(float (&acc)[NT][MT][4], const cg_u4 (&w)[NT][2], const cg_u4 (&x)[MT]) {
    const cg_u4 (&wr)[NT][2] = w;
    const cg_u4 (&xr)[MT] = x;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
            cg_mma(acc[nt][mt], wr[nt][0].x, wr[nt][1].x, wr[nt][0].y, wr[nt][1].y, xr[mt].x, xr[mt].y);
            cg_mma(acc[nt][mt], wr[nt][0].z, wr[nt][1].z, wr[nt][0].w, wr[nt][1].w, xr[mt].z, xr[mt].w);
        }
}

/* Sixteen warps per SM (two blocks of 8, four of 4): 128 registers a thread. Without a
   minimum, ptxas picked 80 for the 32-row tiles and spilled. */
extern "C" __global__ void __launch_bounds__(CG_THREADS, 16 / WARPS) cg_f16_bt_silu_f32out_8eb01f64(int M, int N, int K, float* __restrict__ out, const unsigned short* __restrict__ p0, const unsigned short* __restrict__ p1, const float* __restrict__ p2, int ldo, long offo, int ld0, long off0, int ld1, long off1, long off2, long bso, long bs0, long bs1, long bs2, int nbatch) {
    extern __shared__ float cg_red[];
    const long cg_bz = (long)blockIdx.z; out += offo + cg_bz * bso; p0 += off0 + cg_bz * bs0; p1 += off1 + cg_bz * bs1; p2 += off2 + cg_bz * bs2;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, q = lane & 3;
    const int group = warp / KW, part = warp % KW;
    const int n0 = blockIdx.x * CG_NB + group * CG_WN;
    const cg_ab_t* __restrict__ ga = CG_XP;
    const cg_ab_t* __restrict__ gb = CG_WP;
    (void)ga; (void)gb;
    /* This lane's columns (g and g + 8 of each 16-column block) and rows (g of each 8-row
       block), at its CG_EPC elements of a chunk. Columns past CG_C and rows past CG_R read the
       last one instead (always in bounds: M, N >= 1 at launch); those sums are never
       stored. */
    const cg_ab_t* wp[NT][2];
    const cg_ab_t* xp[MT];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int n = min(n0 + nt * 16 + h * 8 + g, CG_C - 1);
            wp[nt][h] = gb + (long)n * CG_LDW + q * CG_EPC;
        }
#if CG_X_KMAJ
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) xp[mt] = ga + (long)min(mt * 8 + g, CG_R - 1) * CG_LDX + q * CG_EPC;
#else
    /* Stored across: this lane's k of word 0 in a chunk and its pair of rows in a block. */
    [[maybe_unused]] const int xk = CG_XK, xr = CG_XR;
    [[maybe_unused]] const cg_ab_t* xq = ga + (long)xk * CG_LDX;
    (void)xp;
#endif

    float acc[NT][MT][4];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int v = 0; v < 4; ++v) acc[nt][mt][v] = 0.0f;
#if CG_PROMOTE
    /* The sums of the accumulators of every super-step (family::promotes). */
    float cg_sum[NT][MT][4];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int v = 0; v < 4; ++v) cg_sum[nt][mt][v] = 0.0f;
    auto cg_promote = [&]() {
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int v = 0; v < 4; ++v) {
                    cg_sum[nt][mt][v] += acc[nt][mt][v];
                    acc[nt][mt][v] = 0.0f;
                }
    };
#endif

    /* Whole super-steps: part p of a group takes chunks p*CG_UNROLL .. p*CG_UNROLL+CG_UNROLL-1 of
       every KW*CG_UNROLL, so the group reads each column front to back. Not unrolled
       further: CG_UNROLL says how many loads are in flight, and ptxas unrolling it again
       spilled at 128 registers.
       With ROT each block starts its walk at its own CG_UNROLL-aligned chunk and wraps:
       blocks in step would all read the same chunk of A at once (every block's request
       for one line at one L2 slice). Decode::defines says which tiles rotate. */
    const int step = KW * CG_UNROLL;
    const int whole = K / CG_CK / step * step;
#if ROT
    const int rot = whole > 0 ? (int)(blockIdx.x % (unsigned)(whole / CG_UNROLL)) * CG_UNROLL : 0;
#else
    const int rot = 0;
#endif
#pragma unroll 1
    for (int v = part * CG_UNROLL; v < whole; v += step) {
        const int c = v + rot < whole ? v + rot : v + rot - whole;
        cg_u4 w[CG_UNROLL][NT][2], x[CG_UNROLL][MT];
#pragma unroll
        for (int u = 0; u < CG_UNROLL; ++u)
#pragma unroll
            for (int nt = 0; nt < NT; ++nt)
#pragma unroll
                for (int h = 0; h < 2; ++h) w[u][nt][h] = CG_LOAD_B(wp[nt][h] + (long)(c + u) * CG_CK, c + u);
#pragma unroll
        for (int u = 0; u < CG_UNROLL; ++u)
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#if CG_X_KMAJ
                x[u][mt] = CG_LOAD_A(xp[mt] + (long)(c + u) * CG_CK, c + u);
#else
                x[u][mt] = CG_LOAD_ACROSS(mt, c + u, CG_CK);
#endif
#pragma unroll
        for (int u = 0; u < CG_UNROLL; ++u) cg_chunk(acc, w[u], x[u]);
#if CG_PROMOTE
        cg_promote();
#endif
    }
    /* The rest, a chunk at a time over the parts: whole chunks, then the one that
       crosses K (element loads, zeros past K in A and B alike). */
    const int chunks = (K + CG_CK - 1) / CG_CK;
#pragma unroll 1
    for (int c = whole + part; c < chunks; c += KW) {
        const int valid = K - c * CG_CK - q * CG_EPC;
        cg_u4 w[NT][2], x[MT];
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const cg_ab_t* p = wp[nt][h] + (long)c * CG_CK;
                w[nt][h] = valid >= CG_EPC ? CG_LOAD_B(p, c) : cg_ld_part(p, valid);
            }
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
#if CG_X_KMAJ
            const cg_ab_t* p = xp[mt] + (long)c * CG_CK;
            x[mt] = valid >= CG_EPC ? CG_LOAD_A(p, c) : cg_ld_part(p, valid);
#else
            x[mt] = CG_LOAD_ACROSS(mt, c, K - c * CG_CK);
#endif
        }
        cg_chunk(acc, w, x);
    }
#if CG_PROMOTE
    /* The tail's few chunks (fewer than a super-step a part) are one run. */
    cg_promote();
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int v = 0; v < 4; ++v) acc[nt][mt][v] = cg_sum[nt][mt][v];
#endif

    /* The KW parts of a group: parts 1.. park their sums, part 0 adds them in part order
       (the same bits on every run). Lane-minor, so a store of the warp hits 32 banks. */
#define CG_EACH_ACC(STMT)                                                    \
    {                                                                        \
        int e = 0;                                                           \
        _Pragma("unroll") for (int nt = 0; nt < NT; ++nt)                    \
            _Pragma("unroll") for (int mt = 0; mt < MT; ++mt)                \
                _Pragma("unroll") for (int v = 0; v < 4; ++v, ++e) { STMT; } \
    }
    if (KW > 1) {
        if (part > 0) {
            float* r = cg_red + (group * (KW - 1) + part - 1) * CG_FR * 32 + lane;
            CG_EACH_ACC(r[32 * e] = acc[nt][mt][v]);
        }
        __syncthreads();
        if (part == 0) {
            for (int p = 1; p < KW; ++p) {
                const float* r = cg_red + (group * (KW - 1) + p - 1) * CG_FR * 32 + lane;
                CG_EACH_ACC(acc[nt][mt][v] += r[32 * e]);
            }
        }
    }
    if (part != 0) return;
    /* Element v of block (nt, mt): column n0 + 16nt + g (+8 for v >= 2), row 8mt + 2q
       (+1 for odd v). */
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int v = 0; v < 4; ++v) {
                const int i = mt * 8 + q * 2 + (v & 1);
                const int j = n0 + nt * 16 + g + (v >> 1) * 8;
                if (i < CG_R && j < CG_C) {
                    const float acc_v = acc[nt][mt][v];
                    {
                        const float acc = acc_v;
#if SWAP
            const int ci = j, cj = i;
#else
            const int ci = i, cj = j;
#endif
                        cg_st_f32(out, (long)(ci) * ldo + (cj), cg_epilogue(acc, ci, cj, M, N, p2));
                    }
                }
            }
}
