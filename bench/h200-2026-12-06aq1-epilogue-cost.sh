#!/usr/bin/env bash
# Session aq, batch aq1: is the fused epilogue's 1 µs at 1024x1024x2048 (ap2: 12.0 plain,
# 13.0 with bias+ReLU on the 64x128 tile, 0.91x cuBLASLt; at 1024³ the same tile pays
# 0.4 µs) real, or one process's spread? The two rows as first calls on the shipped
# tables, every epilogue, in three processes.
# Written before: if it is the spread, the three processes give bias+ReLU 0.3-0.6 µs over
# plain at both shapes; if it is real, >= 0.8 µs at 1024x1024x2048 in each.
# Binaries: `scripts/dev-build.sh .dev/NAME` at the head, B=.dev/NAME. Carry: [B]. ~1.5 min.
BATCH=${BATCH:-aq1}
B=${B:?name the binaries folder}
source bench/lib.sh $BATCH
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
unset CROSSGEMM_IGNORE_TABLES
for round in 1 2 3; do
  tag=epi-$round
  timeout 60 $B/crossgemm bench --first-call --shape 1024x1024x2048 --shape 1024x1024x1024 --dtypes f16 \
    --cache-dir /tmp/cg-$BATCH-$round --out $R --name $tag > $R/$tag.log 2>&1; echo "$tag rc=$?"
  grep -E "^\| 1024x1024x(2048|1024) \| square" $R/$tag.md | cut -d'|' -f2,4-9
done
finish
