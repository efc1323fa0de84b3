#!/usr/bin/env bash
# Session ac, batch ac2: wgmma clusters of 8 (and of 4 a side), and the stage release of
# clustered configs arriving only where a producer writes. Replaces session ab's ab3 (its
# clusters of 8, with the same configs) and adds the release to it.
# Written in session ac, which was lent no device: not run yet. Binaries (git-ignored),
# both built at main 9075870 with `bench/h200-2026-12-05ac2-cluster-release.patch`
# applied in a git worktree (`cargo build --release --features baseline --bin crossgemm`;
# for ac2b also `cargo test --release --features baseline --no-run --test kernels`,
# stripped and gzipped as scripts/dev-build.sh does):
# - .dev/ac2a, the CLI with the patch but its wgmma/ptx.rs `cg_release` and wgmma/emit.rs
#   `CG_EMPTY_COUNT` hunks (ab3's patch: CLUSTER_M and CLUSTER_N 1, 2 or 4, at most 8
#   blocks; the release as shipped, every consumer warp arriving on the `empty` barrier of
#   every block of its cluster);
# - .dev/ac2b, the CLI and tests/kernels.rs with the whole patch, whose release is
#   targeted: a consumer warp arrives on its own block's barrier, the first block of its
#   cluster row's (which multicasts A into it) and the first of its column's (B); each
#   barrier counts what it gets (CG_EMPTY_COUNT; the counts and targets were checked
#   against the producers' multicast masks for every cluster shape up to 8, on the host).
# Why: at 1000^3 (0.81-0.85x cuBLAS) what binds is L2 traffic on rows an odd multiple of
# 16 bytes apart (02zd, 03u1), and cuBLAS runs 72x128 tiles in 2x4 clusters; box rows a
# CTA asks of the L2 per k-step: 128x128 alone 256, in 2x2 128, in 2x4 or 4x2 96. With
# the all-to-all release a consumer warp of a cluster of 8 makes 8 arrivals a stage, 7 of
# them remote (2x2: 4, 3 remote); targeted at most 3, 2 remote (2x2: 3 in one block of
# four, 2 in two, 1 in the first).
# Written before: correct (the cluster test with the new shapes, the sanitizers clean on
# the targeted release). At 1000^3 a cluster-of-8 config at or below 11.0 us where the
# winner (128x128 s6, two consumers, alone) takes 11.9-12.1 in the same tune; the targeted
# release 1-3% faster than the all-to-all one on clusters of 8, within the spread on 2x2
# and 2-block clusters; at 3000x5000x700 and 2048x11008x4096 no cluster of 8 better than
# 2x2. Also the driver's count of resident clusters of 8 where it lowers a grid (the
# runtime's log line under CROSSGEMM_LOG), expected 14 to 16.
B=.dev/ac2b
# Two device calls (10 minutes each): PART=1 the release at 1000^3 and 3000x5000x700,
# PART=2 at 2048x11008x4096 and the correctness checks.
PART=${PART:-1}
source bench/lib.sh ac2-part$PART
gunzip -f .dev/ac2a/*.gz  # the CLIs come gzipped to fit the carry
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
T="--test-threads 2"
# 1. The release, all-to-all (ac2a) against targeted (ac2b), process by process over two
# rounds (bench/lib.sh `alternate`), on ab3's configs: every config timed in each tune.
# cfg BK BM BN STAGES CONSUMERS INFLIGHT CLUSTER_M [EXTRA]
n2=',"cluster_n":2'; n4=',"cluster_n":4'
export CROSSGEMM_LOG=1
if [ "$PART" = 1 ]; then
alternate B ".dev/ac2a .dev/ac2b" release 1000x1000x1000 "$(cfg 64 128 128 6 2 false)" \
  "$(cfg 64 128 128 6 2 false 2)" "$(cfg 64 128 128 4 2 false 2 "$n2")" \
  "$(cfg 64 128 128 4 2 false 2 "$n4")" "$(cfg 64 128 128 4 2 false 4 "$n2")" \
  "$(cfg 64 64 192 6 1 true)" "$(cfg 64 64 192 6 1 true 4 "$n2")" "$(cfg 64 64 176 6 1 true 4 "$n2")" \
  "$(cfg 64 64 256 4 1 true 4 "$n2")" "$(cfg 64 64 128 6 1 true 4)"
grep -h "clusters of" $R/tune-1000x1000x1000-*.err | sort | uniq -c | head -6
alternate B ".dev/ac2a .dev/ac2b" release 3000x5000x700 "$(cfg 64 128 192 5 2 false)" \
  "$(cfg 64 128 192 4 2 false 2 "$n2")" "$(cfg 64 128 192 4 2 false 2 "$n4")" "$(cfg 64 128 192 4 2 false 4 "$n2")"
fi
if [ "$PART" = 2 ]; then
alternate B ".dev/ac2a .dev/ac2b" release 2048x11008x4096 "$(cfg 64 128 256 4 2 false)" \
  "$(cfg 64 128 256 4 2 false 2)" "$(cfg 64 128 256 4 2 false 2 "$n2")" \
  "$(cfg 64 128 256 4 2 false 2 "$n4")" "$(cfg 64 128 256 4 2 false 4 "$n2")"
# 2. Correct, on the targeted release: the cluster test (2- and 4-block clusters along M
# and N, 2x2, 4x2 and 2x4, K- and MN-major, tf32, ragged edges, persistent loops), then
# the sanitizers on clusters of 8 and 2x2. After the timing, so that a call cut at its
# limit keeps the measurement (the tunes check every config against the reference too).
timeout 120 $B/kernels $T cluster_blocks_share_their_tiles > $R/kernels-clusters.log 2>&1; echo "clusters rc=$?"; grep -E "test result|panicked" $R/kernels-clusters.log | head -5
CS=/usr/local/cuda/bin/compute-sanitizer
for run in "memcheck cluster 4x2" "racecheck cluster 4x2" "racecheck cluster 2x2" "synccheck cluster 2x4"; do
  set -- $run; tool=$1; c="$2 $3"
  CROSSGEMM_TEST_CONFIGS="$c" timeout 50 $CS --tool $tool $B/kernels --test-threads 1 cluster_blocks_share_their_tiles > "$R/$tool-${c// /-}.log" 2>&1; echo "$tool $c rc=$?"; grep -E "SUMMARY|test result" "$R/$tool-${c// /-}.log" | head -3
done
fi
finish
