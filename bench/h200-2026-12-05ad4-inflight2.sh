#!/usr/bin/env bash
# Session ad, batch ad4 (.dev/ad3s, the CLI at 6b3a089): the cooperative two-consumer
# tiles with one wgmma group kept in flight (CG_INFLIGHT 1), which no tune has timed (no
# record in bench/results holds a two-consumer cooperative config with inflight 1).
# Why: Nsight Compute (ab2) has our 128x256 tile 1.6% behind cuBLASLt at 2048x12288x4096
# with its tensor pipe 93.5-94.0% active against 94.3-95.5%; its SASS waits for every
# k-step's wgmma group (`WARPGROUP.DEPBAR.LE gsb0, 0x0`) before the next is issued, so
# each consumer's tensor work stops at every k-step while the other's runs. In flight,
# a consumer issues k-step t+1 while t finishes, holding two stages of the ring (the
# producer keeps two of four ahead instead of three).
# Written before: 128x256 s4 inflight 1 within +-1% of inflight 0 at 4096^3 and
# 2048x12288x4096 (the producer's lead shrinks by the stage the consumers gain), or up
# to 1-2% faster; 256x128 likewise. Every config is checked against the reference in
# its tune.
B=.dev/ad3s
source bench/lib.sh ad4
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
# cfg BK BM BN STAGES CONSUMERS INFLIGHT
C=("$(cfg 64 128 256 4 2 false)" "$(cfg 64 128 256 4 2 true)" "$(cfg 64 256 128 4 2 false)" "$(cfg 64 256 128 4 2 true)")
A=(); for c in "${C[@]}"; do A+=(--config "$c"); done
for round in 1 2; do for s in 4096x4096x4096 2048x12288x4096; do for epi in none bias_relu; do
  timeout 100 $B/crossgemm tune --shape $s --dtype f16 --epilogue $epi --json --cache-dir /tmp/cg-ad4-$round "${A[@]}" > $R/tune-$s-$epi-$round.json 2> $R/tune-$s-$epi-$round.err
  python3 bench/tune_summary.py "$s $epi round $round" $R/tune-$s-$epi-$round.json
done; done; done
finish
