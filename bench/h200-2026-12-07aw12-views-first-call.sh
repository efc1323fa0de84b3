#!/usr/bin/env bash
# Session aw, batch aw12: first calls on views with mid-sector rows (K + 8 elements a
# row: every other row starts mid-sector) after `KernelFamily::for_rows` (a start chosen
# for packed rows takes its wgmma tile's 2-block cluster twin where its blocks make a
# full wave), against packed rows (K + 0) and 128-byte rows (K + 64), f16 and bf16.
# Binaries: B=.dev/NAME, the CLI (`baseline,aot`) at the change; OLD=.dev/NAME at
# 3dd2d49 (before it) for the same rows in the same lease. Carry: [B, OLD]. ~2 min.
# Written before (aw7-aw11 at 3dd2d49: K + 8 first calls 0.52-0.81x cuBLAS): at K + 8,
# 4096³ ~192 µs (0.97x, was 283), 8192³ ~1680 (was 2404), 2048x11008x4096 ~283 (was
# 499); 1024³ and 128x12288x4096 unchanged (less than a wave); K + 0 and K + 64 unchanged.
BATCH=${BATCH:-aw12}
B=${B:?name the binaries folder}
OLD=${OLD:-}
source bench/lib.sh $BATCH
unset CROSSGEMM_IGNORE_TABLES
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
S="--shape 4096x4096x4096 --shape 8192x8192x8192 --shape 2048x11008x4096 --shape 2048x2048x2048 --shape 1024x1024x1024 --shape 128x12288x4096"
for bin in $B $OLD; do
  tag=$(basename $bin)
  for p in 8 0; do
    CROSSGEMM_COMMIT="$(head -1 $bin/COMMIT)" timeout 100 $bin/crossgemm bench --first-call $S --pad $p --dtypes f16,bf16 --epilogues none \
      --cache-dir /tmp/cg-$BATCH-$tag-$p --out $R --name $tag-pad$p > $R/$tag-pad$p.log 2>&1; echo "$tag pad$p rc=$?"
    grep -E "^    ours" $R/$tag-pad$p.log | sed -E 's/, err .*wgmma/ wgmma/; s/, first call.*//' | cut -c1-150
  done
done
finish
