#!/usr/bin/env bash
# Session am, batch am7: why am6's 16-row gemv ran 2.7x slower at 16 columns than at 12.
# The 16-row config (f32, row-major W, the interleaved walk) timed alone at 12, 14 and 16
# columns (X's rows 48, 56, 64 bytes; X 192, 224, 256 KB at K = 4096) and at 16 columns
# with K = 2048 and 1024 (X 128 and 64 KB), then `diagnose` of 4096x16x4096 and
# 4096x12x4096 (load-only, compute-only against full).
# Binaries: .dev/am6c (0aa71c7, which plans 16 rows). Carry: [".dev/am6c"]. ~3 minutes.
# Written before: if X's size against the L1 (256 KB with shared memory) decides it,
# 14 columns lies between and K = 2048 at 16 columns runs at 12 columns' rate (~half of
# K = 4096's time); if the 64-byte pitch does, 14 columns is fast and K changes nothing.
BATCH=${BATCH:-am7}
B=.dev/am6c
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
C='{"family":"gemv","mr":16,"warps":8,"cols":1,"ksplit":1,"swap":true}'
for s in 4096x12x4096 4096x14x4096 4096x16x4096 4096x16x2048 4096x16x1024; do
  timeout 60 $B/crossgemm tune --shape $s --dtype f32 --epilogue none --w-layout row --json \
    --cache-dir /tmp/cg-$BATCH-$s --config "$C" > $R/tune-$s.json 2> $R/tune-$s.err
  python3 bench/tune_summary.py "$s" $R/tune-$s.json
done
for s in 4096x16x4096 4096x12x4096; do
  timeout 90 $B/crossgemm diagnose --shape $s --dtype f32 --epilogue none --w-layout row --config "$C" \
    --cache-dir /tmp/cg-$BATCH-d-$s > $R/diagnose-$s.txt 2>&1; echo "diagnose $s rc=$?"
  grep -iE "full|load.only|compute.only|verdict|no.epilogue" $R/diagnose-$s.txt | head -6
done
finish
