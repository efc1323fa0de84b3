"""What bounds TMA's intake from L2 per multiprocessor: box count, the L2's lines shared by
many SMs, or one issuing thread (batch u4; needs CuPy and the driver's libcuda).

Batches u2/u3 (`bench/tma_pitch.py ceiling`) found a one-thread ring of TMA boxes taking
the same ~275 ns per box whatever the box's size (64, 128 or 256 rows of 128 bytes) and
whatever the ring's depth (4 to 16 stages), the tensor map in global memory or a
`__grid_constant__` parameter alike. If the GEMM kernels' producers pay that per box, a
128x256 tile's two boxes a k-tile (~0.55 us) are as long as its math (~0.56 us at peak)
and fewer, larger boxes would pay. Before building them, this asks what the cost is:

- `shared` / `private`: every block re-reading slabs that ~8 other blocks read at the
  same moment (as u2, and as a GEMM's raster shares A and B), or each issuing thread its
  own slab (no line wanted by two SMs at once);
- `issuers 1/2/4`: the ring split between that many issuing threads of the block;
- `3d`: one rank-3 box of two 128-byte k-chunks by 128 rows (32 KiB, the layout of a
  two-row k-tile) against one 2-D box of 256 rows and two of 128;
- pitch 512 bytes (aligned) and 528 (an odd multiple of 16).

One launch per case (about 1 GiB of boxes), 132 blocks, timed as `crossgemm bench` times a call (events, 120 MiB
overwritten before each run, median of 21 runs).
"""
import ctypes

import cupy as cp
from cuda_probe import CUDA_PRELUDE, Driver, EventTimer

SRC = r'''
struct __align__(64) Map { unsigned long long v[16]; };

/* Threads 0..issuers-1 of each block each keep their own ring of stages / issuers stages.
   Issuing thread i of block b reads slab reads r = b + (j * issuers + i) * G (r < reads),
   slab r % slabs, all of its `ksteps` boxes along K: rank 2, box {64, box_rows} at
   {k * 64, row}; rank 3, box {64, box_rows, chunks} at {0, row, k * chunks}; "rank" 4,
   the rank-3 map with rows outermost, box {64, chunks, box_rows} at {0, k * chunks, row};
   "rank" 5, the row-pair map (rank 3 over {K, 2, rows / 2}), box {64, 2, box_rows / 2} at
   {k * 64, 0, row / 2}: the same bytes to the same shared addresses as rank 2. */
extern "C" __global__ void boxrd(const __grid_constant__ Map tmap, int rank, int slabs, int reads, int box_rows,
                                 int ksteps, int chunks, unsigned stage_bytes, int stages, int issuers, unsigned* out) {
    extern __shared__ __align__(1024) unsigned char ring[];
    __shared__ __align__(8) unsigned long long bar[16];
    const int me = threadIdx.x;
    if (me == 0) asm volatile("prefetch.tensormap [%0];" :: "l"(&tmap) : "memory");
    if (me >= issuers) return;
    const int spt = stages / issuers;
    for (int s = 0; s < spt; ++s)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(sa(&bar[me * spt + s])) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    const int first = blockIdx.x + me * gridDim.x, every = issuers * gridDim.x;
    const int mine = first < reads ? (reads - first + every - 1) / every : 0;
    const int steps = mine * ksteps;
    auto issue = [&](int t) {
        const int s = me * spt + t % spt;
        const int slab = (first + (t / ksteps) * every) % slabs, k = t % ksteps;
        const unsigned dst = sa(ring + s * stage_bytes), b = sa(&bar[s]);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(stage_bytes) : "memory");
        if (rank == 2)
            asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                         :: "r"(dst), "l"(&tmap), "r"(k * 64), "r"(slab * box_rows), "r"(b) : "memory");
        else if (rank == 4) /* rank 3, rows outermost */
            asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
                         :: "r"(dst), "l"(&tmap), "r"(0), "r"(k * chunks), "r"(slab * box_rows), "r"(b) : "memory");
        else if (rank == 5) /* row pairs */
            asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
                         :: "r"(dst), "l"(&tmap), "r"(k * 64), "r"(0), "r"(slab * box_rows / 2), "r"(b) : "memory");
        else
            asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
                         :: "r"(dst), "l"(&tmap), "r"(0), "r"(slab * box_rows), "r"(k * chunks), "r"(b) : "memory");
    };
    for (int t = 0; t < spt && t < steps; ++t) issue(t);
    unsigned acc = 0;
    for (int t = 0; t < steps; ++t) {
        const int s = me * spt + t % spt;
        const unsigned parity = (t / spt) & 1;
        mbar_wait(sa(&bar[s]), parity);
        acc ^= ring[s * stage_bytes + (t & 1023)];
        if (t + spt < steps) issue(t + spt);
    }
    if (acc == 0x9eu) out[0] = acc;
}
'''


class Probe:
    """The `boxrd` kernel compiled, a buffer of 132 x 4 x 256 rows of up to 264 f16 (2 MiB
    per 4096 rows), the driver and the bench's timer."""

    def __init__(self):
        mod = cp.RawModule(code=CUDA_PRELUDE + SRC, options=("-std=c++17", "--gpu-architecture=sm_90a"))
        self.k = mod.get_function("boxrd")
        self.k.max_dynamic_shared_size_bytes = 200 << 10
        self.drv = Driver()
        self.timer = EventTimer()
        self.sms = cp.cuda.Device().attributes["MultiProcessorCount"]
        self.out = cp.zeros(1, dtype=cp.uint32)
        self.private_rows = self.sms * 4 * 256
        self.buf = cp.zeros(self.private_rows * 264 + 64, dtype=cp.float16)

    def time(self, tmap, rank, slabs, box_rows, kk, chunks, stages, issuers):
        """Median µs of one launch reading about 1 GiB of boxes, and the boxes' bytes."""
        box_bytes = box_rows * 128 * max(chunks, 1)
        ksteps = kk // (64 * max(chunks, 1))
        # About 1 GiB of boxes a launch (u4 moved 64 MiB: ~30 boxes a multiprocessor,
        # too few to see past the launch and the ramp).
        reads = max(self.sms * issuers, (1 << 30) // (box_bytes * ksteps))
        reads -= reads % (self.sms * issuers)
        ints = (rank, slabs, reads, box_rows, ksteps, chunks, box_bytes, stages, issuers)
        args = [tmap] + [ctypes.c_int32(int(v)) for v in ints] + [ctypes.c_uint64(self.out.data.ptr)]
        us = self.timer.median_us(lambda: self.drv.launch(self.k, self.sms, 32, stages * box_bytes, args))
        return us, reads * ksteps * box_bytes, reads * ksteps / self.sms


def main():
    pr = Probe()
    drv, sms = pr.drv, pr.sms

    def encode(base, rows, kk, pitch_bytes, box_rows, chunks, chunk_outer=True):
        """Rank 2 ({kk, rows}, box {64, box_rows}) when chunks is 0, else rank 3 over
        128-byte k-chunks: chunk outermost ({64, rows, kk / 64}, strides {pitch, 128}, box
        {64, box_rows, chunks}: the two-row k-tile's layout, chunk after chunk) or rows
        outermost ({64, kk / 64, rows}, strides {128, pitch}: each row's chunks together)."""
        if chunks and chunk_outer:
            return drv.tensor_map(base, [64, rows, kk // 64], [pitch_bytes, 128], [64, box_rows, chunks])
        if chunks:
            return drv.tensor_map(base, [64, kk // 64, rows], [128, pitch_bytes], [64, chunks, box_rows])
        return drv.tensor_map(base, [kk, rows], [pitch_bytes], [64, box_rows])

    kk = 256
    # (label, private slabs, issuers, stages, box rows, chunks (0: rank 2), chunk outermost)
    cases = [
        ("shared  1 issuer  2d 128 rows", False, 1, 8, 128, 0, True),
        ("private 1 issuer  2d 128 rows", True, 1, 8, 128, 0, True),
        ("shared  2 issuers 2d 128 rows", False, 2, 8, 128, 0, True),
        ("shared  4 issuers 2d 128 rows", False, 4, 8, 128, 0, True),
        ("shared  1 issuer  2d 128 rows s12", False, 1, 12, 128, 0, True),
        ("shared  8 issuers 2d 128 rows", False, 8, 8, 128, 0, True),
        ("private 4 issuers 2d 128 rows", True, 4, 8, 128, 0, True),
        ("shared  1 issuer  2d 256 rows", False, 1, 4, 256, 0, True),
        ("shared  1 issuer  3d 128 rows x 2", False, 1, 4, 128, 2, True),
        ("shared  4 issuers 3d 128 rows x 2", False, 4, 4, 128, 2, True),
        ("private 1 issuer  2d 64 rows", True, 1, 16, 64, 0, True),
        ("shared  1 issuer  3d 2 chunks x 128 rows", False, 1, 4, 128, 2, False),
    ]
    print(f"# {sms} blocks; K = {kk} (512-byte rows, or 528 with the odd pitch); a box row is 128 bytes", flush=True)
    for label, private, issuers, stages, box_rows, chunks, chunk_outer in cases:
        line = []
        for pitch in (kk, kk + 8):
            rows = pr.private_rows if private else 1024
            slabs = (sms * issuers) if private else rows // box_rows
            try:
                tmap = encode(pr.buf.data.ptr, rows, kk, pitch * 2, box_rows, chunks, chunk_outer)
            except RuntimeError as e:
                line.append(f"pitch {pitch * 2}: {e}")
                continue
            rank = (3 if chunk_outer else 4) if chunks else 2
            us, nbytes, boxes = pr.time(tmap, rank, slabs, box_rows, kk, chunks, stages, issuers)
            line.append(f"pitch {pitch * 2}: {us:7.2f} us {nbytes / us / 1e3:6.0f} GB/s {us * 1e3 / boxes:5.0f} ns/box/SM")
        print(f"{label:34s} | " + " | ".join(line), flush=True)


def pairs():
    """`tma_boxes.py pairs` (session v): does the odd-16 pitch's cost follow the rows'
    addresses or the map's stride? The same 128-row boxes of shared slabs, by pitch (512,
    528 = odd 16, 544 = odd 32), through the 2-D map; through a row-pair map (rank 3 over
    {K, 2, rows / 2}, strides {pitch, 2 pitch}: every stride of it a multiple of 32 bytes
    but the pair's, the same addresses and the same shared layout); and the 2-D map from a
    base 16 bytes in (every row's start 16 bytes off a sector, every stride aligned)."""
    pr = Probe()
    kk, rows, box_rows = 256, 1024, 128
    print(f"# {pr.sms} blocks; K = {kk}; 128-row boxes of 128-byte rows, {rows} rows shared by all blocks", flush=True)
    for issuers in (1, 4):
        for pitch in (512, 528, 544):
            for how in ("2d", "pairs", "2d base+16"):
                if how == "2d base+16" and pitch != 512:
                    continue
                base = pr.buf.data.ptr + (16 if how == "2d base+16" else 0)
                if how == "pairs":
                    tmap = pr.drv.tensor_map(base, [kk, 2, rows // 2], [pitch, 2 * pitch], [64, 2, box_rows // 2])
                else:
                    tmap = pr.drv.tensor_map(base, [kk, rows], [pitch], [64, box_rows])
                us, nbytes, boxes = pr.time(tmap, 5 if how == "pairs" else 2, rows // box_rows, box_rows, kk, 0, 8, issuers)
                print(f"{issuers} issuer(s) pitch {pitch} {how:11s} | {us:7.2f} us {nbytes / us / 1e3:6.0f} GB/s "
                      f"{us * 1e3 / boxes:5.0f} ns/box/SM", flush=True)


if __name__ == "__main__":
    import sys

    pairs() if sys.argv[1:] == ["pairs"] else main()
