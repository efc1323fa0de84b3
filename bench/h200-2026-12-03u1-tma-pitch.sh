#!/usr/bin/env bash
# Session u, batch u1 (.dev/u1: the CLI at 89fe005 with exp-l2promo.patch, which reads the
# tensor maps' L2 promotion from CROSSGEMM_EXP_L2PROMO = none|64|128, else 256 as shipped).
# Rows whose pitch is an odd multiple of 16 bytes cost the wgmma kernels +47% at 1000^3
# (batch r1: 64x128, 2000-byte rows against 2048) and K + 8 views 6-16% (batch c), with
# the L2 doing twice the work for the same bytes (r1's Nsight Compute). What in TMA pays?
# 1. bench/tma_pitch.py: TMA box loads alone, one thread a block, by pitch (packed, +8,
#    +16, 64-byte multiple), box width and swizzle, L2 promotion; L2-resident (1000^3's A,
#    re-read) and DRAM-streamed (16384x4096 read once).
#    Written before: the L2 case shows the r1 penalty at pitch 1000 (+30-50% against
#    1024) and little at 1008/1016; if promotion none or 128B takes it away there, the
#    kernels' 256B promotion is the cause; if 64-byte rows (64B swizzle) pay as much
#    per byte, it is per box row (a start mid-sector), not per byte.
# 2. The real kernels at 1000^3 and the 1000x1000x1024 control with each promotion
#    (64x128 one consumer, 128x128 two), same binary, one process per promotion.
# 3. 1000^3 configs the tune never timed: the same tiles in 2-block clusters (B
#    multicast halves the box rows a block asks of the L2), 128x64 in a pair, 2x2.
#    Written before: if the L2's per-row work is the limit, 64x128 in pairs 13.7 -> ~12.
B=.dev/u1
source bench/lib.sh u1
python3 bench/tma_pitch.py > $R/tma_pitch.txt 2>&1; echo "tma_pitch rc=$?"
cat $R/tma_pitch.txt
C=()
for c in "$(cfg 64 64 128 8 1 true)" "$(cfg 64 128 128 6 2 false)"; do C+=(--config "$c"); done
for promo in 256 none 128 64 256b; do
  for shape in 1000x1000x1000 1000x1000x1024; do
    CROSSGEMM_EXP_L2PROMO=${promo%b} timeout 60 $B/crossgemm tune --shape $shape --dtype f16 --epilogue none --json --cache-dir /tmp/cg-u1 "${C[@]}" > $R/tune-$shape-$promo.json 2> $R/tune-$shape-$promo.err
    python3 bench/tune_summary.py "$shape promo $promo" $R/tune-$shape-$promo.json
  done
done
D=()
for c in "$(cfg 64 64 128 8 1 true)" "$(cfg 64 64 128 8 1 true 2)" "$(cfg 64 128 128 6 2 false)" "$(cfg 64 128 128 6 2 false 2)" \
  "$(cfg 64 64 128 8 2 false 2 ',"pingpong":true')" "$(cfg 64 128 64 8 2 false 2)" "$(cfg 64 128 128 6 2 false 2 ',"cluster_n":2')"; do
  D+=(--config "$c")
done
timeout 90 $B/crossgemm tune --shape 1000x1000x1000 --dtype f16 --epilogue none --json --cache-dir /tmp/cg-u1 "${D[@]}" > $R/tune-clusters.json 2> $R/tune-clusters.err
python3 bench/tune_summary.py "1000^3 clusters" $R/tune-clusters.json
finish
