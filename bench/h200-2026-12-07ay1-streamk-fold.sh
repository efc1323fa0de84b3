#!/usr/bin/env bash
# Session ay, batch ay1: the stream-K (and KSPLIT 2) fold with half its workspace reads.
# Two blocks meet in a stream-K unit; each writes its f32 partial (128 KB for 128x256)
# and the last to arrive used to read both slots back (its own too, so that the sum ran
# in split order). Two terms commute bit for bit, so it now adds the other's slot to its
# own registers: per shared unit 2 writes + 1 read instead of 2 + 2. Run beside ax3 (the
# same configs on the binaries before, `.dev/aw12`) in one lease.
# Binaries: B=.dev/NAME (the CLI and the `kernels` test gzipped, at the change). Carry: [B].
# 1. the persistent-grid and same-bits tests (stream-K and split-K configs against the
#    host reference, twice for the same bits) and memcheck on a bench of a shape whose
#    every unit is shared (1024x4352x512 in 128x256 tiles: 136 units on 132 blocks);
# 2. the stream-K configs of ax3 timed (f16, bf16; none, bias_relu). ~3 min.
# Written before: stream-K rows 1-3 µs faster than ax3's at 2048x11008x4096 (160 shared
# units: ~20 MB fewer L2 reads at the end of the run, ~5 µs at L2 speed spread over the
# fold's tail); 4096³ (3.88 waves: 112 shared units) alike; same bits and no error.
BATCH=${BATCH:-ay1}
B=${B:?name the binaries folder}
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
suite kernels 240 kernels persistent_grids_loop_over_tiles split_k_configs_give_the_same_bits_twice
SK=',"streamk":true'
C=$(cfg 64 128 256 4 2 false 1 "$SK")
timeout 120 compute-sanitizer --tool memcheck --print-limit 5 $B/crossgemm bench --shape 1024x4352x512 --config "$C" \
  --dtypes f16 --epilogues none --no-vendor --runs 10 --warmup 1 --out $R --name memcheck > $R/memcheck.log 2>&1; echo "memcheck rc=$?"
tail -3 $R/memcheck.log
for c in "128 256 4 2" "128 128 6 2" "128 192 5 2"; do
  set -- $c
  C=$(cfg 64 $1 $2 $3 $4 false 1 "$SK")
  tag=$1x$2-s$3-c$4-sk
  timeout 120 $B/crossgemm bench --shape 2048x11008x4096 --shape 4096x4096x4096 --config "$C" \
    --dtypes f16,bf16 --epilogues none,bias_relu --out $R --name $tag > $R/$tag.log 2>&1; echo "$tag rc=$?"
  grep -E "^\[|^    ours" $R/$tag.log | paste - - | sed -E 's/, err .*//; s/ +ours/ ours/' | cut -c1-150
done
finish
