#!/usr/bin/env bash
# Session ai, batch ai2: the whole bench table (bench/shapes.toml) as a user's first calls
# at the head, on the H200: `bench --first-call` with the shipped tables (records/h200.json),
# an empty cache, nothing tuned. f16 `--against` batch ab1's first calls (7898c0f, the
# last whole f16 table on an H200); then f32 (plain), the simt kernel of session ah, whose
# table winners (128x128x32 in 36 of 72 records) were tuned on the kernel before it,
# `--against` 01b's full tunes. Binaries: the CLI of `cargo build --release --features
# baseline,aot --bin crossgemm` at the commit in COMMIT, carried as .dev/ai2s. Carry:
# [".dev/ai2s"]. ~7 minutes. B names other binaries (BATCH the batch, and B's default).
# Written before: f16 within 3% of ab1 row by row (the session-ah defaults change only
# calls without a table winner; the f16 table has one for every row), geomean 1.14x
# cuBLAS again; f32 at 0.8-0.9x cuBLAS on the large rows and well past 01b's 0.5-0.7x,
# the rows whose table winner is a 128x128x32 tile behind those a tune at the head picks
# (ai1: 128x128x16 and 128x64x16).
# Then issue 13's batch rows, full tunes (48 candidates, tables ignored), --against aa3
# (8x2048^3 0.98x cuBLAS plain there). Written before: within +-3% of aa3 (nothing since
# changed the wgmma family's batched kernels).
BATCH=${BATCH:-ai2}
B=${B:-.dev/${BATCH}s}
source bench/lib.sh $BATCH
unset CROSSGEMM_IGNORE_TABLES
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
# The reports named with --against are the H200's: on another card (H100) leave them out.
vs() { nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && echo "--against $1"; }
timeout 240 $B/crossgemm bench --first-call --dtypes f16 --cache-dir /tmp/cg-$BATCH-f16 --out $R --name first-f16 \
  $(vs bench/results/h200-2026-12-05ab1/first-f16.json) > $R/f16.log 2>&1; echo "bench f16 rc=$?"
python3 bench/rows.py $R/first-f16.json | tail -8
timeout 150 $B/crossgemm bench --first-call --dtypes f32 --epilogues none --cache-dir /tmp/cg-$BATCH-f32 --out $R --name first-f32 \
  $(vs bench/results/h200-2026-12-01b/full-f32-tf32.json) > $R/f32.log 2>&1; echo "bench f32 rc=$?"
python3 bench/rows.py $R/first-f32.json
export CROSSGEMM_IGNORE_TABLES=1
for b in "512x512x128 32" "128x4096x128 64" "2048x2048x2048 8"; do
  set -- $b
  timeout 100 $B/crossgemm bench --cache-dir /tmp/cg-$BATCH-b --shape $1 --batch $2 --dtypes f16 --epilogues none,bias_relu --max 48 --out $R --name batch$2 $(vs bench/results/h200-2026-12-04aa3/batch$2.json) > $R/batch$2.log 2>&1; echo "bench batch$2 rc=$?"
  grep -E "^\| [0-9]" $R/batch$2.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -2
done
finish
