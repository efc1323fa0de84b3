#!/usr/bin/env bash
# Session t, batch t10 (.dev/s1old: the CLI at e461622).
# Batch t9: ~3 us of the M = 128 rows' bench gap to the decode row is outside the kernel.
# Tunes of one config at problems too small to take time in the kernel, each run after
# the bench's memset and between CUDA events, as every tuned time: what a wgmma launch
# costs against a decode launch, alone (one block) and with the grids of the LLM rows
# (K = 64: 128 wgmma blocks of 64x192, 768 decode blocks).
# Written before: the wgmma launches 2-4 us longer than the decode launches at the same
# problem, whatever the grid.
B=.dev/s1old
source bench/lib.sh t10
DEC='{"family":"decode","mt":1,"nt":1,"warps":8,"kw":8,"unroll":4}'
for round in 1 2; do
  for s in 64x192x64 128x12288x64; do
    timeout 60 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --json --cache-dir /tmp/cg-t10 --config "$(cfg 64 64 192 6 1 true)" > $R/wgmma-$s-$round.json 2> $R/wgmma-$s-$round.err
    python3 bench/tune_summary.py "wgmma 64x192 at $s $round" $R/wgmma-$s-$round.json
  done
  for s in 8x16x64 1x12288x64; do
    timeout 60 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --json --cache-dir /tmp/cg-t10 --config "$DEC" > $R/decode-$s-$round.json 2> $R/decode-$s-$round.err
    python3 bench/tune_summary.py "decode 8x16 at $s $round" $R/decode-$s-$round.json
  done
done
finish
