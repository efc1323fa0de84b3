#!/usr/bin/env bash
# Session aa, batch aa8 (.dev/aa7: the CLI at 219c2e2). What holds 64 rows of a row-major W
# (64x4096x4096, f16, 0.89-0.91x cuBLAS NN in aa6/aa7, the weakest of the row-major-W
# rows): Nsight Compute on the two configs that tie there, 64x64 with K in 2 (8 stages,
# 128 blocks) and the deep ring (K whole, 13 stages, 64 blocks), beside z8's numbers for
# cuBLAS's 64x32 kernel (12.3-12.8 us at 57-59% of DRAM).
# Written before: both kernels ~14-15 us at ~45-50% of DRAM; the split's kernel spends
# its extra time in the reduction's wait (the second split of a tile waits for the first)
# and the deep ring's in one SM per 64 columns (long scoreboard stalls on the full barrier).
B=.dev/aa7
source bench/lib.sh aa8
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"
t() { echo "{\"family\":\"wgmma\",\"epi_smem\":true,\"cluster_m\":1,\"inflight\":true,\"group_m\":8,\"bk\":64,\"bm\":64,\"bn\":64,\"stages\":$1,\"consumers\":1$2}"; }
for c in "ks2 8 ,\"ksplit\":2" "deep 13 "; do
  set -- $c
  timeout 150 $NCU --clock-control none --set full -k regex:cg_gemm_f16_none_wrow -c 2 $B/crossgemm tune --shape 64x4096x4096 --w-layout row --dtype f16 --epilogue none --cache-dir /tmp/cg-aa8-$1 --config "$(t $2 "${3:-}")" > $R/ncu-$1.txt 2>&1; echo "ncu $1 rc=$?"
  grep -E "^  [a-z_]+.*\(|Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per|Grid Size|Block Size|One or More Eligible|No Eligible|Warp Cycles Per Issued|Dynamic Shared" $R/ncu-$1.txt | head -40
done
finish
