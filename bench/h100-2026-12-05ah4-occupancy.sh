#!/usr/bin/env bash
# Session ah, batch ah4: defaults where nothing is measured (NO_TABLES=1: each first call
# runs the planner's default), eb8712e against 45ab4e8 (.dev/ag1s's CLI), alternating over
# two rounds. Binaries: .dev/ah4s (the CLI of `cargo build --release --features
# baseline,aot --bin crossgemm` at the commit in COMMIT, gzipped) and .dev/ag1s.
# Carry: [".dev/ah4s", ".dev/ag1s"]. ~5 minutes.
# 1. NVIDIA's OpenCL (no peak, so the tiles' geometry decides): a tile now occupies the
#    GPU with 256 threads an SM, the largest tiles of those first. Written before (from
#    ag1 PART=2's every-candidate tunes): 16x4096x4096 406 -> ~81 us (16x32, K in 8),
#    32 rows 32x128 in 8 splits (its tuned winner, 126 us), 64 rows 32x128 in 4 (~185),
#    1000^3 174 -> ~124 (64x64). Row-major W (gemv_n): 1x12288x4096 K whole.
# 2. A default that splits K runs K whole where its tiles fill a wave: gemv_n at
#    2x50257x768 and 4x50257x768 (row-major W), CUDA and NVIDIA's OpenCL. Written before:
#    2 rows 62.4 -> ~43 us on CUDA (ah3's tune: K whole 42.7, K in 4 63.2); 4 rows K whole
#    too (ah3: 58.8 whole, 51.7 for 32 chunks in 4 splits, the best: a loss of up to 14%
#    there if the 4-row default was K in 4 with 32 chunks).
BATCH=${BATCH:-ah4}
B=.dev/${BATCH}s
OLD=.dev/ag1s
source bench/lib.sh $BATCH
for f in "$OLD"/*.gz; do [ -e "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
$B/crossgemm devices > $R/devices.txt 2>&1
OCL=$(grep -iE "opencl:[0-9]+:[0-9]+.*NVIDIA" $R/devices.txt | grep -oE "opencl:[0-9]+:[0-9]+" | head -1)
echo "nvidia opencl: $OCL"
NO_TABLES=1 ROWS=6 first_calls "$OLD $B" \
  "ocl-col|--device $OCL --shape 16x4096x4096 --shape 32x4096x4096 --shape 64x4096x4096 --shape 1000x1000x1000 --epilogues none" \
  "ocl-wrow|--device $OCL --w-layout row --shape 2x50257x768 --shape 1x12288x4096 --epilogues none" \
  "cuda-wrow|--w-layout row --shape 2x50257x768 --shape 4x50257x768 --epilogues none"
for j in $R/*.json; do python3 bench/rows.py $j > ${j%.json}.rows 2>&1; done
finish
