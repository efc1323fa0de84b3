#!/usr/bin/env bash
# Session u, batch u2 (.dev/u2: tests/kernels.rs built at b6ab0ad).
# 1. The new cluster test (tests/kernels.rs `cluster_blocks_share_their_tiles`: 2-block
#    clusters along M and N and 2x2, K- and MN-major, tf32, ragged, looping grids) through
#    CUDA, and under compute-sanitizer memcheck and racecheck. Written before: passes,
#    0 errors, 0 hazards (the cluster kernels passed the planned-config suites before).
# 2. bench/tma_pitch.py ceiling: what TMA moves from L2 at most (box height x ring depth),
#    aligned against odd-16 pitch, and from 64 blocks. Written before: u1's 7.5 TB/s
#    (128-row boxes, 8 stages) was still rising with the bytes in flight, so deeper rings
#    or taller boxes reach ~10 TB/s aligned; if the odd pitch stays 30-40% under at every
#    depth, its cost is throughput (work per box row in L2/TMA), not latency.
B=.dev/u2
source bench/lib.sh u2
export CROSSGEMM_TEST_DEVICES=cuda:0
CROSSGEMM_CACHE_DIR=/tmp/cg-u2 timeout 120 $B/kernels cluster_blocks --test-threads 4 > $R/kernels-cluster.log 2>&1; echo "kernels cluster rc=$?"
grep -hE "test result|panicked" $R/kernels-cluster.log | head -5
for tool in memcheck racecheck; do
  CROSSGEMM_CACHE_DIR=/tmp/cg-u2 timeout 200 compute-sanitizer --tool $tool --print-limit 20 $B/kernels cluster_blocks --test-threads 1 > $R/san-$tool.log 2>&1
  echo "$tool rc=$? $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY|test result' $R/san-$tool.log | tr '\n' ' ')"
done
python3 bench/tma_pitch.py ceiling > $R/ceiling.txt 2>&1; echo "ceiling rc=$?"
cat $R/ceiling.txt
finish
