#!/usr/bin/env bash
# Session ab, batch ab1 (.dev/ab1: rebuilt in session ac at 7898c0f, which adds the wgmma
# family's opt-in turned form, batches past 65535 products and runtime folds; the default
# plans and tables are session ab's). The whole bench
# table (bench/shapes.toml: 23 shapes x none / bias_relu / bias_gelu) as a user's first
# calls run it: `bench --first-call` with the shipped config tables (records/h200.json),
# an empty cache, nothing tuned; f16 and bf16, then tf32. The last whole-table reports are
# from 2026-12-01 (01b: full tunes, before the decode, gemv_n, decode_n families, split-K,
# the deep ring and the stmatrix epilogue); --against 01b's full tunes (tf32: 01c's).
# Written before: every issue-9/10 row within ~4% of its aa2/aa3 tuned time (the tables
# hold those winners; 01b found first calls within 4.4% of full tunes); the rows outside
# the issues' tables (1024-cubed shapes, 4096x4096x128 and 1000-cubed with bias_gelu, the
# x4096x11008 LLM rows, narrow_n) are where the 12-01 report was weakest (0.64-0.88x
# cuBLASLt for gelu) and should now be at or above 0.95x cuBLASLt where the decode and
# wgmma changes since reached them; f16/bf16 geomean vs cuBLAS above 01b's.
# Written in session ab, which was lent no device: not run yet (build the binaries with
# `scripts/dev-build.sh .dev/ab1` at the head that is to be measured, and say which).
# First, session ab's new tests through CUDA (they ran on PoCL and the host only): empty
# sides (tests/empty.rs) and a NaN product (tests/epilogue_values.rs). Written before: pass.
B=.dev/ab1s  # .dev/ab1 with only what this batch runs, the CLI gzipped, to fit the carry
# Two device calls (10 minutes each): PART=1 the tests and f16, PART=2 bf16 and tf32.
PART=${PART:-1}
source bench/lib.sh ab1-part$PART
if [ "$PART" = 1 ]; then
timeout 120 $B/empty --test-threads 2 > $R/empty.log 2>&1; echo "empty rc=$?"; grep -E "test result|panicked" $R/empty.log | head -3
timeout 120 $B/epilogue_values a_nan > $R/nan.log 2>&1; echo "nan rc=$?"; grep -E "test result|panicked" $R/nan.log | head -3
# Session ac's batch of 65537 products (two launches; CROSSGEMM_TUNE=off, the planner's
# default for each) through CUDA. Written before: passes.
timeout 120 $B/batched a_batch_past_one_launch > $R/batched-big.log 2>&1; echo "big batch rc=$?"; grep -E "test result|panicked" $R/batched-big.log | head -3
fi
# First calls read the shipped tables: what the scripts' default ignores.
unset CROSSGEMM_IGNORE_TABLES
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
DTYPES="f16"; [ "$PART" = 2 ] && DTYPES="bf16 tf32"
for d in $DTYPES; do
  t=200; against=bench/results/h200-2026-12-01b/full-f16-bf16.json
  [ $d = tf32 ] && t=150 && against=bench/results/h200-2026-12-01c/full-tf32.json
  timeout $t $B/crossgemm bench --first-call --dtypes $d --cache-dir /tmp/cg-ab1-$d --out $R --name first-$d --against $against > $R/$d.log 2>&1; echo "bench $d rc=$?"
  python3 bench/rows.py $R/first-$d.json
done
finish
