#!/usr/bin/env bash
# The CUDA suite at the head after the batched/rank-3 TMA changes (binaries of
# `scripts/dev-build.sh .dev/batched`, run 2026-12-01 session e at 80f5628):
# tests/kernels.rs, tests/views.rs and tests/interop_cuda.rs through CUDA.
# Logs land in $OUT/suite/ (copied to bench/results/h200-2026-12-01g/suite/).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
B=.dev/batched
mkdir -p $OUT/suite
cp $B/COMMIT $OUT/suite/commit.txt
CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_CACHE_DIR=/tmp/cg-h CROSSGEMM_TEST_DEVICES=cuda:0 timeout 280 $B/kernels --test-threads 16 > $OUT/suite/kernels.log 2>&1; echo "kernels rc=$?"
CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_CACHE_DIR=/tmp/cg-h CROSSGEMM_TEST_DEVICES=cuda:0 timeout 150 $B/views --test-threads 16 > $OUT/suite/views.log 2>&1; echo "views rc=$?"
CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_CACHE_DIR=/tmp/cg-h timeout 100 $B/interop_cuda > $OUT/suite/interop.log 2>&1; echo "interop rc=$?"
grep -h "test result" $OUT/suite/*.log
