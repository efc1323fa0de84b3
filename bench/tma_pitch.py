"""What a row pitch that is an odd multiple of 16 bytes costs TMA box loads, and whether a
tensor map setting takes the cost away (issue 13's padded views, issue 10's 1000^3; run by
bench/h200-*-tma-pitch.sh; needs CuPy and the driver's libcuda).

Batch r1 measured the wgmma kernels paying +47% at 1000^3 when the operands' rows are
2000 bytes apart (every other 128-byte box row starts 16 bytes into a 32-byte sector)
against +5% at 2016 bytes and nothing at 2048, and Nsight Compute had the L2 doing about
twice the work for the same bytes. This takes the GEMM away and keeps its loads: one thread
a block (132 blocks, one a multiprocessor) streams boxes of `rows x box_k` elements of a
row-major f16 matrix through a ring of `stages` shared-memory stages with mbarriers, slab
after slab as a wgmma producer walks K, with nothing consuming them.

- `l2`: a 1000 x 1000 matrix (1000^3's A), each 64-row slab read by many blocks, as the
  GEMM's tiles read it: the loads hit L2 after the first.
- `dram`: a 16384 x 4096 matrix (128 MiB, over the L2) read once, as K + 8 views of the
  LLM shapes' weights are.
- `ceiling` (only when named): what TMA moves from L2 at most, by box height and ring
  depth, for a 2048-byte and a 2000-byte pitch, with the map in global memory (batch u2)
  and as a `__grid_constant__` parameter as the GEMM kernels pass it (u3).

For each pitch (elements: packed, + 8, + 16 or + 24 to a 64-byte multiple) the tensor map
varies in box width and swizzle (128-byte rows swizzled 128B as the kernels load; 64-byte
rows, 64B; 128- and 256-byte rows unswizzled) and in its L2 promotion (none, 64, 128, 256
bytes; the kernels use 256). Times: CUDA events around one launch, 120 MiB overwritten
before each run, median of 21 runs, as `crossgemm bench` times a call.
"""
import ctypes
import sys

import cupy as cp
from cuda_probe import CUDA_PRELUDE, Driver, EventTimer

SRC = r'''

/* Block b reads slabs b, b + G, ... of `reads` slab reads, slab s being rows
   (s % slabs) * box_rows .. + box_rows over all `ksteps` boxes of K, through a ring of
   `stages` stages (at most 16) of `stage_bytes` each (the box's bytes, which TMA always
   writes whole, zeros where the box leaves the matrix). `tmap` is the tensor map's
   generic address: in global memory (`tmard`) or the kernel's parameters (`tmard_param`,
   as the GEMM kernels take it: __grid_constant__, prefetched). */
__device__ __forceinline__ void body(const void* tmap, int slabs, int reads, int box_rows,
                                     int ksteps, int box_k, unsigned stage_bytes, int stages, unsigned* out) {
    extern __shared__ __align__(1024) unsigned char ring[];
    __shared__ __align__(8) unsigned long long bar[16];
    if (threadIdx.x != 0) return;
    for (int s = 0; s < stages; ++s)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sa(&bar[s])) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    const int mine = blockIdx.x < reads ? (reads - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
    const int steps = mine * ksteps;
    auto issue = [&](int t) {
        const int s = t % stages;
        const int slab = (blockIdx.x + (t / ksteps) * gridDim.x) % slabs;
        const int x = (t % ksteps) * box_k, y = slab * box_rows;
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                     :: "r"(sa(&bar[s])), "r"(stage_bytes) : "memory");
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                     :: "r"(sa(ring + s * stage_bytes)), "l"(tmap), "r"(x), "r"(y), "r"(sa(&bar[s])) : "memory");
    };
    for (int t = 0; t < stages && t < steps; ++t) issue(t);
    unsigned acc = 0;
    for (int t = 0; t < steps; ++t) {
        const int s = t % stages;
        const unsigned parity = (t / stages) & 1;
        mbar_wait(sa(&bar[s]), parity);
        acc ^= ring[s * stage_bytes + (t & 1023)];
        if (t + stages < steps) issue(t + stages);
    }
    if (acc == 0x9eu) out[0] = acc;
}
extern "C" __global__ void tmard(const unsigned long long* tmap, int slabs, int reads, int box_rows,
                                 int ksteps, int box_k, unsigned stage_bytes, int stages, unsigned* out) {
    body(tmap, slabs, reads, box_rows, ksteps, box_k, stage_bytes, stages, out);
}
struct __align__(64) Map { unsigned long long v[16]; };
extern "C" __global__ void tmard_param(const __grid_constant__ Map tmap, int slabs, int reads, int box_rows,
                                       int ksteps, int box_k, unsigned stage_bytes, int stages, unsigned* out) {
    if (threadIdx.x == 0) asm volatile("prefetch.tensormap [%0];" :: "l"(&tmap) : "memory");
    body(&tmap, slabs, reads, box_rows, ksteps, box_k, stage_bytes, stages, out);
}
'''

def main():
    which = sys.argv[1:] or ["l2", "dram"]
    mod = cp.RawModule(code=CUDA_PRELUDE + SRC, options=("-std=c++17", "--gpu-architecture=sm_90a"))
    kernels = {}
    for name in ("tmard", "tmard_param"):
        kernels[name] = mod.get_function(name)
        kernels[name].max_dynamic_shared_size_bytes = 200 << 10
    drv = Driver()
    timer = EventTimer()
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    out = cp.zeros(1, dtype=cp.uint32)

    def encode(base, rows, cols, pitch_bytes, box_rows, box_k, swizzle, promotion):
        """A 2-D f16 tensor map of `rows x cols` elements, rows `pitch_bytes` apart."""
        return drv.tensor_map(base, [cols, rows], [pitch_bytes], [box_k, box_rows], swizzle, promotion)

    def timed(tmap, blocks, slabs, reads, box_rows, ksteps, box_k, stages, param):
        """Median µs of one launch reading `reads` slabs through `tmap`, and its GB/s."""
        stage = box_rows * box_k * 2
        ints = (slabs, reads, box_rows, ksteps, box_k, stage, stages)
        if param:
            args = [tmap] + [ctypes.c_int32(int(v)) for v in ints] + [ctypes.c_uint64(out.data.ptr)]
            us = timer.median_us(lambda: drv.launch(kernels["tmard_param"], blocks, 32, stages * stage, args))
        else:
            dmap = cp.asarray(list(tmap), dtype=cp.uint64)
            args = tuple(cp.int32(v) for v in ints[:5]) + (cp.uint32(stage), cp.int32(stages))
            us = timer.median_us(lambda: kernels["tmard"]((blocks,), (32,), (dmap,) + args + (out,), shared_mem=stages * stage))
        return us, reads * ksteps * stage / us / 1e3

    if "ceiling" in which:
        # How much TMA moves from L2 at all, by box height and ring depth, for the aligned
        # and the odd pitch, with the map in global memory (u2) and as the GEMM kernels
        # pass it (a __grid_constant__ parameter, prefetched).
        which = [w for w in which if w != "ceiling"]
        rows, kk = 1024, 1024
        buf = cp.zeros(rows * 1024 + 64, dtype=cp.float16)
        print(f"# ceiling: {rows} x {kk} f16 (L2-resident), 128-byte box rows, swizzle 128B", flush=True)
        for param in (False, True):
            where = "param " if param else "global"
            for box_rows in (64, 128, 256):
                for stages in (4, 8, 12, 16):
                    if stages * box_rows * 128 > 200 << 10:
                        continue
                    line = []
                    for p in (1024, 1000):
                        tmap = encode(buf.data.ptr, rows, kk, p * 2, box_rows, 64, "128B", "256B")
                        us, gbs = timed(tmap, sms, rows // box_rows, sms * 4096 // box_rows, box_rows, kk // 64, 64, stages, param)
                        line.append(f"pitch {p}: {us:7.2f} us {gbs:6.0f} GB/s")
                    print(f"ceiling map {where} box {box_rows}x64 stages {stages:2d} | " + " | ".join(line), flush=True)
            # 1000^3's 128x128 tiles run on 64 of the 132 multiprocessors: what 64 blocks pull.
            for blocks in (64, sms):
                line = []
                for p in (1024, 1000):
                    tmap = encode(buf.data.ptr, rows, kk, p * 2, 128, 64, "128B", "256B")
                    us, gbs = timed(tmap, blocks, rows // 128, blocks * 32, 128, kk // 64, 64, 12, param)
                    line.append(f"pitch {p}: {us:7.2f} us {gbs:6.0f} GB/s")
                print(f"ceiling map {where} {blocks} blocks box 128x64 stages 12 | " + " | ".join(line), flush=True)

    # (box rows, box width in elements, swizzle, stages): the kernels' 128-byte rows, then
    # narrower and wider rows.
    boxes = [(64, 64, "128B", 8), (128, 64, "128B", 8), (64, 32, "64B", 16), (64, 64, "none", 8), (64, 128, "none", 8)]
    cases = {
        # name: rows, K, pitches (elements), slab reads
        "l2": (1000, 1000, [1000, 1008, 1016, 1024], 132 * 16),
        "dram": (16384, 4096, [4096, 4104, 4112, 4128], None),
    }
    for name in which:
        rows, kk, pitches, reads = cases[name]
        buf = cp.zeros(rows * max(pitches) + 64, dtype=cp.float16)
        print(f"# {name}: {rows} x {kk} f16, {sms} blocks of one thread", flush=True)
        for box_rows, box_k, swz, stages in boxes:
            for promo in (["none", "64B", "128B", "256B"] if (box_rows, box_k, swz) == (64, 64, "128B") else ["256B"]):
                line = []
                for p in pitches:
                    tmap = encode(buf.data.ptr, rows, kk, p * 2, box_rows, box_k, swz, promo)
                    slabs = -(-rows // box_rows)
                    us, gbs = timed(tmap, sms, slabs, reads or slabs, box_rows, -(-kk // box_k), box_k, stages, False)
                    line.append(f"pitch {p} ({p * 2 % 128:3d} mod 128): {us:7.2f} us {gbs:6.0f} GB/s")
                print(f"{name} box {box_rows}x{box_k} swizzle {swz:4s} promotion {promo:4s} | " + " | ".join(line), flush=True)


if __name__ == "__main__":
    main()
