#!/usr/bin/env bash
# Session ax, batch ax3: stream-K again, on today's kernel. 2048x11008x4096 in 128x256
# tiles is 688 units on 132 SMs: 5.21 waves, so the sixth wave runs 28 tiles and 104 SMs
# idle (128x256 at 2048x11008x4096 267.6 µs against 4096³'s 181.1 for 3.88 waves:
# ~45 µs a wave). Stream-K shares the last 160 units' k-tiles out evenly, so each block
# runs 5.21 units' worth; the fold costs a 128 KB f32 partial written and read per block.
# Session i timed it on the 12-02 kernel (stream-K 254.5 once, then 268 against 266: not
# taken); the kernel has changed since (stmatrix epilogue, parameter areas, ...). Each
# config (`--config`) beside cuBLAS/cuBLASLt, f16 and bf16, none and bias_relu.
# Binaries: B=.dev/NAME, the CLI (`baseline,aot`). Carry: [B]. ~3 min.
# Written before: stream-K 128x256 ~240-245 µs at 2048x11008x4096 (1.02-1.04x cuBLAS)
# against ~267 plain; at 4096³ (3.88 waves) within 1% of plain; at 1000³ 128x128 (64
# units < 132 blocks: no stream-K wave, the same as plain).
BATCH=${BATCH:-ax3}
B=${B:?name the binaries folder}
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
SK=',"streamk":true'
for c in "128 256 4 2 -" "128 256 4 2 sk" "128 128 6 2 -" "128 128 6 2 sk" "128 192 5 2 sk" "192 192 4 3 -"; do
  set -- $c
  C=$(cfg 64 $1 $2 $3 $4 false 1 "$([ $5 = sk ] && echo "$SK")")
  tag=$1x$2-s$3-c$4-$5
  timeout 120 $B/crossgemm bench --shape 2048x11008x4096 --shape 4096x4096x4096 --config "$C" \
    --dtypes f16,bf16 --epilogues none,bias_relu --out $R --name $tag > $R/$tag.log 2>&1; echo "$tag rc=$?"
  grep -E "^\[|^    ours" $R/$tag.log | paste - - | sed -E 's/, err .*//; s/ +ours/ ours/' | cut -c1-150
done
finish
