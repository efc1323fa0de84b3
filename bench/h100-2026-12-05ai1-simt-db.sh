#!/usr/bin/env bash
# Session ai, batch ai1: (1) the split arrival protocol now written once (strip_sum's
# cg_arrive_last / cg_block_last_to_arrive, 08042be) through CUDA; (2) CUDA's simt kernel
# with two local tiles in turn (fff0c6e, `CG_SDB`: on where both fit 48 KB) against one
# (`CROSSGEMM_EXP_DEFINES=CG_SDB=0`, the kernel of session ah), same binary, arms
# alternating. Binaries: `scripts/dev-build.sh .dev/ai1` at the commit in COMMIT, carried
# as .dev/ai1s. Carry: [".dev/ai1s"]. ~8-9 minutes (ROUNDS=1).
# Outcome (bench/results/h100-2026-12-05ai1): (1) all pass, sanitizers clean; (2) a wash
# (geomean 0.884 one tile, 0.874 two), reverted in 8a3d1cc. Ran on an H100.
# Written before:
# - (1) every split config of wgmma, gemv_n, decode_n gives the same bits twice and
#   matches the host reference (the SASS of one config each had the same instructions
#   before and after); every planned f32 config (simt, both local-tile forms, splits)
#   verified; memcheck and racecheck clean on simt tunes (racecheck: the second buffer's
#   stores race nothing).
# - (2) one barrier a k-tile instead of two, and 126 registers at 128x128x16 (141 with one
#   tile: two blocks of 256 threads an SM now fit): the large cubes 3-10% faster (4096^3
#   0.88 -> ~0.93x cuBLAS on the H100), 1000^3 and 1024^3 3-8%, the split rows (16 rows,
#   16x32x16 tiles in 8 splits: 48 registers against 56) within 3%.
BATCH=${BATCH:-ai1}
B=.dev/${BATCH}s
source bench/lib.sh $BATCH
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
run() { # name timeout binary args...
  local n=$1 t=$2 bin=$3; shift 3
  timeout $t $B/$bin --test-threads 8 "$@" > $R/$n.log 2>&1; echo "$n rc=$?"
  grep -E "test result|panicked" $R/$n.log | head -3
}
run splitk 150 kernels split_k_configs gemv_n_configs decode_n_configs
run f32 200 kernels every_planned_config_bf16_f32 f32_and_tf32
san() { # name tool shape epilogue
  CROSSGEMM_TUNE_MAX=${TMAX:-10} timeout 90 compute-sanitizer --tool $2 --print-limit 20 $B/crossgemm tune --shape $3 --dtype f32 --epilogue $4 --json --cache-dir /tmp/cg-$BATCH-san-$1 > $R/san-$1.json 2> $R/san-$1.err
  echo "san $1 ($2 $3) rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san-$1.err | tail -1)"
}
san mem-big memcheck 130x260x300 bias_relu
san race-big racecheck 130x260x300 none
san mem-split memcheck 16x300x1000 bias_relu
san race-split racecheck 16x300x1000 none
# The f32 rows, tuned (24 candidates), one local tile and two alternating.
for round in $(seq 1 ${ROUNDS:-1}); do for arm in one two; do
  tag=$arm-f32-$round
  if [ $arm = one ]; then export CROSSGEMM_EXP_DEFINES=CG_SDB=0; else unset CROSSGEMM_EXP_DEFINES; fi
  timeout 200 $B/crossgemm bench --dtypes f32 --epilogues none --max 24 \
    --shape 1024x1024x1024 --shape 4096x4096x4096 --shape 1000x1000x1000 --shape 3000x5000x700 \
    --shape 16x4096x4096 --shape 128x8192x8192 --shape 4096x4096x128 \
    --cache-dir /tmp/cg-$BATCH-$tag --out $R --name $tag > $R/$tag.log 2>&1; echo "bench $tag rc=$?"
  python3 bench/rows.py $R/$tag.json
done; done
unset CROSSGEMM_EXP_DEFINES
finish
