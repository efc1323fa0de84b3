#!/usr/bin/env bash
# Session l, batch s (the CLI of .dev/s, built at the commit in .dev/s/COMMIT with
# `baseline,aot`): 1. what a plain streaming read moves on this H200 at the decode
# shapes' sizes (B of 16x4096x4096 is 33.5 MB, of 1x12288x4096 100.7 MB), to place
# batch q's 74% of DRAM peak: CuPy kernels reading 16-byte vectors grid-stride with 1, 4
# and 8 loads in flight per thread over grids of 1-16 blocks an SM, L2 overwritten before
# each run, CUDA events (the bench's clock), best configuration per size. 2. The batched
# rows of issue 13 again, sides timed together: 64x(128x4096x128) (not run since the
# rounds change) and 8x(2048^3), none and bias_relu. 3. Every planned candidate at 1000^3
# (a tune with --max 400), to see the B-multicast (cluster 2) configs of the smaller tiles,
# which the 48-candidate tunes never reached there (batch q: cuBLAS's kernel shares
# operand loads over clusters of 8).
set -u
B=${B:-.dev/s}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
R=$OUT/s; mkdir -p $R
cp $B/COMMIT $R/commit.txt
timeout 120 python3 - > $R/read-ceiling.txt 2>&1 <<'PY'
import cupy as cp
src = r'''
template <int U> __device__ void body(const uint4* __restrict__ p, long long n, unsigned* out) {
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
extern "C" __global__ void rd1(const uint4* p, long long n, unsigned* out) { body<1>(p, n, out); }
extern "C" __global__ void rd4(const uint4* p, long long n, unsigned* out) { body<4>(p, n, out); }
extern "C" __global__ void rd8(const uint4* p, long long n, unsigned* out) { body<8>(p, n, out); }
'''
mod = cp.RawModule(code=src, options=("-std=c++17",))
sms = cp.cuda.Device().attributes["MultiProcessorCount"]
flush = cp.empty(120 << 20, dtype=cp.uint8)
out = cp.zeros(1, dtype=cp.uint32)
def med(f, runs=21):
    ts = []
    for i in range(runs + 3):
        flush.fill(i & 0xff)
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record(); f(); e.record(); e.synchronize()
        ts.append(cp.cuda.get_elapsed_time(s, e) * 1e3)
    ts = sorted(ts[3:]); return ts[len(ts) // 2]
empty = cp.RawKernel('extern "C" __global__ void e() {}', "e")
print(f"empty kernel between events: {med(lambda: empty((1,), (32,), ())):.2f} us")
for mb in (33.5, 100.7, 512.0):
    n = int(mb * 1e6) // 16
    x = cp.ones(n * 4, dtype=cp.uint32)
    res = []
    for name in ("rd1", "rd4", "rd8"):
        k = mod.get_function(name)
        for per_sm in (1, 2, 4, 8, 16):
            for threads in (256, 512, 1024):
                if per_sm * threads > 2048:
                    continue
                us = med(lambda: k((sms * per_sm,), (threads,), (x, cp.int64(n), out)))
                res.append((us, name, per_sm, threads))
    res.sort()
    for us, name, per_sm, threads in res[:3]:
        print(f"{mb} MB: {us:.2f} us, {mb * 1e3 / us:.0f} GB/s ({name}, {per_sm} blocks/SM x {threads})")
PY
cat $R/read-ceiling.txt
C="--max 48 --dtypes f16 --epilogues none,bias_relu --out $R"
for s in "128x4096x128 64" "2048x2048x2048 8"; do
  set -- $s
  CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-b timeout 90 $B/crossgemm bench --shape $1 --batch $2 $C --name b$2 > $R/b$2.log 2>&1; echo "b$2 rc=$?"
  grep -E "^\| [0-9]" $R/b$2.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -3
done
CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-all timeout 150 $B/crossgemm tune --shape 1000x1000x1000 --dtype f16 --epilogue none --max 400 --json > $R/tune-all-1000.json 2> $R/tune-all-1000.log; echo "tune all 1000 rc=$?"
python3 - $R/tune-all-1000.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = sorted(d["timings"], key=lambda t: t["us"])
print("  timed", len(t))
for x in t[:12]:
    print("  %.2f %s" % (x["us"], x["config"]))
print("  cluster 2:")
for x in [x for x in t if "cluster 2" in x["config"]][:10]:
    print("  %.2f %s" % (x["us"], x["config"]))
PY
cd $OUT && tar czf s.tgz s && rm -rf s
