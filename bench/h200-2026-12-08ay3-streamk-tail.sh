#!/usr/bin/env bash
# Session ay, batch ay3: stream-K in its tail form (5ea8562). Classic stream-K (equal
# contiguous shares of the last G + U % G units' k-tiles) ran 9-27% slower than the
# whole tiles on an H100 (ax3: 128x256 290.5 against 267.0 µs at 2048x11008x4096, 228.8
# against 180.7 at 4096³), each of its blocks at its own k offset. The tail form runs the
# full waves whole and splits each unit of the partial last wave S = min(G / T, KT, 8)
# ways by K: 2048x11008x4096 in 128x256 (688 units: 5 waves + 28) as 112 quarter-units,
# in 128x128 (1376: 10 waves + 56) halves, in 128x192 (928: 7 waves + 4) eighths; 4096³
# in 128x256 (512: 3 waves + 116) runs whole, the same work as the plain tile.
# Binaries: B=.dev/NAME (the CLI and the `kernels` test, gzipped). Carry: [B]. ~4 min.
# 1. the persistent-grid and split-K same-bits tests on the GPU (f16_rc_sk's tail-split
#    configs against the host reference), memcheck and racecheck on a bench of
#    1024x4352x512 in 128x256 stream-K tiles (136 units on 132 blocks: 4 units split 8
#    ways); 2. each config whole and stream-K, f16 and bf16, none and bias_relu.
# Written before: 128x256 stream-K ~240 µs at 2048x11008x4096 (267 whole: the sixth
# wave's ~45 µs becomes a quarter of it plus a fold of four 128 KB partials, ~15 µs),
# ~1.04x cuBLAS; 128x128 stream-K ~5% under its whole tile; 4096³ within 1% of whole.
BATCH=${BATCH:-ay3}
B=${B:?name the binaries folder}
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
suite kernels 240 kernels persistent_grids_loop_over_tiles split_k_configs_give_the_same_bits_twice
SK=',"streamk":true'
C=$(cfg 64 128 256 4 2 false 1 "$SK")
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --print-limit 5 $B/crossgemm bench --shape 1024x4352x512 --config "$C" \
    --dtypes f16 --epilogues bias_relu --no-vendor --runs 10 --warmup 1 --out $R --name $tool > $R/$tool.log 2>&1; echo "$tool rc=$?"
  tail -2 $R/$tool.log
done
for c in "128 256 4 2 -" "128 256 4 2 sk" "128 128 6 2 -" "128 128 6 2 sk" "128 192 5 2 -" "128 192 5 2 sk"; do
  set -- $c
  C=$(cfg 64 $1 $2 $3 $4 false 1 "$([ $5 = sk ] && echo "$SK")")
  tag=$1x$2-s$3-c$4-$5
  timeout 120 $B/crossgemm bench --shape 2048x11008x4096 --shape 4096x4096x4096 --config "$C" \
    --dtypes f16,bf16 --epilogues none,bias_relu --out $R --name $tag > $R/$tag.log 2>&1; echo "$tag rc=$?"
  grep -E "^\[|^    ours" $R/$tag.log | paste - - | sed -E 's/, err .*//; s/ +ours/ ours/' | cut -c1-150
done
finish
