#!/usr/bin/env bash
# Session ao, batch ao2: wgmma operand reuse (CG_REUSE: a block walks a consecutive run
# of its work items, and its producer leaves out the loads of an A or B tile a stage still
# holds from the item STAGES / ktiles before). At 4096x4096x128 the 128x128 tiles load
# 64 MB from L2 for a 33.5 MB output; with the grouped raster's columns most items keep
# B, about 36-40 MB.
# Correct on CUDA first (the reuse configs of tests/kernels.rs's persistent-loop test at
# K = 136, 128 and 72, and the same bits as the strided walk; narrowed to the ping-pong
# 128x128 and the cooperative 128x256; racecheck on the first), then tunes
# of chosen configs at 4096x4096x128 f16 (none, bias_relu), each with and without reuse,
# alternating over two rounds.
# Binaries: .dev/ao2c, .dev/ao2k. Carry: [".dev/ao2c", ".dev/ao2k"]. ~5 minutes.
# Written before: the strided walk's twin keeps its time (within 1%); with reuse the
# ping-pong 128x128 (the H200's winner there) 5-15% faster if the loads are what the
# stores do not overlap (diagnose on the H200: no-store 12.3 µs of 16.7), no change if
# the output's write alone binds it; group_m 32 (whole columns) keeps B more often
# (back 3 of 6 stages: 5 of 8 items in a group of 8 rows, 29 of 32 in whole columns).
BATCH=${BATCH:-ao2}
B=.dev/ao2c
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
K=.dev/ao2k/kernels
for f in "128x128x64 stages 6 consumers 2 cluster 1 inflight 0 group 8 pingpong reuse" "128x256x64 stages 4 consumers 2 cluster 1 inflight 0 group 8 reuse"; do
  tag=$(echo $f | cut -d" " -f1-3 | tr " " "-")
  CROSSGEMM_TEST_CONFIGS="$f" timeout 100 $K reuse_configs_keep_operand_tiles_across_items --test-threads 1 > $R/kernels-$tag.log 2>&1; echo "kernels $f rc=$?"
  grep -hE "^test |test result|panicked" $R/kernels-$tag.log | head -5
done
CROSSGEMM_TEST_CONFIGS="128x128x64 stages 6 consumers 2 cluster 1 inflight 0 group 8 pingpong reuse" timeout 100 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 5 $K reuse_configs_keep_operand_tiles_across_items --test-threads 1 > $R/racecheck.log 2>&1; echo "racecheck rc=$?"
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test result" $R/racecheck.log | tail -3
w() { echo "{\"family\":\"wgmma\",\"epi_smem\":true,\"cluster_m\":1,\"inflight\":false,\"bk\":64,\"bm\":$1,\"bn\":$2,\"stages\":$3,\"consumers\":$4,\"group_m\":${5:-8}${6:-}}"; }
C=("$(w 128 128 6 2 8 ',"pingpong":true')" "$(w 128 128 6 2 8 ',"pingpong":true,"reuse":true')"
   "$(w 128 128 6 2 32 ',"pingpong":true,"reuse":true')" "$(w 128 128 4 2 8 ',"pingpong":true,"reuse":true')"
   "$(w 128 256 4 2)" "$(w 128 256 4 2 8 ',"reuse":true')" "$(w 128 256 4 2 32 ',"reuse":true')"
   "$(w 64 128 8 3 8 ',"pingpong":true')" "$(w 64 128 8 3 8 ',"pingpong":true,"reuse":true')")
A=(); for c in "${C[@]}"; do A+=(--config "$c"); done
for round in 1 2; do for epi in none bias_relu; do
  tag=4096x4096x128-$epi-$round
  timeout 100 $B/crossgemm tune --shape 4096x4096x128 --dtype f16 --epilogue $epi --json --cache-dir /tmp/cg-$BATCH-$tag "${A[@]}" > $R/tune-$tag.json 2> $R/tune-$tag.err
  python3 bench/tune_summary.py "$tag" $R/tune-$tag.json
done; done
finish
