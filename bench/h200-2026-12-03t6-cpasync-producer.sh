#!/usr/bin/env bash
# Session t, batch t6 (.dev/t6: the CLI at the head plus an experiment switch,
# CROSSGEMM_EXP_CPASYNC, that makes the wgmma kernel fill its ring with the cp.async
# producer (all 128 producer threads, 16-byte copies) on rows TMA could map).
# Batches t1, t3, t5 refuted L2 bytes, DRAM order and per-SM intake as what holds the
# M = 128 rows; t4 has load-only at 98% of the full time, 15% slower than the decode
# kernel's direct 16-byte loads of the same B. What is left on the load side is TMA
# itself: one thread issuing boxes of 128-byte rows.
# Written before: if TMA's issue is what limits, the cp.async producer ties or beats it
# at 128x12288x4096 (64x192 one consumer, 128x128 two) and 128x8192x8192; if not, it is slower (as at
# 1000^3 in batch 02e: 13.8 against 12.6 us). Each side in its own processes,
# alternating, with caches of their own; every candidate verified by its tune.
B=.dev/t6
source bench/lib.sh t6
C=(--config "$(cfg 64 64 192 6 1 true)" --config "$(cfg 64 128 128 6 2 false)" --config "$(cfg 64 64 128 8 1 true)")
D=(--config "$(cfg 64 64 128 8 1 true)" --config "$(cfg 64 64 192 6 1 true)")
for round in 1 2; do
  for side in tma cpasync; do
    env=(); [ $side = cpasync ] && env=(CROSSGEMM_EXP_CPASYNC=1)
    env "${env[@]}" timeout 90 $B/crossgemm tune --shape 128x12288x4096 --dtype f16 --epilogue none --json --cache-dir /tmp/cg-t6-$side "${C[@]}" > $R/tune-$side-$round.json 2> $R/tune-$side-$round.err
    python3 bench/tune_summary.py "128x12288x4096 none $side $round" $R/tune-$side-$round.json
    env "${env[@]}" timeout 90 $B/crossgemm tune --shape 128x8192x8192 --dtype f16 --epilogue none --json --cache-dir /tmp/cg-t6-$side "${D[@]}" > $R/tune8192-$side-$round.json 2> $R/tune8192-$side-$round.err
    python3 bench/tune_summary.py "128x8192x8192 none $side $round" $R/tune8192-$side-$round.json
  done
done
finish
