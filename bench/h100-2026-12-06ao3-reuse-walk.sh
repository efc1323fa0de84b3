#!/usr/bin/env bash
# Session ao, batch ao3: after ao2 (operand reuse 6% faster at 4096x4096x128 plain with
# whole columns, slower fused and on the three-consumer 64x128): what the consecutive
# walk costs apart from the loads it saves. A 5-stage ring at K = 128 (2 k-tiles) keeps
# nothing (5 is not a multiple of 2), so `reuse` there is the walk alone; group_m 32 is
# timed with the strided walk too. f16 4096x4096x128, none and bias_relu, two rounds.
# Binaries: .dev/ao2c. Carry: [".dev/ao2c"]. ~2 minutes.
# Written before: if the walk itself costs (the 132 blocks then write tiles spread over
# the whole output instead of neighbours), s5 reuse is slower than s5 strided by about
# what ao2's fused rows lost (2-5%); group_m 32 strided within 1% of group_m 8.
BATCH=${BATCH:-ao3}
B=.dev/ao2c
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
w() { echo "{\"family\":\"wgmma\",\"epi_smem\":true,\"cluster_m\":1,\"inflight\":false,\"bk\":64,\"bm\":$1,\"bn\":$2,\"stages\":$3,\"consumers\":$4,\"group_m\":${5:-8}${6:-}}"; }
C=("$(w 128 128 6 2 8 ',"pingpong":true')" "$(w 128 128 6 2 32 ',"pingpong":true')"
   "$(w 128 128 6 2 32 ',"pingpong":true,"reuse":true')" "$(w 128 128 5 2 8 ',"pingpong":true')"
   "$(w 128 128 5 2 8 ',"pingpong":true,"reuse":true')" "$(w 128 128 5 2 32 ',"pingpong":true,"reuse":true')"
   "$(w 64 128 8 3 8 ',"pingpong":true')" "$(w 64 128 8 3 32 ',"pingpong":true,"reuse":true')")
A=(); for c in "${C[@]}"; do A+=(--config "$c"); done
for round in 1 2; do for epi in none bias_relu; do
  tag=4096x4096x128-$epi-$round
  timeout 100 $B/crossgemm tune --shape 4096x4096x128 --dtype f16 --epilogue $epi --json --cache-dir /tmp/cg-$BATCH-$tag "${A[@]}" > $R/tune-$tag.json 2> $R/tune-$tag.err
  python3 bench/tune_summary.py "$tag" $R/tune-$tag.json
done; done
finish
