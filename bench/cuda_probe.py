"""What the CuPy probes in bench/ (ceilings.py, carveout.py, tma_pitch.py, tma_boxes.py)
share: `crossgemm bench`'s timing protocol, and the driver calls CuPy does not wrap
(tensor maps, and launches whose arguments CuPy cannot pass, such as a 128-byte
`__grid_constant__` struct).

Scripts run from the repository root as `python3 bench/NAME.py`, so this module is on
their path.
"""
import ctypes

import cupy as cp

# What the probes' CUDA sources share (prepended to each): a generic pointer's
# shared-memory address, and the wait for an mbarrier's phase.
CUDA_PRELUDE = r'''
__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
/* Returns once the mbarrier at shared address `bar` has completed the phase of `parity`. */
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
    unsigned done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
}
'''

# The bench's L2 overwrite before each timed run: twice the H200's L2.
FLUSH_BYTES = 120 << 20


class EventTimer:
    """Times a launch as `crossgemm bench` times a call: before each run 120 MiB are
    overwritten by a driver memset (untimed, on the same stream), then CUDA events around
    the launch; the median of `runs` runs after 3 warm-up runs, µs.

    (Until session u's batch u6 the probes overwrote with a CuPy fill kernel, their
    results up to then included; the bench, and this, use a memset.)"""

    def __init__(self, runs=21):
        self.flush = cp.empty(FLUSH_BYTES, dtype=cp.uint8)
        self.runs = runs

    def median_us(self, launch, before=None):
        """`launch()` queues the work to time; `before()`, if given, queues untimed work
        after the overwrite."""
        stream = cp.cuda.get_current_stream()
        ts = []
        for i in range(self.runs + 3):
            cp.cuda.runtime.memsetAsync(self.flush.data.ptr, i & 0xFF, self.flush.nbytes, stream.ptr)
            if before is not None:
                before()
            s, e = cp.cuda.Event(), cp.cuda.Event()
            s.record(stream)
            launch()
            e.record(stream)
            e.synchronize()
            ts.append(cp.cuda.get_elapsed_time(s, e) * 1e3)
        ts = sorted(ts[3:])
        return ts[len(ts) // 2]


# CUtensorMapDataType, CUtensorMapSwizzle and CUtensorMapL2promotion values (cuda.h).
F16 = 6
SWIZZLE = {"none": 0, "32B": 1, "64B": 2, "128B": 3}
PROMOTION = {"none": 0, "64B": 1, "128B": 2, "256B": 3}


class Driver:
    """The CUDA driver through ctypes, for what CuPy does not wrap."""

    def __init__(self):
        self.cu = ctypes.CDLL("libcuda.so.1")

    def tensor_map(self, base, dims, strides, box, swizzle="128B", promotion="256B", dtype=F16):
        """A tiled tensor map (`cuTensorMapEncodeTiled`, interleave none, element strides
        1, out-of-bounds fill none): `dims` and `box` in elements, innermost first;
        `strides` in bytes for every dimension but the innermost. The 128-byte map, as a
        ctypes array."""
        r = len(dims)
        tmap = (ctypes.c_uint64 * 16)()
        err = self.cu.cuTensorMapEncodeTiled(
            ctypes.byref(tmap), dtype, r, ctypes.c_void_p(base), (ctypes.c_uint64 * r)(*dims),
            (ctypes.c_uint64 * (r - 1))(*strides), (ctypes.c_uint32 * r)(*box), (ctypes.c_uint32 * r)(*([1] * r)),
            0, SWIZZLE[swizzle], PROMOTION[promotion], 0)
        if err != 0:
            raise RuntimeError(f"cuTensorMapEncodeTiled: CUresult {err} for dims {dims} strides {strides} box {box}")
        return tmap

    def launch(self, kernel, grid, block, smem, args):
        """`kernel` (a CuPy RawKernel) through cuLaunchKernel on the legacy default stream
        (CuPy's, where EventTimer records), `args` being ctypes objects in the kernel's
        parameter order (a tensor map from `tensor_map` passes by value)."""
        params = (ctypes.c_void_p * len(args))(*[ctypes.cast(ctypes.pointer(a), ctypes.c_void_p) for a in args])
        err = self.cu.cuLaunchKernel(ctypes.c_void_p(kernel.kernel.ptr), grid, 1, 1, block, 1, 1, smem, None, params, None)
        if err != 0:
            raise RuntimeError(f"cuLaunchKernel: CUresult {err}")
