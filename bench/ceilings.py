"""What the H200's memory moves at the sizes of issue 10's bandwidth-bound rows, for the
notes' "is this target reachable" questions (run by bench/h200-*-ceilings.sh; needs CuPy).

Each kernel is timed as `crossgemm bench` times a call (`cuda_probe.EventTimer`: CUDA
events around one launch, 120 MiB overwritten before each run outside the events, median
of 21 runs); the best launch shape per size is printed.

- `rd{1,4,8}`: a streaming read, 16-byte loads grid-stride, 1/4/8 loads in flight a thread
  (batch s's read ceiling);
- `wr{1,4}`: a streaming write, 16-byte stores grid-stride;
- `bulkwr`: a write by bulk copies (`cp.async.bulk` shared to global, what a TMA-store
  epilogue would issue), each block writing 16 KiB pieces grid-stride with up to `depth`
  in flight;
- `colrd`: the decode family's access pattern read by bulk copies instead of loads:
  block b owns 16 columns of a K-contiguous B (8 KiB each at K = 4096) and walks K in
  pieces of `piece` bytes per column, one thread keeping `stages` stages of 16 pieces in
  flight through mbarriers (what a TMA-fed decode kernel would read).
- `tilewr`: the output of 4096x4096x128 written as a GEMM epilogue writes it: a
  persistent grid walking output tiles in the kernels' grouped order (GROUP_M 8), the
  block's threads writing each tile row by row in 16-byte stores (plain, or `st.global.cs`
  streaming stores), for tile shapes and block sizes like the wgmma family's; run alone
  with `python3 bench/ceilings.py tiles`.
"""
import sys

import cupy as cp
from cuda_probe import CUDA_PRELUDE, EventTimer

SRC = r'''
template <int U> __device__ void rd(const uint4* __restrict__ p, long long n, unsigned* out) {
    unsigned acc = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (U - 1) * stride < n; i += U * stride) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = __ldcs(p + i + u * stride);
#pragma unroll
        for (int u = 0; u < U; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < n; i += stride) { uint4 v = __ldcs(p + i); acc ^= v.x ^ v.y ^ v.z ^ v.w; }
    if (acc == 0x9e3779b9u) out[0] = acc;
}
extern "C" __global__ void rd1(const uint4* p, long long n, unsigned* out) { rd<1>(p, n, out); }
extern "C" __global__ void rd4(const uint4* p, long long n, unsigned* out) { rd<4>(p, n, out); }
extern "C" __global__ void rd8(const uint4* p, long long n, unsigned* out) { rd<8>(p, n, out); }

template <int U> __device__ void wr(uint4* __restrict__ p, long long n) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const uint4 v = make_uint4(i, 1, 2, 3);
    for (; i + (U - 1) * stride < n; i += U * stride) {
#pragma unroll
        for (int u = 0; u < U; ++u) p[i + u * stride] = v;
    }
    for (; i < n; i += stride) p[i] = v;
}
extern "C" __global__ void wr1(uint4* p, long long n) { wr<1>(p, n); }
extern "C" __global__ void wr4(uint4* p, long long n) { wr<4>(p, n); }


extern "C" __global__ void bulkwr(char* p, long long nbytes, int depth) {
    extern __shared__ __align__(128) unsigned char buf[];
    const int piece = 16384;
    for (int i = threadIdx.x; i < piece / 4; i += blockDim.x) reinterpret_cast<unsigned*>(buf)[i] = i;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x != 0) return;
    const long long pieces = nbytes / piece;
    int n = 0;
    for (long long c = blockIdx.x; c < pieces; c += gridDim.x) {
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                     :: "l"(p + c * piece), "r"(sa(buf)), "r"(piece) : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        if (++n >= depth) {
            // wait_group takes an immediate: keep at most depth - 1 pieces in flight.
            if (depth <= 2) asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
            else if (depth <= 4) asm volatile("cp.async.bulk.wait_group.read 3;" ::: "memory");
            else asm volatile("cp.async.bulk.wait_group.read 7;" ::: "memory");
        }
    }
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

extern "C" __global__ void colrd(const char* b, int colbytes, int piece, int stages, unsigned* out) {
    extern __shared__ __align__(128) unsigned char ring[];
    __shared__ __align__(8) unsigned long long bar[16];
    if (threadIdx.x != 0) return;
    for (int s = 0; s < stages; ++s)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sa(&bar[s])) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    const char* col0 = b + (long long)blockIdx.x * 16 * colbytes;
    const int steps = colbytes / piece;
    const unsigned stage_bytes = 16 * piece;
    auto issue = [&](int step) {
        const int s = step % stages;
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                     :: "r"(sa(&bar[s])), "r"(stage_bytes) : "memory");
        for (int j = 0; j < 16; ++j)
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                         :: "r"(sa(ring + s * stage_bytes + j * piece)), "l"(col0 + (long long)j * colbytes + (long long)step * piece),
                            "r"(piece), "r"(sa(&bar[s])) : "memory");
    };
    for (int t = 0; t < stages && t < steps; ++t) issue(t);
    unsigned acc = 0;
    for (int t = 0; t < steps; ++t) {
        const int s = t % stages;
        const unsigned parity = (t / stages) & 1;
        mbar_wait(sa(&bar[s]), parity);
        acc ^= ring[s * stage_bytes];
        if (t + stages < steps) issue(t + stages);
    }
    if (acc == 0x9eu) out[0] = acc;
}
/* Triton's grouped tile order, as the wgmma family walks tiles. */
__device__ __forceinline__ void coords(int tile, int grid_m, int grid_n, int group_m, int* tm, int* tn) {
    const int width = group_m * grid_n, group = tile / width, first = group * group_m;
    const int rows = grid_m - first < group_m ? grid_m - first : group_m, in = tile - group * width;
    *tm = first + in % rows;
    *tn = in / rows;
}
template <bool CS> __device__ void tilewr(uint4* c, int m, int n16, int bm, int bn16, int group_m) {
    const int grid_m = m / bm, grid_n = n16 / bn16, chunks = bm * bn16;
    for (int t = blockIdx.x; t < grid_m * grid_n; t += gridDim.x) {
        int tm, tn;
        coords(t, grid_m, grid_n, group_m, &tm, &tn);
        uint4* base = c + (long long)tm * bm * n16 + tn * bn16;
        const uint4 v = make_uint4(t, 1, 2, 3);
        for (int i = threadIdx.x; i < chunks; i += blockDim.x) {
            uint4* q = base + (long long)(i / bn16) * n16 + i % bn16;
            if (CS) __stcs(q, v); else *q = v;
        }
    }
}
extern "C" __global__ void tilewr_st(uint4* c, int m, int n16, int bm, int bn16, int g) { tilewr<false>(c, m, n16, bm, bn16, g); }
extern "C" __global__ void tilewr_cs(uint4* c, int m, int n16, int bm, int bn16, int g) { tilewr<true>(c, m, n16, bm, bn16, g); }
extern "C" __global__ void wr1cs(uint4* p, long long n) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) __stcs(p + i, make_uint4(i, 1, 2, 3));
}
'''


def main():
    tiles_only = sys.argv[1:] == ["tiles"]
    mod = cp.RawModule(code=CUDA_PRELUDE + SRC, options=("-std=c++17", "--gpu-architecture=sm_90a"))
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    out = cp.zeros(1, dtype=cp.uint32)
    med = EventTimer().median_us

    def report(what, mb, res):
        """The best three launch shapes, then the best of each kernel not among them."""
        res.sort()
        shown = res[:3]
        kernels = {desc.split(",")[0] for _, desc in shown}
        for us, desc in res[3:]:
            if desc.split(",")[0] not in kernels:
                kernels.add(desc.split(",")[0])
                shown.append((us, desc))
        for us, desc in shown:
            print(f"{what} {mb:.1f} MB: {us:.2f} us, {mb * 1e3 / us:.0f} GB/s ({desc})", flush=True)

    empty = cp.RawKernel('extern "C" __global__ void e() {}', "e")
    print(f"empty kernel between events: {med(lambda: empty((1,), (32,), ())):.2f} us", flush=True)
    if tiles_only:
        tiled_writes(mod, sms, med, report)
        return 0

    # Reads: B of 16x4096x4096 (33.5 MB) and of 128x8192x8192 (134.2 MB).
    for nbytes in (4096 * 4096 * 2, 8192 * 8192 * 2):
        n = nbytes // 16
        x = cp.ones(nbytes // 4, dtype=cp.uint32)
        res = []
        for name in ("rd1", "rd4", "rd8"):
            k = mod.get_function(name)
            for per_sm in (1, 2, 4, 8, 16):
                for threads in (256, 512, 1024):
                    if per_sm * threads > 2048:
                        continue
                    us = med(lambda: k((sms * per_sm,), (threads,), (x, cp.int64(n), out)))
                    res.append((us, f"{name}, {per_sm} blocks/SM x {threads}"))
        report("read", nbytes / 1e6, res)
        del x

    # Writes: C of 4096x4096x128 (33.5 MB, f16).
    nbytes = 4096 * 4096 * 2
    y = cp.empty(nbytes // 4, dtype=cp.uint32)
    res = []
    for name in ("wr1", "wr4"):
        k = mod.get_function(name)
        for per_sm in (1, 2, 4, 8, 16):
            for threads in (256, 512, 1024):
                if per_sm * threads > 2048:
                    continue
                us = med(lambda: k((sms * per_sm,), (threads,), (y, cp.int64(nbytes // 16))))
                res.append((us, f"{name}, {per_sm} blocks/SM x {threads}"))
    k = mod.get_function("bulkwr")
    for per_sm in (1, 2, 4):
        for depth in (2, 4, 8):
            us = med(lambda: k((sms * per_sm,), (128,), (y, cp.int64(nbytes), cp.int32(depth)), shared_mem=16384))
            res.append((us, f"bulkwr, {per_sm} blocks/SM, {depth} pieces of 16 KiB in flight"))
    report("write", nbytes / 1e6, res)
    ok = bool((y[: 16384 // 4] == cp.arange(16384 // 4, dtype=cp.uint32)).all())
    print(f"bulkwr wrote its pattern: {ok}")

    # The decode pattern by bulk copies: 4096 columns of 8 KiB (B of 16x4096x4096).
    k = mod.get_function("colrd")
    k.max_dynamic_shared_size_bytes = 200 * 1024
    x = cp.ones(4096 * 4096 * 2 // 4, dtype=cp.uint32)
    res = []
    for piece in (256, 512, 1024):
        for stages in (2, 4, 8, 12):
            smem = stages * 16 * piece
            if smem > 200 * 1024:
                continue
            us = med(lambda: k((4096 // 16,), (32,), (x, cp.int32(8192), cp.int32(piece), cp.int32(stages), out), shared_mem=smem))
            res.append((us, f"colrd, 256 blocks of 16 columns, {piece}-byte pieces, {stages} stages ({smem // 1024} KiB)"))
    report("decode-pattern bulk read", 4096 * 4096 * 2 / 1e6, res)



def tiled_writes(mod, sms, med, report):
    """C of 4096x4096x128 (f16, rows of 8192 bytes) written linearly and tile by tile."""
    m, n16 = 4096, 4096 * 2 // 16
    y = cp.empty(m * n16 * 4, dtype=cp.uint32)
    res = []
    for name in ("wr1cs",):
        k = mod.get_function(name)
        for per_sm, threads in ((1, 256), (1, 1024), (4, 256)):
            us = med(lambda: k((sms * per_sm,), (threads,), (y, cp.int64(m * n16))))
            res.append((us, f"{name} linear, {per_sm} blocks/SM x {threads}"))
    k = mod.get_function("wr4")
    us = med(lambda: k((sms,), (256,), (y, cp.int64(m * n16))))
    res.append((us, "wr4 linear, 1 blocks/SM x 256"))
    for name in ("tilewr_st", "tilewr_cs"):
        k = mod.get_function(name)
        for bm, bn in ((128, 128), (128, 256), (256, 128), (64, 256)):
            for per_sm, threads in ((1, 128), (1, 256), (1, 512), (2, 256)):
                for g in (8, 1):
                    us = med(lambda: k((sms * per_sm,), (threads,), (y, cp.int32(m), cp.int32(n16), cp.int32(bm), cp.int32(bn * 2 // 16), cp.int32(g))))
                    res.append((us, f"{name} {bm}x{bn} tiles, {per_sm} blocks/SM x {threads}, group {g}"))
    res.sort()
    for us, desc in res:
        print(f"write {m * n16 * 16 / 1e6:.1f} MB: {us:.2f} us, {m * n16 * 16 / 1e3 / us:.0f} GB/s ({desc})", flush=True)


if __name__ == "__main__":
    sys.exit(main())
