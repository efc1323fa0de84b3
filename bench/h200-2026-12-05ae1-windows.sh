#!/usr/bin/env bash
# Session ae, batch ae1: the gemv and gemv_n kernels' windows (rows at any element
# alignment read through the aligned 16-byte chunks that hold them, shifted in registers,
# where they loaded elements one at a time) and gemv's mask of the chunk that crosses K.
# Binaries: `scripts/dev-build.sh .dev/ae1` at the commit in COMMIT, carried as .dev/ae1s
# (the CLI gzipped and the test binaries this batch runs); the CLI before the change is
# .dev/ad3s's (6b3a089: the gemv families as they were until this session).
# Carry: [".dev/ae1s", ".dev/ad3s"]. PART=1 (CUDA tests, memcheck; ~4 min), PART=2 (the
# first calls, old and new CLI alternating; ~6 min).
# Why: misaligned decode-size calls below staging's 2^27 flops (M = 1, 2 with an odd K,
# a view of odd pitch, x.W with an odd N such as GPT-2's 50257-word output layer) ran the
# element loads: 2 bytes a load, one load in flight a column.
# Written before: correct on the H200 (views with NaN around every view, every planned
# gemv/gemv_n config, batches), memcheck clean; first calls 2-4x faster than before at
# 1x4096x4099, 2x4096x4099 and the K + 3 view of 1x4096x4096, within 1.5x of the aligned
# 1x4096x4096 (no cuBLAS row reads misaligned rows in place this fast: expect >= 1.0x);
# 1x50257x768 (W row-major) 2-4x faster. 8x4096x4099 staged (auto, the decode family on
# the copy) against in place (CROSSGEMM_STAGE=never, gemv's windows): in place faster,
# since staging moves W twice more (if so, staging should leave calls gemv serves alone).
BATCH=${BATCH:-ae1}
B=.dev/${BATCH}s
OLD=.dev/ad3s
source bench/lib.sh $BATCH
for f in "$OLD"/*.gz; do [ -e "$f" ] && gunzip -f "$f"; done
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
PART=${PART:-1}
if [ "$PART" = 1 ]; then
  timeout 150 $B/views --test-threads 8 > $R/views.log 2>&1; echo "views rc=$?"; grep -E "test result|panicked" $R/views.log | head -3
  timeout 200 $B/kernels --test-threads 8 every_planned_config gemv_configs gemv_n_configs > $R/kernels.log 2>&1; echo "kernels rc=$?"; grep -E "test result|panicked" $R/kernels.log | head -3
  timeout 120 $B/batched --test-threads 8 > $R/batched.log 2>&1; echo "batched rc=$?"; grep -E "test result|panicked" $R/batched.log | head -3
  timeout 60 $B/runtime_tests row_copy nvrtc > $R/unit.log 2>&1; echo "unit rc=$?"; grep -E "test result|panicked" $R/unit.log | head -3
  # The windows read only chunks that hold elements of a row: no access outside a buffer.
  CROSSGEMM_TEST_CONFIGS=gemv timeout 240 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 20 $B/views --test-threads 1 every_config_on_views > $R/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|test result" $R/memcheck.log | head -3
else
  unset CROSSGEMM_IGNORE_TABLES
  # cases: name|bench arguments
  cases=(
    "k4099|--shape 1x4096x4099 --epilogues none,bias_relu"
    "k4099m2|--shape 2x4096x4099 --epilogues none,bias_relu"
    "pad3|--pad 3 --shape 1x4096x4096 --epilogues none"
    "aligned|--shape 1x4096x4096 --epilogues none"
    "vocab|--w-layout row --shape 1x50257x768 --epilogues none,bias_relu"
    "vocab2|--w-layout row --shape 2x50257x768 --epilogues none"
  )
  for round in 1 2; do for bin in $OLD $B; do for c in "${cases[@]}"; do
    name=${c%%|*}; args=${c#*|}; tag=$(basename $bin)-$name-$round
    timeout 60 $bin/crossgemm bench --first-call $args --dtypes f16 --cache-dir /tmp/cg-$BATCH-$(basename $bin) --out $R --name $tag > $R/$tag.log 2>&1; echo "$tag rc=$?"
    grep -E "^\| [0-9]+x[0-9]+x[0-9]+ \| [a-z_]+ \| [a-z_]+ \|" $R/$tag.md | head -2 | cut -d"|" -f2-9
  done; done; done
  # Staged (auto) against in place (never) where gemv could read the rows where they lie.
  for round in 1 2; do for mode in auto never; do
    tag=stage-$mode-$round
    CROSSGEMM_STAGE=$mode timeout 60 $B/crossgemm bench --first-call --shape 8x4096x4099 --dtypes f16 --epilogues none,bias_relu --cache-dir /tmp/cg-$BATCH-$mode --out $R --name $tag > $R/$tag.log 2>&1; echo "$tag rc=$?"
    grep -E "^\| 8x4096x4099 \| [a-z_]+ \| [a-z_]+ \|" $R/$tag.md | head -2 | cut -d"|" -f2-9
  done; done
fi
finish
