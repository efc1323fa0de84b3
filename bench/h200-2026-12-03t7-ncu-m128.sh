#!/usr/bin/env bash
# Session t, batch t7 (.dev/s1old: the CLI at e461622).
# Batches t1-t6 refuted five explanations of the M = 128 rows' 37 us (L2 bytes, DRAM
# order, per-SM intake, longer rows, TMA against cp.async) while t4 has their loads
# taking the whole time. The hardware counters of the wgmma winner and of cuBLAS's kernel
# at 128x12288x4096 (Nsight Compute, --set full, clocks left alone), beside batch 02q's
# decode kernel at 1x12288x4096 (the same B in 29.0 us of kernel time), say where it is:
# DRAM throughput, L2 hit rate and throughput, the stall reasons of the producer's waits.
# Written before: the wgmma kernel's DRAM throughput under the decode kernel's 74-75% of
# peak, with its warps stalled on the ring's barriers (long waits on full stages).
B=.dev/s1old
source bench/lib.sh t7
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
S=128x12288x4096
for c in "64 64 192 6 1 true" "64 128 128 6 2 false"; do
  n=$(echo $c | tr ' ' _)
  timeout 120 $NCU --clock-control none --set full -k regex:cg_gemm_f16_none -c 1 $B/crossgemm tune --cache-dir /tmp/cg-t7 --shape $S --dtype f16 --epilogue none --config "$(cfg $c)" > $R/ncu-$n.txt 2>&1; echo "ncu $n rc=$?"
  grep -E "DRAM Throughput|Memory Throughput|Duration|L2 Cache Throughput|L2 Hit Rate|L1/TEX Hit|Achieved Occupancy|SM Frequency" $R/ncu-$n.txt | head -10
done
timeout 150 $NCU --clock-control none --set full -k 'regex:^([^c]|c[^g])' -c 2 $B/crossgemm bench --cache-dir /tmp/cg-t7b --shape $S --dtypes f16 --epilogues none --max 2 --out /tmp/t7b --name t7b > $R/ncu-cublas.txt 2>&1; echo "ncu cublas rc=$?"
grep -E "^  [a-zA-Z_].*\(|DRAM Throughput|Duration|L2 Cache Throughput|L2 Hit Rate" $R/ncu-cublas.txt | head -10
finish
