#!/usr/bin/env bash
# Session ar, batch ar3: (1) the whole bf16 table as a user's first calls at the head on
# the H200 (`bench --first-call`, the shipped tables, nothing tuned), the bf16 side of the
# f16 table session ap ran (ap2: f16 1.138x cuBLAS, 1.072x cuBLASLt over 72 rows), for
# issues 9 and 10's reports; (2) the two weak rows of ap2/ap1 tuned with their records
# exported for `records/h200.json` (what ap10 was to do; its staged-swing arms ran on an
# H100 in aq2/aq5/ar1 and are settled): full f32 with a row-major W at 32x4096x4096 (ap1:
# 0.63x cuBLAS's SGEMM on its 32x32x16 default, K in 8) and tf32 with a row-major W at
# 1x4096x4096 (0.86x).
# Binaries: the CLI of `scripts/dev-build.sh` at the head, B=.dev/NAME. Carry: [B]. ~8 min.
# Written before: (1) bf16 within 2% of f16's ratios row by row (the same kernels and
# table winners; bf16 has its own buckets where aa7 tuned them), geomean ~1.13x cuBLAS;
# (2) as on the H100 (aq8: 32x64x16 K in 8 in 64.4 against 75.9 µs), the 64-column tile
# wins at 32 rows by ~15% (>= 0.75x cuBLAS), and no tf32 gemv_n config beats its default
# at one row by more than 2%.
BATCH=${BATCH:-ar3}
B=${B:?name the binaries folder}
source bench/lib.sh $BATCH
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
# PART=records runs (2) alone (~4 min).
unset CROSSGEMM_IGNORE_TABLES
[ "${PART:-all}" = records ] || timeout 260 $B/crossgemm bench --first-call --dtypes bf16 --cache-dir /tmp/cg-$BATCH-bf16 --out $R --name first-bf16 \
  > $R/bf16.log 2>&1; echo "bench bf16 rc=$?"
[ "${PART:-all}" = records ] || python3 bench/rows.py $R/first-bf16.json | tail -8
export CROSSGEMM_IGNORE_TABLES=1
timeout 150 $B/crossgemm bench --w-layout row --shape 32x4096x4096 --dtypes f32 --epilogues none --max 24 \
  --cache-dir /tmp/cg-$BATCH --out $R --name f32-row32 > $R/f32-row32.log 2>&1; echo "f32 row32 rc=$?"
python3 bench/rows.py $R/f32-row32.json | tail -3
timeout 100 $B/crossgemm bench --w-layout row --shape 1x4096x4096 --dtypes tf32 --epilogues none --max 16 \
  --cache-dir /tmp/cg-$BATCH --out $R --name tf32-row1 > $R/tf32-row1.log 2>&1; echo "tf32 row1 rc=$?"
python3 bench/rows.py $R/tf32-row1.json | tail -3
$B/crossgemm --cache-dir /tmp/cg-$BATCH cache export $R/records-weak.json > $R/export.log 2>&1; echo "export rc=$?"
finish
