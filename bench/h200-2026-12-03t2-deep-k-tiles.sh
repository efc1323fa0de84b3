#!/usr/bin/env bash
# Session t, batch t2 (.dev/s1old: the CLI at e461622).
# Batch 02e: the same wgmma config took 13.6 us on packed 1000^3 (2000-byte rows, every
# other row starting mid-sector) and 11.0 on a K + 8 view (2016-byte rows): 24%, the
# share of a fifth sector in each 128-byte TMA row (5 sectors where 4 would do). A k-tile
# of two swizzle rows (BK 128 for f16: 256 bytes a row, 9 sectors for 8) halves that
# overhead; the plan only takes BK 128 on 64-row decode tiles.
# Written before: at 1000^3 128x128 with BK 128 (3 stages, the same 384 k in flight) ~10%
# under the 128x128x64 winner (11.9 -> ~10.8 us) if sector throughput is what limits, a
# tie if not. At 4096x4096x128 a BK 128 tile holds all of K in one stage: 128x128x128 in
# ping-pong against the winners (none 15.6, bias_relu 17.4): a few % either way.
B=.dev/s1old
source bench/lib.sh t2
PP=',"pingpong":true'
C=()
for c in "$(cfg 64 128 128 6 2 false)" "$(cfg 128 128 128 3 2 false)" "$(cfg 128 128 128 3 2 false 1 $PP)" \
  "$(cfg 128 128 64 4 2 false)" "$(cfg 128 64 128 4 1 true)" "$(cfg 128 128 256 2 2 false)" "$(cfg 128 64 128 4 2 false 1 $PP)"; do
  C+=(--config "$c")
done
D=()
for c in "$(cfg 64 128 128 6 2 false 1 $PP)" "$(cfg 128 64 128 4 3 false 1 $PP)" "$(cfg 128 128 128 3 2 false 1 $PP)" \
  "$(cfg 128 128 128 2 2 false 1 $PP)" "$(cfg 128 128 128 3 2 false)" "$(cfg 128 128 256 2 2 false)"; do
  D+=(--config "$c")
done
for round in 1 2; do
  for e in none bias_relu; do
    timeout 90 $B/crossgemm tune --shape 1000x1000x1000 --dtype f16 --epilogue $e --json --cache-dir /tmp/cg-t2-$round "${C[@]}" > $R/tune-1000-$e-$round.json 2> $R/tune-1000-$e-$round.err
    python3 bench/tune_summary.py "1000^3 $e $round" $R/tune-1000-$e-$round.json
    timeout 90 $B/crossgemm tune --shape 4096x4096x128 --dtype f16 --epilogue $e --json --cache-dir /tmp/cg-t2-$round "${D[@]}" > $R/tune-k128-$e-$round.json 2> $R/tune-k128-$e-$round.err
    python3 bench/tune_summary.py "4096x4096x128 $e $round" $R/tune-k128-$e-$round.json
  done
done
finish
