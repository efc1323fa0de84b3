#!/usr/bin/env bash
# Session ao, batch ao4: tunes of tf32 with a row-major W at 16 and 32 rows of 4096x4096
# (after ao1: decode_n's default, 16 or 32 rows, 64 columns, 8 warps, 4 stages, 36.1-36.6
# and 38.7-39.2 µs): which configs win, and whether the default should move.
# Binaries: .dev/ao2c. Carry: [".dev/ao2c"]. ~4 minutes.
# Written before: decode_n's 64-column tiles first (z3's f16 order), within 5% of each
# other; K split in 2 no better at N = 4096 (64 blocks already fill half the SMs... as in
# f16, where it lost).
BATCH=${BATCH:-ao4}
B=.dev/ao2c
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
for m in 16 32; do
  tag=${m}x4096x4096
  timeout 150 $B/crossgemm tune --shape $tag --dtype tf32 --w-layout row --epilogue none --json --cache-dir /tmp/cg-$BATCH-$tag > $R/tune-$tag.json 2> $R/tune-$tag.err
  python3 bench/tune_summary.py "tf32 row-W $tag" $R/tune-$tag.json
done
finish
