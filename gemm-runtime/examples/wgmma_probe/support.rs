//! Header-free helper kernels of the probe: random fills, the reference epilogue, and
//! the comparisons (all on the device, so that 8192² outputs need no host copies).

pub const SOURCE: &str = r#"
static __device__ __forceinline__ float sp_h2f(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
static __device__ __forceinline__ float sp_b2f(unsigned short h) { return __uint_as_float(((unsigned)h) << 16); }
static __device__ __forceinline__ unsigned short sp_f2h(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
static __device__ __forceinline__ unsigned short sp_f2b(float f) { unsigned short h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
static __device__ __forceinline__ unsigned sp_hash(unsigned x) {
    x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16; return x;
}
static __device__ __forceinline__ bool sp_isnan(float v) { return (__float_as_uint(v) & 0x7fffffffu) > 0x7f800000u; }
#define SP_LOOP(n) for (unsigned long long x = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; x < (n); x += (unsigned long long)gridDim.x * blockDim.x)

/* Uniform in [-1, 1) with |v| >= 1/64: random, never zero. */
extern "C" __global__ void sp_fill16(unsigned short* p, unsigned long long n, unsigned seed, int bf16) {
    SP_LOOP(n) {
        const unsigned h = sp_hash((unsigned)x ^ sp_hash(seed * 0x9e3779b9u + (unsigned)(x >> 32)));
        float u = (float)(h >> 8) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
        if (fabsf(u) < 1.0f / 64.0f) u = u < 0.0f ? -1.0f / 64.0f : 1.0f / 64.0f;
        p[x] = bf16 ? sp_f2b(u) : sp_f2h(u);
    }
}

/* r = relu(r + bias[j]) on a row-major M x N f32 matrix. */
extern "C" __global__ void sp_bias_relu(float* r, const unsigned short* bias, int M, int N, int bf16) {
    SP_LOOP((unsigned long long)M * N) {
        const int j = (int)(x % (unsigned long long)N);
        const float b = bf16 ? sp_b2f(bias[j]) : sp_h2f(bias[j]);
        r[x] = fmaxf(r[x] + b, 0.0f);
    }
}

/* The epilogues of the probe's kinds on a row-major M x N f32 product r, in place:
   which 1 = relu(r + v[j]), 2 = gelu(r + v[j]) (tanh form, libdevice tanhf),
   3 = silu(r * s + v[i]) + res[i * N + j]; v and res are f16 (bf16 when bf16 is set). */
extern "C" __global__ void sp_epi(float* r, const unsigned short* v, const unsigned short* res, int M, int N, int bf16, int which, float s) {
    SP_LOOP((unsigned long long)M * N) {
        const int i = (int)(x / (unsigned long long)N), j = (int)(x % (unsigned long long)N);
        const unsigned short vv = which == 3 ? v[i] : v[j];
        const float b = bf16 ? sp_b2f(vv) : sp_h2f(vv);
        float y = r[x];
        if (which == 1) y = fmaxf(y + b, 0.0f);
        else if (which == 2) { y += b; y = 0.5f * y * (1.0f + tanhf(0.7978846f * (y + 0.044715f * y * y * y))); }
        else {
            const float t = y * s + b;
            const float rr = bf16 ? sp_b2f(res[x]) : sp_h2f(res[x]);
            y = t / (1.0f + expf(-t)) + rr;
        }
        r[x] = y;
    }
}

/* stats[4] += elements of o off the test suite's per-element tolerance (tests/common
   assert_close): |o - w| > 2 e |w| + floor + e / 1000, w = r rounded to the output type
   (odt), e its epsilon, floor = 1e-5 (sqrt(K) + 1). */
extern "C" __global__ void sp_strict(const void* o, int odt, const float* r, int M, int N, int out_col, float floor, unsigned* stats) {
    unsigned bad = 0;
    SP_LOOP((unsigned long long)M * N) {
        const unsigned long long i = x / (unsigned long long)N, j = x % (unsigned long long)N;
        const unsigned long long oi = out_col ? j * (unsigned long long)M + i : x;
        float v, w, e;
        if (odt == 0) { v = ((const float*)o)[oi]; w = r[x]; e = 1.1920929e-7f; }
        else if (odt == 1) { v = sp_h2f(((const unsigned short*)o)[oi]); w = sp_h2f(sp_f2h(r[x])); e = 9.765625e-4f; }
        else { v = sp_b2f(((const unsigned short*)o)[oi]); w = sp_b2f(sp_f2b(r[x])); e = 7.8125e-3f; }
        if (!(fabsf(v - w) <= 2.0f * e * fabsf(w) + floor + e * 1e-3f) && v != w) ++bad;
    }
    if (bad) atomicAdd(&stats[4], bad);
}

/* stats[0] = max |r| (float bits). */
extern "C" __global__ void sp_absmax(const float* r, unsigned long long n, unsigned* stats) {
    float m = 0.0f;
    SP_LOOP(n) m = fmaxf(m, fabsf(r[x]));
    atomicMax(&stats[0], __float_as_uint(m));
}

/* Compares output o (odt: 0 f32, 1 f16, 2 bf16; row-major, or column-major if out_col)
   with the row-major f32 reference r: stats[1] = max |o - r| (float bits), stats[2] =
   NaN count (unwritten elements: the output was poisoned with 0xFF bytes). */
extern "C" __global__ void sp_compare(const void* o, int odt, const float* r, int M, int N, int out_col, unsigned* stats) {
    float m = 0.0f;
    unsigned nans = 0;
    SP_LOOP((unsigned long long)M * N) {
        const unsigned long long i = x / (unsigned long long)N, j = x % (unsigned long long)N;
        const unsigned long long oi = out_col ? j * (unsigned long long)M + i : x;
        float v;
        if (odt == 0) v = ((const float*)o)[oi];
        else if (odt == 1) v = sp_h2f(((const unsigned short*)o)[oi]);
        else v = sp_b2f(((const unsigned short*)o)[oi]);
        if (sp_isnan(v)) ++nans;
        else m = fmaxf(m, fabsf(v - r[x]));
    }
    atomicMax(&stats[1], __float_as_uint(m));
    if (nans) atomicAdd(&stats[2], nans);
}

/* stats[3] += bytes where a and b differ. */
extern "C" __global__ void sp_bitsdiff(const unsigned char* a, const unsigned char* b, unsigned long long n, unsigned* stats) {
    unsigned d = 0;
    SP_LOOP(n) d += a[x] != b[x];
    if (d) atomicAdd(&stats[3], d);
}
"#;
