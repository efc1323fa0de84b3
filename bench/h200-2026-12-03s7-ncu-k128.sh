#!/usr/bin/env bash
# Session s, batch s7 (.dev/s1old: the CLI at 6c82d37). Batches s2-s5 put the K = 128
# ping-pong winners' time in their stores (not in A's loads, not in the tiles' order).
# Nsight Compute (--set full, clocks left alone) on the 4096x4096x128 winners, plain
# (128x128 ping-pong) and bias+ReLU (64x128x128 ping-pong of three), the first launch
# inside `crossgemm diagnose --config`: how busy the SMs are over the kernel (the share
# of elapsed cycles they are active), DRAM and L2 throughput, and the warp stall reasons
# of the epilogue's stores.
# Written before: if the stores' issue from one warpgroup at a time binds, SM active
# cycles near 100% with the stall reasons on the store path (LG throttle / MIO); if the
# DRAM binds, DRAM throughput near its peak.
set -u
B=.dev/s1old
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
R=$OUT/s7; mkdir -p $R
cp $B/COMMIT $R/commit.txt
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
cfg() { echo "{\"family\":\"wgmma\",\"epi_smem\":true,\"cluster_m\":1,\"pingpong\":true,\"inflight\":false,\"group_m\":8,\"bk\":$1,\"bm\":$2,\"bn\":$3,\"stages\":$4,\"consumers\":$5}"; }
for run in none:"64 128 128 6 2" bias_relu:"128 64 128 4 3"; do
  e=${run%%:*}; t=${run#*:}
  timeout 120 $NCU --clock-control none --set full -k regex:cg_gemm_f16_$e -c 1 $B/crossgemm diagnose --cache-dir /tmp/cg-s7 --shape 4096x4096x128 --dtype f16 --epilogue $e --config "$(cfg $t)" > $R/ncu-4096x4096x128-$e.txt 2>&1; echo "ncu $e rc=$?"
  grep -E "DRAM Throughput|Duration|Compute \(SM\) Throughput|L2 Cache Throughput|SM Active Cycles|Elapsed Cycles|SM Frequency|Achieved Occupancy" $R/ncu-4096x4096x128-$e.txt | head -10
done
cd $OUT && tar czf s7.tgz s7 && rm -rf s7
