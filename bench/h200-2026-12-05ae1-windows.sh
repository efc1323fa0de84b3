#!/usr/bin/env bash
# Session ae, batch ae1: the gemv, gemv_n and decode kernels' windows (rows at any element
# alignment read through the aligned 16-byte chunks that hold them, shifted in registers:
# gemv and gemv_n loaded elements one at a time, decode refused such rows), and gemv's
# mask of the chunk that crosses K (a padded view summed its padding before).
# Binaries: `scripts/dev-build.sh .dev/ae1` at the commit in COMMIT, carried as .dev/ae1s
# (the CLI gzipped and the test binaries this batch runs); the CLI before the change is
# .dev/ad3s's (6b3a089: the three families as they were until this session).
# Carry: [".dev/ae1s", ".dev/ad3s"]. PART=1: the CUDA suites (~4 min); PART=2: memcheck
# on the gemv and decode configs (~5 min); PART=3: first calls, old and new CLI
# alternating (~5 min); PART=4: staged against in place, and gemv against decode (~4 min).
# Why: misaligned decode-size calls below staging's 2^27 flops (M = 1, 2 with an odd K, a
# view of odd pitch, x.W with an odd N such as GPT-2's 50257-word output layer) ran
# element loads: 2 bytes a load, one load in flight a column; above it, staging moves
# the weight twice more than the GEMM reads it.
# Written before: correct on the H200 (views with NaN around every view, every planned
# gemv/gemv_n/decode config at odd shapes, batches), memcheck clean. First calls 2-4x
# faster than before at 1x4096x4099, 2x4096x4099 and the K + 3 view of 1x4096x4096, within
# 1.5x of the aligned 1x4096x4096 (cuBLAS reads such rows slowly: >= 1.0x); 1x50257x768
# with W row-major 2-4x faster. In place (CROSSGEMM_STAGE=never) against staged: faster
# at 8x4096x4099, 16x4096x4099 and the K + 3 view of 16x4096x4096 (staged 40.6 us, ad3;
# in place ~20 us, ~1.5x cuBLAS's 31.4): if so, staging should leave the calls the
# decode-size families take alone. gemv against decode at 1x4096x4099 (tune, both
# families' configs): decode within 10%.
BATCH=${BATCH:-ae1}
B=.dev/${BATCH}s
OLD=.dev/ad3s
source bench/lib.sh $BATCH
for f in "$OLD"/*.gz; do [ -e "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
PART=${PART:-1}
if [ "$PART" = 1 ]; then
  timeout 150 $B/views --test-threads 8 > $R/views.log 2>&1; echo "views rc=$?"; grep -E "test result|panicked" $R/views.log | head -3
  timeout 240 $B/kernels --test-threads 8 every_planned_config gemv_configs gemv_n_configs decode_configs > $R/kernels.log 2>&1; echo "kernels rc=$?"; grep -E "test result|panicked" $R/kernels.log | head -3
  timeout 120 $B/batched --test-threads 8 > $R/batched.log 2>&1; echo "batched rc=$?"; grep -E "test result|panicked" $R/batched.log | head -3
  timeout 60 $B/runtime_tests row_copy nvrtc > $R/unit.log 2>&1; echo "unit rc=$?"; grep -E "test result|panicked" $R/unit.log | head -3
elif [ "$PART" = 2 ]; then
  # The windows read only chunks that hold elements of a row: no access outside a buffer.
  # (At 1d74f42 the views test then fails its "no config ran" check on v_f16_cr, which
  # a narrowed run leaves without configs, fixed after it: the v_f16_rc configs it
  # checks, every gemv and decode one, run before that, and memcheck's summary stands.)
  for fam in gemv decode; do
    CROSSGEMM_TEST_CONFIGS=$fam timeout 280 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 20 $B/views --test-threads 1 every_config_on_views_f16 > $R/memcheck-$fam.log 2>&1; echo "memcheck $fam rc=$?"; grep -E "ERROR SUMMARY|test result" $R/memcheck-$fam.log | head -3
  done
elif [ "$PART" = 3 ]; then
  first_calls "$OLD $B" \
    "k4099|--shape 1x4096x4099 --epilogues none,bias_relu" \
    "k4099m2|--shape 2x4096x4099 --epilogues none,bias_relu" \
    "pad3|--pad 3 --shape 1x4096x4096 --epilogues none" \
    "aligned|--shape 1x4096x4096 --epilogues none" \
    "vocab|--w-layout row --shape 1x50257x768 --epilogues none,bias_relu" \
    "vocab2|--w-layout row --shape 2x50257x768 --epilogues none"
else
  unset CROSSGEMM_IGNORE_TABLES
  # Staged (auto) against in place (never), where the decode-size families could read the
  # rows where they lie.
  cases=(
    "m8|--shape 8x4096x4099 --epilogues none,bias_relu"
    "m16|--shape 16x4096x4099 --epilogues none"
    "pad3m16|--pad 3 --shape 16x4096x4096 --epilogues none"
  )
  for round in 1 2; do for mode in auto never; do for c in "${cases[@]}"; do
    name=${c%%|*}; args=${c#*|}; tag=stage-$mode-$name-$round
    CROSSGEMM_STAGE=$mode timeout 60 $B/crossgemm bench --first-call $args --dtypes f16 --cache-dir /tmp/cg-$BATCH-$mode --out $R --name $tag > $R/$tag.log 2>&1; echo "$tag rc=$?"
    grep -E "^\| [0-9]+x[0-9]+x[0-9]+ \| [a-z_]+ \| [a-z_]+ \|" $R/$tag.md | head -2 | cut -d"|" -f2-9
  done; done; done
  # gemv's and decode's windows at one row, side by side (every candidate's time).
  export CROSSGEMM_IGNORE_TABLES=1
  timeout 120 $B/crossgemm tune --shape 1x4096x4099 --dtype f16 --epilogue none --json --cache-dir /tmp/cg-$BATCH-fam --config '{"family":"gemv","mr":1,"warps":4,"cols":2,"ksplit":4}' --config '{"family":"gemv","mr":1,"warps":4,"cols":4,"ksplit":2}' --config '{"family":"decode","mt":1,"nt":1,"warps":8,"kw":8,"unroll":4}' --config '{"family":"decode","mt":1,"nt":1,"warps":4,"kw":4,"unroll":4}' > $R/tune-fam.json 2> $R/tune-fam.err; echo "tune fam rc=$?"
  python3 bench/tune_summary.py "1x4096x4099 gemv vs decode" $R/tune-fam.json
fi
finish
