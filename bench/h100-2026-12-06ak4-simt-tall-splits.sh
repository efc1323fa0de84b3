#!/usr/bin/env bash
# Session ak, batch ak4: the CUDA simt plan with K split on tiles taller than 32 rows (over
# 2 or 4 blocks) and the default pick that moves to such a split for walks of at least 256
# k-tiles on tiles that leave SMs idle (`estimate::MIN_SERIAL_STEPS`), and the default's
# half-the-SMs test counting blocks by the share of their tile that is not padding (at
# 16x12288x4096 the default was a 128x128 tile, 96 blocks of 7/8 padding). Full f32: first
# calls with the tables ignored (each call's default pick), before (.dev/aj3s, 78fff50)
# and after (.dev/ak4s), then a tune at the head of the two tall rows that batch ak2 timed
# by hand. Binaries: the CLI (`baseline`, `aot`) at the commit in COMMIT, as .dev/ak4s.
# Carry: [".dev/ak4s", ".dev/aj3s"]. ~4 minutes.
# Written before: first calls 128x8192x8192 519 -> ~472 us (128x64 ksplit 2, ak2),
# 128x4096x11008 ~475 (the old default, 64x64 whole, ak2) -> below it (64x64 ksplit 4,
# not timed before), 16x12288x4096 faster than its 128x128 default
# (16x128 ksplit 8), 1000^3, 4096^3 and 16x4096x4096 unchanged; the
# tunes find 128x128 ksplit 4 (425 us) and 128x64 ksplit 2 (355 us).
BATCH=${BATCH:-ak4}
B=${B:-.dev/ak4s}
source bench/lib.sh $BATCH
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
SH="--shape 128x8192x8192 --shape 128x4096x11008 --shape 16x12288x4096 --shape 1000x1000x1000 --shape 16x4096x4096 --shape 4096x4096x4096"
for arm in old new; do
  bin=$B; [ $arm = old ] && bin=.dev/aj3s
  for f in $bin/*.gz; do [ -e "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
  timeout 150 $bin/crossgemm bench --first-call --dtypes f32 --epilogues none $SH \
    --cache-dir /tmp/cg-$BATCH-$arm --out $R --name $arm-first > $R/$arm-first.log 2>&1; echo "first $arm rc=$?"
  python3 bench/rows.py $R/$arm-first.json | tail -8
done
for sh in 128x8192x8192 128x4096x11008; do
  timeout 150 $B/crossgemm tune --shape $sh --dtype f32 --epilogue none --json --thorough --cache-dir /tmp/cg-$BATCH-tune > $R/tune-$sh.json 2> $R/tune-$sh.err
  echo "tune $sh rc=$?"; python3 bench/tune_summary.py "$sh f32" $R/tune-$sh.json | cut -c1-400
done
finish
