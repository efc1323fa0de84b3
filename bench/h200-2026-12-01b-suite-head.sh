#!/usr/bin/env bash
# H200 (issue 14): the CUDA test suite at the head of main, for the next session's
# first device call (2026-12-01's device time ran out before it could run: the last
# suite run is h200-2026-12-01b-records{,2}.sh's at 925bfd9/0381489). Binaries in
# .dev/s3, built at the commit in .dev/s3/COMMIT: tests/kernels.rs
# (every planned config of every family on its aligned and odd shapes), the epilogue
# values, the runtime's CUDA unit tests. CROSSGEMM_REQUIRE_CUDA=1: a CUDA that fails to
# load fails instead of skipping.
set -u
B=.dev/s3
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_CACHE_DIR=/tmp/cg-suite
mkdir -p $OUT/s
echo "commit $(cat $B/COMMIT)" > $OUT/s/commit.txt
CROSSGEMM_TEST_DEVICES=cuda:0 timeout 115 $B/kernels --test-threads 16 > $OUT/s/kernels.log 2>&1; echo "kernels rc=$?"
timeout 12 $B/runtime_tests cuda --test-threads 4 > $OUT/s/runtime_tests_cuda.log 2>&1; echo "runtime cuda rc=$?"
CROSSGEMM_TEST_DEVICES=cuda:0 timeout 60 $B/epilogue_values --test-threads 16 > $OUT/s/epilogue_values.log 2>&1; echo "epilogue_values rc=$?"
grep -hE "test result|panicked|FAILED" $OUT/s/*.log | head -12
