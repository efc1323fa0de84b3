#!/usr/bin/env bash
# Session n, batch zj (binaries of .dev/n3): issue 9's standing question, what cuBLAS runs
# at 2048x11008x4096 (f16, none: 0.96x with our 128x128 s6 in batch zi) and what
# cuBLASLt's fused GELU kernel is (bias_gelu 0.95x cuBLASLt); Nsight Compute on cuBLAS's
# and cuBLASLt's kernels inside `crossgemm bench`, and on ours inside `crossgemm
# diagnose`, with the clock left to the chip (--clock-control none). Expected: cuBLAS
# with a tile that fills the last wave better or a 2-CTA cluster, at the same power-held
# clock (~1.55 GHz) as ours; if its clock is higher at the same load, energy per tile is
# the difference.
set -u
B=${B:-.dev/n3}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
R=$OUT/zj; mkdir -p $R
cp $B/COMMIT $R/commit.txt
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"
S=2048x11008x4096
KEYS="Duration|SM Frequency|DRAM Throughput|Compute \(SM\) Throughput|L2 Cache Throughput|Registers Per|Grid Size|Block Size|Cluster Size|Dynamic Shared|Waves Per SM|Achieved Occupancy"
for e in none bias_gelu; do
  CROSSGEMM_IGNORE_TABLES=1 timeout 150 $NCU --clock-control none --set full -k 'regex:^(nvjet|sm90|cutlass)' -c 3 $B/crossgemm bench --cache-dir /tmp/cg-n --shape $S --dtypes f16 --epilogues $e --runs 10 --out /tmp/nb --name nb-$e > $R/ncu-vendor-$e.txt 2>&1; echo "ncu vendor $e rc=$?"
  grep -E "^  [a-zA-Z_].*\(|$KEYS" $R/ncu-vendor-$e.txt | head -36
  timeout 90 $NCU --clock-control none --set full -k regex:cg_gemm_f16_$e -c 1 $B/crossgemm diagnose --cache-dir /tmp/cg-n --shape $S --dtype f16 --epilogue $e > $R/ncu-ours-$e.txt 2>&1; echo "ncu ours $e rc=$?"
  grep -E "^  [a-zA-Z_].*\(|$KEYS" $R/ncu-ours-$e.txt | head -14
done
cd $OUT && tar czf zj.tgz zj && rm -rf zj
