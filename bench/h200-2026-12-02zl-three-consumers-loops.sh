#!/usr/bin/env bash
# Session n, batch zl (.dev/n4 with the kernels test rebuilt): batch zk's persistent-loop
# test stopped at its own precondition (192x192 tiles make 289 of 3112x3112, fewer than
# two a block), so the three-consumer tiles never looped over tiles there. The test's
# shape is now 3304x3304x136 (324 such tiles). Expected: passes, memcheck and racecheck
# clean, for the three-consumer configs of its three kernels.
set -u
B=${B:-.dev/n4}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
SAN=/usr/local/cuda/bin/compute-sanitizer
R=$OUT/zl; mkdir -p $R
cp $B/COMMIT $R/commit.txt
export CROSSGEMM_TEST_CONFIGS="consumers 3" CROSSGEMM_TEST_DEVICES=cuda:0
CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 120 $B/kernels --test-threads 4 persistent_grids > $R/kernels.log 2>&1; echo "kernels rc=$?"
grep -E "test result|FAILED|panicked" -A2 $R/kernels.log | head -8
for tool in memcheck racecheck; do
  CROSSGEMM_CACHE_DIR=/tmp/cg-san-$tool timeout 150 $SAN --tool $tool --print-limit 20 $B/kernels --test-threads 1 persistent_grids > $R/san-$tool.log 2>&1; echo "$tool rc=$?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test result" $R/san-$tool.log | head -3
done
cd $OUT && tar czf zl.tgz zl && rm -rf zl
