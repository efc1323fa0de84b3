#!/usr/bin/env bash
# Session ah, batch ah1: first calls after a1d58b9, against 45ab4e8 (.dev/ag1s's CLI),
# the two alternating over two rounds. Binaries: .dev/ah1s (the CLI of
# `cargo build --release --features baseline,aot --bin crossgemm` at the commit in COMMIT,
# gzipped) and .dev/ag1s. Carry: [".dev/ah1s", ".dev/ag1s"]. ~5 minutes.
# 1. tf32 first calls on the shipped tables at one and eight columns: the tf32 records
#    hold no skinny bucket, and a cached call took the nearest bucket's 128x256 wgmma tile
#    (ab1 PART=2 on an H100: 0.61-0.64x cuBLAS at 12288x1x4096, 0.47-0.51x at 4096x8x4096);
#    now a shape specialist's default (a turned gemv) is kept. Written before: the turned
#    gemv at 12288x1x4096 reads A (201 MB) near the copy bandwidth, about 1.0-1.2x
#    cuBLAS; 4096x8x4096 (gemv with 8 columns per block, 8 rows of C each) 0.8-1.2x, both
#    far above the wgmma tile; 1x12288x4096 (its own table winner) unchanged.
# 2. f16 defaults without tables (NO_TABLES=1: each call runs the planner's default):
#    decode's first tile is now 8 warps over K instead of 4. Written before: 8x4096x4099
#    and 2x4096x4099 ~25% faster (ag1 PART=1's tunes: 24.9 against 31.2 µs), aligned
#    1-row shapes 0-10% faster, 8x4096x4096 within 2% (the 4-warp group's one win).
BATCH=${BATCH:-ah1}
B=.dev/${BATCH}s
OLD=.dev/ag1s
source bench/lib.sh $BATCH
for f in "$OLD"/*.gz; do [ -e "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
DTYPES=tf32 ROWS=6 first_calls "$OLD $B" \
  "skinny|--shape 12288x1x4096 --shape 4096x8x4096 --shape 1x12288x4096 --epilogues none,bias_relu"
NO_TABLES=1 ROWS=8 first_calls "$OLD $B" \
  "decode|--shape 1x12288x4096 --shape 1x4096x11008 --shape 8x4096x4096 --shape 16x4096x4096 --shape 32x4096x4096 --shape 2x4096x4099 --shape 8x4096x4099 --epilogues none"
for j in $R/*.json; do python3 bench/rows.py $j > ${j%.json}.rows 2>&1; done
finish
