#!/usr/bin/env bash
# Session ak, batch ak5: the default's half-the-SMs test counting blocks by the share of
# their tile that is not padding (8eb3e6e). Batch ak4 ran e2bc4fa (its binary predates
# that commit): 16x12288x4096 f32's default there, a 128x128 tile with K in 2 (96 tiles of
# 7/8 padding), took 442.8 us, and the 128x128 with K whole before it 416.0 (0.33x cuBLAS).
# First calls with the tables ignored, e2bc4fa (.dev/ak4s) against the head (.dev/ak5s).
# Carry: [".dev/ak5s", ".dev/ak4s"]. ~2 minutes.
# Written before: 16x12288x4096 to 16x128 ksplit 8, near 16x4096x4096's 1.05x (so
# ~130-150 us), every other row unchanged.
BATCH=${BATCH:-ak5}
B=${B:-.dev/ak5s}
source bench/lib.sh $BATCH
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
SH="--shape 16x12288x4096 --shape 16x4096x11008 --shape 128x12288x4096 --shape 128x8192x8192 --shape 1000x1000x1000"
for arm in old new; do
  bin=$B; [ $arm = old ] && bin=.dev/ak4s
  for f in $bin/*.gz; do [ -e "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
  timeout 120 $bin/crossgemm bench --first-call --dtypes f32 --epilogues none $SH \
    --cache-dir /tmp/cg-$BATCH-$arm --out $R --name $arm-first > $R/$arm-first.log 2>&1; echo "first $arm rc=$?"
  python3 bench/rows.py $R/$arm-first.json | tail -8
done
finish
