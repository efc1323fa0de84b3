#!/usr/bin/env bash
# Session t, batch t1 (.dev/s1old: the CLI at the head without batch s8's patch).
# At M = 128 the LLM rows stay at 0.99x cuBLAS (128x12288x4096: 38.2 us, 67-69% of the
# copy bandwidth, where M = 1 reaches 77%), and batch s6's tune (records-issue10.json)
# shows every tile of 96-128 blocks within 38.2-40 us, more tiles slower (64x64: 45.7)
# and split-K far slower (48-87). 128-row tiles make every block read all of A (1 MB:
# 96 MB through L2 for 96 blocks, as much as B's 100 MB); 64-row tiles read B twice.
# The tune's 48 took no 2-block cluster (ranked after), which would share each B tile
# between the two 64-row halves by TMA multicast: B through L2 once, A halved.
# Written before: 64x192/64x128/64x256 in 2-block clusters ~8-10% under the 64x192
# winner at 128x12288x4096 (38 -> ~35 us) if L2-to-SM bytes are what limits, a tie if
# DRAM's access pattern is; also 128x96 (128 blocks: one per SM but 4) and 128x128 with
# 256-byte rows a stage (BK 128, 3 stages: longer DRAM runs per column).
B=.dev/s1old
source bench/lib.sh t1
PP=',"pingpong":true'
C=()
for c in "$(cfg 64 64 192 6 1 true)" "$(cfg 64 128 128 6 2 false)" "$(cfg 64 64 192 6 1 true 2)" "$(cfg 64 64 128 8 1 true 2)" \
  "$(cfg 64 64 256 5 1 true 2)" "$(cfg 64 64 192 6 2 false 2 $PP)" "$(cfg 64 128 96 6 2 false)" "$(cfg 128 128 128 3 2 false)"; do
  C+=(--config "$c")
done
D=()
for c in "$(cfg 64 64 128 8 1 true)" "$(cfg 64 64 128 8 1 true 2)" "$(cfg 64 64 192 6 1 true 2)" "$(cfg 64 64 128 8 2 false 2 $PP)"; do
  D+=(--config "$c")
done
for round in 1 2; do
  timeout 90 $B/crossgemm tune --shape 128x12288x4096 --dtype f16 --epilogue none --json --cache-dir /tmp/cg-t1-$round "${C[@]}" > $R/tune-12288-$round.json 2> $R/tune-12288-$round.err
  python3 bench/tune_summary.py "128x12288x4096 none $round" $R/tune-12288-$round.json
  timeout 90 $B/crossgemm tune --shape 128x8192x8192 --dtype f16 --epilogue none --json --cache-dir /tmp/cg-t1-$round "${D[@]}" > $R/tune-8192-$round.json 2> $R/tune-8192-$round.err
  python3 bench/tune_summary.py "128x8192x8192 none $round" $R/tune-8192-$round.json
done
finish
