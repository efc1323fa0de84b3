#!/usr/bin/env bash
# Session r, batch r1 (.dev/r1: the CLI at 2bc0938, `baseline`; the first with --config).
# The records say 1024^3 f16 runs in 8.6 us (64x128, one consumer, 8 stages) and 1000^3
# in 11.9 us (128x128, two consumers), 2.4% fewer flops and 38% more time; the 64x128
# config itself takes 13.8-14.3 us at 1000^3. Which raggedness costs: the operands' row
# pitch (2000 bytes: box rows straddle 128-byte lines), M/N edge tiles (the checked
# epilogue path), or the partial last k-tile? The same two configs on shapes that are
# ragged in one place each, every config timed by `tune --config` (same process, final
# round), then `bench` beside cuBLAS with both configs, then Nsight Compute on ours and
# cuBLAS at 1000^3 and 1024^3.
# Written before: if the pitch costs, the K = 1000/1008/1016/992 rows are slow and
# 1000x1000x1024 is fast; if edge tiles cost, the other way round.
set -u
B=.dev/r1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
R=$OUT/r1; mkdir -p $R
cp $B/COMMIT $R/commit.txt
A='{"family":"wgmma","bm":128,"bn":128,"bk":64,"stages":6,"consumers":2,"group_m":8,"cluster_m":1,"inflight":false,"epi_smem":true}'
O='{"family":"wgmma","bm":64,"bn":128,"bk":64,"stages":8,"consumers":1,"group_m":8,"cluster_m":1,"inflight":true,"epi_smem":true}'
SHAPES="1024x1024x1024 1000x1000x1000 1024x1024x1000 1000x1000x1024 1000x1024x1024 1024x1000x1024 1024x1024x1008 1024x1024x1016 1024x1024x992 1024x1024x960 1008x1008x1008"
for s in $SHAPES; do
  timeout 60 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --json --cache-dir /tmp/cg-r1 --config "$A" --config "$O" > $R/tune-$s.json 2> $R/tune-$s.err
  python3 - "$R/tune-$s.json" "$s" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    f = {t['config']: t['us'] for t in d['final_round']} or {t['config']: t['us'] for t in d['timings']}
    print(sys.argv[2], '  '.join(f"{c.split(' inflight')[0]} {u:.2f}" for c, u in f.items()))
except Exception as e:
    print(sys.argv[2], 'failed', e)
PY
done
L=$(echo $SHAPES | sed 's/ / --shape /g')
timeout 240 $B/crossgemm bench --shape $L --dtypes f16 --epilogues none --config "$A" --config "$O" --cache-dir /tmp/cg-r1 --out $R --name bench > $R/bench.log 2>&1; echo "bench rc=$?"
grep -E "^\| [0-9]" $R/bench.md | cut -d'|' -f2,4,5,6,7,9,10 | head -12
# Nsight Compute: ours (config A) at 1000^3, 1024^3 and 1024x1024x1000; cuBLAS at 1000^3 and 1024^3.
N="ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy"
for s in 1000x1000x1000 1024x1024x1024 1024x1024x1000; do
  timeout 120 $N --kernel-name regex:cg_gemm_f16_none --launch-skip 6 --launch-count 1 $B/crossgemm bench --shape $s --dtypes f16 --epilogues none --config "$A" --cache-dir /tmp/cg-r1n --out /tmp/r1n --runs 3 --warmup 1 > $R/ncu-ours-$s.txt 2>&1; echo "ncu ours $s rc=$?"
done
for s in 1000x1000x1000 1024x1024x1024; do
  timeout 120 $N --kernel-name regex:'nvjet|xmma|cutlass|gemm_kernel|sm90' --launch-skip 2 --launch-count 1 $B/crossgemm bench --shape $s --dtypes f16 --epilogues none --config "$A" --cache-dir /tmp/cg-r1n --out /tmp/r1n --runs 3 --warmup 1 > $R/ncu-cublas-$s.txt 2>&1; echo "ncu cublas $s rc=$?"
done
grep -h -E "^  [a-z_0-9]+.*\(|Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Hit|L2 Hit|Memory Throughput|Compute \(SM\)|Registers Per|Grid Size|Block Size|Achieved Occupancy|Stall|Warp Cycles Per Issued" $R/ncu-*.txt | head -80
cd $OUT && tar czf r1.tgz r1 && rm -rf r1
