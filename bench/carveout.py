"""What a kernel that asks for most of the shared memory pays between CUDA events after
the bench's L2 overwrite (a driver memset), against one that asks for little: batch t7
found the large-shared-memory GEMM kernels (ours and cuBLAS's) 6-8 us longer between
events than their Nsight Compute duration, the decode kernel 2.4. Run by
bench/h200-2026-12-03t8-carveout.sh; needs CuPy.

Each case: a 120 MiB cudaMemsetAsync (untimed), optionally an untimed launch, then CUDA
events around one launch; median of 21 after 3 warm-up runs. The kernels: `empty` (no
work; its dynamic shared memory is the launch's) and `rd` (ceilings.py's `rd4`: a
grid-stride read of 100.7 MB, the B of 1x12288x4096, 16-byte loads, 4 in flight a thread;
two 1024-thread blocks an SM, so at most half the shared memory each). Until session v
`rd` was a copy of that kernel reading one byte of its dynamic shared memory.
"""
import cupy as cp
from cuda_probe import CUDA_PRELUDE, EventTimer
from ceilings import SRC as CEILINGS_SRC

# `rd` is ceilings.py's 4-deep read (`rd4`): a launch's dynamic shared memory is allocated
# whether or not the kernel declares it, so the same kernel serves every size here.
SRC = CEILINGS_SRC + r'''
extern "C" __global__ void empty(int* out) {
    extern __shared__ char s[];
    if (threadIdx.x == 100000) out[0] = s[0];
}
'''
mod = cp.RawModule(code=CUDA_PRELUDE + SRC, options=("-std=c++17", "--gpu-architecture=sm_90a"))
empty, rd = mod.get_function("empty"), mod.get_function("rd4")
BIG = 216 * 1024
for f in (empty, rd):
    f.max_dynamic_shared_size_bytes = BIG
sms = cp.cuda.Device().attributes["MultiProcessorCount"]
out = cp.zeros(4, dtype=cp.uint32)
data = cp.ones(int(100.7e6) // 16 * 4, dtype=cp.uint32)
n16 = data.size // 4


def launch(kind, smem):
    if kind == "empty":
        empty((sms,), (384,), (out,), shared_mem=smem)
    else:
        rd((sms * 2,), (1024,), (data, cp.int64(n16), out), shared_mem=smem)


timer = EventTimer()


def case(kind, smem, prime=None):
    before = None if prime is None else (lambda: launch("empty", prime))
    return timer.median_us(lambda: launch(kind, smem), before)


rows = [
    ("empty", 0, None), ("empty", 48 << 10, None), ("empty", 100 << 10, None), ("empty", BIG, None),
    ("empty", BIG, BIG), ("empty", 0, BIG),
    ("rd", 0, None), ("rd", BIG // 2, None), ("rd", BIG // 2, BIG // 2),
]
for kind, smem, prime in rows:
    t = case(kind, smem, prime)
    p = "none" if prime is None else f"{prime >> 10} KB"
    print(f"{kind:5s} dynamic smem {smem >> 10:4d} KB, untimed launch before it: {p:7s} -> {t:6.2f} us")
