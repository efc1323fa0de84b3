#!/usr/bin/env bash
# Session aq, batch aq8: full f32 with a row-major W at 8, 16 and 32 rows of 4096x4096,
# tuned (24 candidates each) with the records exported: whether the 64-column simt tiles
# that won at 32 rows (aq2, aq6 on an H100: 32x64x16 with K in 8, 64.0-64.4 µs against the
# default 32x32x16's 76.0) win at 8 and 16 rows too, where the defaults are 16x32x16 with
# K in 8 (H200 first calls 43.8 and 44.6 µs, 1.05x and 1.97x cuBLAS's SGEMM; B's 64 MB at
# 1.5 TB/s).
# Binaries: B=.dev/NAME with the CLI (`scripts/dev-build.sh`). Carry: [B]. ~1.5 min.
# Written before: a 64-column tile (16x64 or 32x64, K in 8) wins at every row count, by
# 10-20% over the default's tile; the defaults' own times are in the tune's timings.
BATCH=${BATCH:-aq8}
B=${B:?name the binaries folder}
source bench/lib.sh $BATCH
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
timeout 200 $B/crossgemm bench --w-layout row --shape 8x4096x4096 --shape 16x4096x4096 --shape 32x4096x4096 \
  --dtypes f32 --epilogues none --max 24 --cache-dir /tmp/cg-$BATCH --out $R --name f32-row > $R/f32-row.log 2>&1; echo "f32 row rc=$?"
python3 bench/rows.py $R/f32-row.json | tail -6
$B/crossgemm --cache-dir /tmp/cg-$BATCH cache export $R/records-f32-row.json > $R/export.log 2>&1; echo "export rc=$?"
finish
