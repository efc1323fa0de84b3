#!/usr/bin/env bash
# Session aj, batch aj3: (1) the simt kernel with its N-contiguous operand stored as one
# vector (f5fbfb9, `cg_simt_stash`) through CUDA: every planned f32 config against the
# host reference (`kernels every_planned_config_bf16_f32 f32_and_tf32`, whose f32_rr has B
# row-major), memcheck on a split and a whole f32 tune; (2) f32 first calls with the tables
# ignored (each call's default pick) before (.dev/ai2s, 3543aac) and after 78fff50 (a simt
# tile that walks K whole gives way to its K-split twin), at the 16-row shapes and one
# cube; (3) then, in the same call, batch aj2's configs (K split on large simt tiles):
# `B=.dev/aj3s bash bench/h100-2026-12-06aj2-simt-splits.sh`.
# Binaries: `scripts/dev-build.sh .dev/aj3` at the commit in COMMIT, carried as .dev/aj3s
# (the CLI and tests/kernels only). Carry: [".dev/aj3s", ".dev/ai2s"]. ~6 minutes.
# Written before: (1) all pass, 0 errors; (2) 16x4096x4096 175 -> ~56 us (16x32x16
# ksplit 8), 16x4096x11008 likewise ~3x, 4096^3 unchanged.
BATCH=${BATCH:-aj3}
B=.dev/aj3s
source bench/lib.sh $BATCH
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
timeout 200 $B/kernels --test-threads 8 every_planned_config_bf16_f32 f32_and_tf32 > $R/f32.log 2>&1; echo "kernels f32 rc=$?"
grep -E "test result|panicked" $R/f32.log | head -3
san() { # name shape
  CROSSGEMM_TUNE_MAX=6 timeout 90 compute-sanitizer --tool memcheck --print-limit 20 $B/crossgemm tune --shape $2 --dtype f32 --epilogue bias_relu --json --cache-dir /tmp/cg-$BATCH-san-$1 > $R/san-$1.json 2> $R/san-$1.err
  echo "san $1 ($2) rc=$?: $(grep -E 'ERROR SUMMARY' $R/san-$1.err $R/san-$1.json | tail -1)"
}
san split 16x300x1000
san whole 130x260x300
for arm in old new; do
  bin=$B; [ $arm = old ] && bin=.dev/ai2s
  timeout 120 $bin/crossgemm bench --first-call --dtypes f32 --epilogues none,bias_relu \
    --shape 16x4096x4096 --shape 16x4096x11008 --shape 4096x4096x4096 \
    --cache-dir /tmp/cg-$BATCH-$arm --out $R --name $arm-first > $R/$arm-first.log 2>&1; echo "first $arm rc=$?"
  python3 bench/rows.py $R/$arm-first.json | tail -9
done
finish
