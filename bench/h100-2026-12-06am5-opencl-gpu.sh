#!/usr/bin/env bash
# Session am, batch am5: gemv's across loads through NVIDIA's OpenCL, where gemv turned
# around is the default with a row-major W of at most 8 columns in every dtype (no decode
# there). `crossgemm devices` first; then, if an OpenCL GPU is found, first calls of f16
# and f32 with a row-major W before (.dev/am1c, 5969443: element loads) and after
# (.dev/am4c, e515fcc), alternating over two rounds (ours only: the vendor baselines are
# CUDA's). Carry: [".dev/am1c", ".dev/am4c"]. ~3 minutes on an H100.
# Written before: f16 4096x8x4096 several times faster (the CUDA f32 kernel went 539 ->
# 36 µs); 12288x4x4096 1.3-1.6x faster; if no OpenCL GPU is found, nothing is timed.
BATCH=${BATCH:-am5}
B=.dev/am4c
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
$B/crossgemm devices > $R/devices.txt 2>&1; cat $R/devices.txt
if grep -q "Gpu" $R/devices.txt && grep -q "^opencl" $R/devices.txt; then
  for round in 1 2; do for bin in .dev/am1c $B; do for dt in f16 f32; do
    tag=$(basename $bin)-$dt-$round
    timeout 100 $bin/crossgemm bench --first-call --device opencl-gpu --w-layout row --dtypes $dt --epilogues none \
      --shape 4096x8x4096 --shape 12288x4x4096 --cache-dir /tmp/cg-$BATCH-$(basename $bin)-$dt --out $R --name $tag > $R/$tag.log 2>&1
    echo "$tag rc=$?"; grep -E "^\| [0-9]+x" $R/$tag.md | head -2 | cut -d'|' -f2-5,11
  done; done; done
fi
finish
