#!/usr/bin/env bash
# Session as, batch as1: the whole bench table (bench/shapes.toml) as a user's first calls
# at the head on the H200, f16 and bf16 from one run, for issues 9, 10 and 13's reports:
# `bench --first-call` on the shipped tables (records/h200.json), an empty cache, nothing
# tuned. f16 `--against` ap2 (0f95c40, the last whole f16 table: 1.138x cuBLAS, 1.072x
# cuBLASLt over 72 rows); bf16 `--against` 01b's first calls (the last whole bf16 table).
# On an H100 (none of the H200's earlier reports apply) f16 goes `--against` the H100's
# last whole table, ai2 (12-05), and bf16 against none.
# Binaries: the CLI of `cargo build --release --features baseline,aot --bin crossgemm` at
# the head, gzipped with its COMMIT, B=.dev/NAME. Carry: [B]. ~8 min.
# Written before: f16 within 3% of ap2 row by row but for 3000x5000x700, whose staged
# calls ran 74-196 µs in ap2 and now keep their scratch on the device (fe6f2ac; 56-59 µs
# on an H100, ar1): 2x cuBLAS or better there; geomean ~1.14x cuBLAS. bf16 within 2% of
# f16's ratios row by row (the same kernels; bf16's own buckets where aa7 tuned them).
BATCH=${BATCH:-as1}
B=${B:?name the binaries folder}
source bench/lib.sh $BATCH
unset CROSSGEMM_IGNORE_TABLES
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
# `vs H200_REPORT [H100_REPORT]`: the earlier report of the card this runs on, if any.
vs() {
  if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then echo "--against $1";
  elif [ -n "${2:-}" ]; then echo "--against $2"; fi
}
timeout 250 $B/crossgemm bench --first-call --dtypes f16 --cache-dir /tmp/cg-$BATCH-f16 --out $R --name first-f16 \
  $(vs bench/results/h200-2026-12-06ap2/first-f16.json bench/results/h100-2026-12-05ai2/first-f16.json) > $R/f16.log 2>&1; echo "bench f16 rc=$?"
python3 bench/rows.py $R/first-f16.json | tail -8
# PART=f16 runs the f16 table alone (~4 min).
[ "${PART:-all}" = f16 ] || timeout 250 $B/crossgemm bench --first-call --dtypes bf16 --cache-dir /tmp/cg-$BATCH-bf16 --out $R --name first-bf16 \
  $(vs bench/results/h200-2026-12-01b/first-call.json) > $R/bf16.log 2>&1; echo "bench bf16 rc=$?"
[ "${PART:-all}" = f16 ] || python3 bench/rows.py $R/first-bf16.json | tail -8
finish
