#!/usr/bin/env bash
# Session ao, batch ao5: operand reuse at other short-K shapes (after ao2/ao3: the 128x128
# ping-pong with whole columns 5-7% faster than the strided walk at 4096x4096x128 plain,
# 1-2% ahead of the three-consumer ping-pong; slower fused): 8192x8192x128 (4 times the
# tiles, 32 a block) and 2048x2048x128 (2 a block: little to keep), plain, two rounds.
# Binaries: .dev/ao2c. Carry: [".dev/ao2c"]. ~2 minutes.
# Written before: 8192x8192x128 like 4096x4096x128 (5%); 2048x2048x128 no change.
BATCH=${BATCH:-ao5}
B=.dev/ao2c
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
w() { echo "{\"family\":\"wgmma\",\"epi_smem\":true,\"cluster_m\":1,\"inflight\":false,\"bk\":64,\"bm\":$1,\"bn\":$2,\"stages\":$3,\"consumers\":$4,\"group_m\":${5:-8}${6:-}}"; }
C=("$(w 128 128 6 2 8 ',"pingpong":true')" "$(w 128 128 6 2 32 ',"pingpong":true,"reuse":true')"
   "$(w 64 128 8 3 8 ',"pingpong":true')" "$(w 128 256 4 2)" "$(w 128 256 4 2 32 ',"reuse":true')")
A=(); for c in "${C[@]}"; do A+=(--config "$c"); done
for round in 1 2; do for s in 8192x8192x128 2048x2048x128; do
  tag=$s-none-$round
  timeout 100 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --json --cache-dir /tmp/cg-$BATCH-$tag "${A[@]}" > $R/tune-$tag.json 2> $R/tune-$tag.err
  python3 bench/tune_summary.py "$tag" $R/tune-$tag.json
done; done
finish
