#!/usr/bin/env bash
# H200, 2026-12-01 evening, call 2 (issues 14 and 9): call 1 again after its fix (the tf32 placeholder map); call 1 was: the CUDA test suite at the head of
# main, now with tf32 on the wgmma family (0eacf90): tests/kernels.rs (every planned
# config of every family, tf32 wgmma included, on aligned and odd shapes), the epilogue
# values, the runtime's CUDA unit tests; (compute-sanitizer ran in call 1: 0 errors, 0 hazards; this
# fix changes the host side only). Binaries in .dev/t2 (built at .dev/t2/COMMIT:
# `cargo build --release --features baseline --bin crossgemm`, `cargo test --release
# --features baseline --no-run --test kernels --test epilogue_values`, `cargo test
# --release -p gemm-runtime --features cuda,opencl --lib --no-run`).
set -u
B=.dev/t2
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_CACHE_DIR=/tmp/cg-suite
mkdir -p $OUT/s
echo "commit $(cat $B/COMMIT)" > $OUT/s/commit.txt
CROSSGEMM_TEST_DEVICES=cuda:0 timeout 220 $B/kernels --test-threads 16 > $OUT/s/kernels.log 2>&1; echo "kernels rc=$?"
timeout 20 $B/runtime_tests cuda --test-threads 4 > $OUT/s/runtime_tests_cuda.log 2>&1; echo "runtime cuda rc=$?"
CROSSGEMM_TEST_DEVICES=cuda:0 timeout 150 $B/epilogue_values --test-threads 16 > $OUT/s/epilogue_values.log 2>&1; echo "epilogue_values rc=$?"
grep -hE "test result|panicked|FAILED" $OUT/s/*.log | head -12
