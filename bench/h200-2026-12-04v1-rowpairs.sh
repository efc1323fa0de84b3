#!/usr/bin/env bash
# Session v, batch v1 (no crossgemm binary: `bench/tma_boxes.py pairs`).
# Batches u1-u5 found TMA loads from L2 of rows an odd multiple of 16 bytes apart capped
# near 4.6-6.4 TB/s for the chip, whatever the box, swizzle, promotion or issuers. Not yet
# asked: does the cost follow the rows' addresses (every other row starting 16 bytes off
# a 32-byte sector) or the map's stride (a stride TMA cannot take in 32-byte steps)?
# Written before: if a row-pair map (rank 3 over {K, 2, rows / 2}, strides {pitch,
# 2 pitch}; the same addresses, the same shared layout) runs at the aligned pitch's rate,
# the kernels can encode their maps that way on such rows (1000^3, K + 8 views); if it
# runs as the 2-D odd map, and a 2-D map of aligned stride from a base 16 bytes in is as
# slow, the cost is the addresses and no map removes it.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
R=$OUT/v1; mkdir -p $R
timeout 120 python3 bench/tma_boxes.py pairs > $R/pairs.txt 2>&1; echo "pairs rc=$?"
cat $R/pairs.txt
cd $OUT && tar czf v1.tgz v1 && rm -rf v1
