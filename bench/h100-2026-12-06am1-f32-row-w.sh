#!/usr/bin/env bash
# Session am, batch am1. On an H200: the queued f32 records (batch ai3's script on the CLI
# at the head). On an H100 (what the last sessions were lent): what full f32 and tf32 do
# with a row-major W of few columns, before a change to gemv's loads of a small side
# stored across (the planner's default there is gemv turned around, which reads that side
# element by element: 0.55 ms at 4096x8x4096 in f16 before decode took f16). First calls
# (the planner's default: no table has these kernels) beside cuBLAS's NN SGEMM, then a
# full tune of f32 at 4096x8x4096 and 12288x4x4096 (which family wins, by how much).
# Binaries: .dev/am1c (the CLI at the head, with f32/tf32 row-W kernels). Carry:
# [".dev/am1c"]. ~4 minutes on an H100.
# Written before: f32 row-W 4096x8x4096's default takes 0.3-1 ms (cuBLAS ~40 µs: 64 MB of
# x at ~2.5 TB/s), a tune's best (simt, or gemv plain with K split?) several times less.
BATCH=${BATCH:-am1}
B=.dev/am1c
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  B=$B BATCH=$BATCH exec bash bench/h200-2026-12-05ai3-f32-records.sh
fi
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
unset CROSSGEMM_IGNORE_TABLES
for dt in f32 tf32; do
  timeout 150 $B/crossgemm bench --first-call --w-layout row --dtypes $dt --epilogues none \
    --shape 4096x8x4096 --shape 12288x4x4096 --shape 12288x1x4096 --shape 4096x16x4096 \
    --cache-dir /tmp/cg-$BATCH-first-$dt --out $R --name first-$dt > $R/first-$dt.log 2>&1; echo "first $dt rc=$?"
  grep -E "^\| [0-9]+x" $R/first-$dt.md | cut -d'|' -f2-10,17
done
export CROSSGEMM_IGNORE_TABLES=1
for s in 4096x8x4096 12288x4x4096; do
  timeout 120 $B/crossgemm tune --shape $s --dtype f32 --epilogue none --w-layout row --max 48 --json \
    --cache-dir /tmp/cg-$BATCH-t > $R/tune-$s.json 2> $R/tune-$s.err; echo "tune $s rc=$?"
  python3 bench/tune_summary.py "f32 row-W $s" $R/tune-$s.json | cut -c1-900
done
finish
