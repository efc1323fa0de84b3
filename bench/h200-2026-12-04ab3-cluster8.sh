#!/usr/bin/env bash
# Session ab, batch ab3: clusters of 8 (and of 4 along N) for the wgmma family.
# Written in session ab, which was lent no device: not run yet. Binaries: the head with
# `bench/h200-2026-12-04ab3-cluster8.patch` applied (`git apply` it, then
# `scripts/dev-build.sh .dev/ab3`; say in the README which head). The patch lets
# CLUSTER_M and CLUSTER_N be 1, 2 or 4 with at most 8 blocks (the kernel's multicast masks,
# barrier counts and cluster walk are written for any cluster shape: only a static_assert
# and the family's rule said 1 or 2), plans nothing new (they run by --config), and adds
# 4x1, 1x4, 4x2 and 2x4 clusters to tests/kernels.rs's cluster test (which
# CROSSGEMM_TEST_CONFIGS then narrows). NVRTC here compiles
# each of them without spills (168 registers a consumer for 128x128 two-consumer tiles,
# 160 for 64x192 one-consumer).
# Why: at 1000^3 (0.81-0.85x cuBLAS) what binds is the operands' traffic from L2 on rows
# an odd multiple of 16 bytes apart (batches 02zd, 03u1: TMA loses 40-46% of its L2 rate
# on them, and time grows with the box rows a tile asks), and cuBLAS runs 72x128 tiles in
# clusters of 8 (2x4, 14 clusters, one wave; batch 02q). Box rows a CTA asks of the L2 per
# k-step: 128x128 alone 256, in 2x2 128, in 2x4 or 4x2 96; 64x192 alone 256, in 4x2 80
# (12 clusters of 8 at 1000^3: 96 CTAs).
# Written before: correct (the cluster test with the new shapes, memcheck and racecheck
# clean). At 1000^3 a cluster-of-8 config at or below 11.0 us where the winner (128x128
# s6, two consumers, alone) takes 11.9-12.1 in the same tune; at 3000x5000x700 and
# 2048x11008x4096 no better than 2x2 (aligned or long-K rows do not bind on L2 requests).
# Also the driver's count of resident clusters of 8 where it lowers a grid (the runtime's
# log line under CROSSGEMM_LOG), expected 14 to 16.
B=.dev/ab3
source bench/lib.sh ab3
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
# The tunes first (each candidate is checked against the reference as it is timed), then
# the cluster test and the sanitizers: what a call cut at its limit keeps is the timing.
# cfg BK BM BN STAGES CONSUMERS INFLIGHT CLUSTER_M [EXTRA]
n2=',"cluster_n":2'; n4=',"cluster_n":4'
tune() {  # tune SHAPE LABEL CONFIG...: every config timed, twice (two processes)
  local s=$1 label=$2; shift 2
  local C=(); for c in "$@"; do C+=(--config "$c"); done
  for round in 1 2; do
    CROSSGEMM_LOG=1 timeout 80 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --json --cache-dir /tmp/cg-ab3-$label-$round "${C[@]}" > $R/tune-$s-$label-$round.json 2> $R/tune-$s-$label-$round.err
    python3 bench/tune_summary.py "$s $label round $round" $R/tune-$s-$label-$round.json
    grep -h "clusters of" $R/tune-$s-$label-$round.err | sort -u | head -4
  done
}
tune 1000x1000x1000 c8 "$(cfg 64 128 128 6 2 false)" "$(cfg 64 128 128 4 2 false 2 "$n2")" \
  "$(cfg 64 128 128 4 2 false 2 "$n4")" "$(cfg 64 128 128 4 2 false 4 "$n2")" \
  "$(cfg 64 64 192 6 1 true)" "$(cfg 64 64 192 6 1 true 4 "$n2")" "$(cfg 64 64 176 6 1 true 4 "$n2")" \
  "$(cfg 64 64 256 4 1 true 4 "$n2")" "$(cfg 64 64 128 6 1 true 4)"
tune 3000x5000x700 c8 "$(cfg 64 128 192 5 2 false)" "$(cfg 64 128 192 4 2 false 2 "$n2")" \
  "$(cfg 64 128 192 4 2 false 2 "$n4")" "$(cfg 64 128 192 4 2 false 4 "$n2")"
tune 2048x11008x4096 c8 "$(cfg 64 128 256 4 2 false)" "$(cfg 64 128 256 4 2 false 2 "$n2")" \
  "$(cfg 64 128 256 4 2 false 2 "$n4")" "$(cfg 64 128 256 4 2 false 4 "$n2")"
timeout 200 $B/kernels --test-threads 2 cluster_blocks_share_their_tiles > $R/kernels-clusters.log 2>&1; echo "kernels rc=$?"; grep -E "test result|panicked" $R/kernels-clusters.log | head -5
CS=/usr/local/cuda/bin/compute-sanitizer
# The sanitizers on the clusters of 8 only (the patch lets CROSSGEMM_TEST_CONFIGS narrow
# the cluster test's list): one config of each, 4 kernels, 3 shapes.
for tool in memcheck racecheck; do
  for c in "cluster 4x2" "cluster 2x4"; do
    CROSSGEMM_TEST_CONFIGS="$c" timeout 100 $CS --tool $tool $B/kernels --test-threads 1 cluster_blocks_share_their_tiles > "$R/$tool-${c// /-}.log" 2>&1; echo "$tool $c rc=$?"; grep -E "SUMMARY|test result" "$R/$tool-${c// /-}.log" | head -3
  done
done
finish
