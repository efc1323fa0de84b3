#!/usr/bin/env bash
# Session l, batch q (binaries of `scripts/dev-build.sh .dev/p`): where the time goes,
# read from the hardware counters (Nsight Compute) for the first time in this project,
# after batch p rejected the latency-gap explanation for the decode shapes.
# 1. What a generic read kernel moves here: torch.sum over 33.5 MB (B of 16x4096x4096),
#    100.7 MB (B of 1x12288x4096) and 512 MB, L2 overwritten before each run, CUDA events.
# 2. Nsight Compute (--set full, clocks left alone) on the tuned winner of
#    1x12288x4096, 16x4096x4096, 1000x1000x1000 and 2048x11008x4096 (f16, none): the
#    first launch of the generated kernel inside `crossgemm diagnose` (its correctness
#    run of the winner), and on cuBLAS's kernel at 1x12288x4096 and 1000^3.
set -u
B=${B:-.dev/p}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
R=$OUT/q; mkdir -p $R
cp $B/COMMIT $R/commit.txt
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"
timeout 60 python3 - > $R/torch-read.txt 2>&1 <<'PY'
import torch
flush = torch.empty(120 << 20, dtype=torch.uint8, device="cuda")
for mb in (33.5, 100.7, 512):
    x = torch.ones(int(mb * 1e6 / 2), dtype=torch.float16, device="cuda")
    ts = []
    for i in range(23):
        flush.fill_(i)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); y = x.sum(); e.record(); torch.cuda.synchronize()
        ts.append(s.elapsed_time(e) * 1e3)
    ts = sorted(ts[3:]); med = ts[len(ts) // 2]
    print(f"torch.sum over {mb} MB: median {med:.2f} us, {mb * 1e6 / med / 1e6:.0f} GB/s")
    ts = []
    for i in range(13):
        flush.fill_(i)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); e.record(); torch.cuda.synchronize()
        ts.append(s.elapsed_time(e) * 1e3)
print(f"two back-to-back events: {sorted(ts[3:])[5]:.2f} us")
PY
cat $R/torch-read.txt
for s in 1x12288x4096 16x4096x4096 1000x1000x1000 2048x11008x4096; do
  CROSSGEMM_IGNORE_TABLES=1 timeout 60 $B/crossgemm tune --cache-dir /tmp/cg-n --shape $s --dtype f16 --epilogue none > $R/tune-$s.txt 2>&1; echo "tune $s rc=$?"; grep -iE "winner|best" $R/tune-$s.txt | head -2
  timeout 90 $NCU --clock-control none --set full -k regex:cg_gemm_f16_none -c 1 $B/crossgemm diagnose --cache-dir /tmp/cg-n --shape $s --dtype f16 --epilogue none > $R/ncu-$s.txt 2>&1; echo "ncu $s rc=$?"
  grep -E "DRAM Throughput|Memory Throughput|Duration|Compute \(SM\) Throughput|L2 Cache Throughput|Registers Per|Achieved Occupancy|Elapsed Cycles|SM Frequency|DRAM Frequency" $R/ncu-$s.txt | head -12
done
for s in 1x12288x4096 1000x1000x1000; do
  timeout 90 $NCU --clock-control none --set full -k 'regex:^([^c]|c[^g])' -c 2 $B/crossgemm bench --cache-dir /tmp/cg-n --shape $s --dtypes f16 --epilogues none --out /tmp/nb --name nb > $R/ncu-cublas-$s.txt 2>&1; echo "ncu cublas $s rc=$?"
  grep -E "^  [a-zA-Z_].*\(|DRAM Throughput|Duration|Compute \(SM\) Throughput|L2 Cache Throughput" $R/ncu-cublas-$s.txt | head -8
done
cd $OUT && tar czf q.tgz q && rm -rf q
