#!/usr/bin/env bash
# H200, 2026-12-01 evening, call 1 (issues 14 and 9): the CUDA test suite at the head of
# main, now with tf32 on the wgmma family (0eacf90): tests/kernels.rs (every planned
# config of every family, tf32 wgmma included, on aligned and odd shapes), the epilogue
# values, the runtime's CUDA unit tests; then compute-sanitizer (memcheck, racecheck,
# synccheck) on tunes whose first candidates are tf32 wgmma configs (TMA, and the
# cp.async producer with K = 131). Binaries in .dev/t1 (built at .dev/t1/COMMIT:
# `cargo build --release --features baseline --bin crossgemm`, `cargo test --release
# --features baseline --no-run --test kernels --test epilogue_values`, `cargo test
# --release -p gemm-runtime --features cuda,opencl --lib --no-run`).
set -u
B=.dev/t1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_CACHE_DIR=/tmp/cg-suite
mkdir -p $OUT/s
echo "commit $(cat $B/COMMIT)" > $OUT/s/commit.txt
CROSSGEMM_TEST_DEVICES=cuda:0 timeout 150 $B/kernels --test-threads 16 > $OUT/s/kernels.log 2>&1; echo "kernels rc=$?"
timeout 20 $B/runtime_tests cuda --test-threads 4 > $OUT/s/runtime_tests_cuda.log 2>&1; echo "runtime cuda rc=$?"
CROSSGEMM_TEST_DEVICES=cuda:0 timeout 60 $B/epilogue_values --test-threads 16 > $OUT/s/epilogue_values.log 2>&1; echo "epilogue_values rc=$?"
grep -hE "test result|panicked|FAILED" $OUT/s/*.log | head -12
san() { # tool shape cache
  timeout 70 compute-sanitizer --tool $1 --print-limit 20 $B/crossgemm tune --shape $2 --dtype tf32 --epilogue bias_gelu --max 3 --json --cache-dir /tmp/cg-san-$3 > $OUT/s/san-$1-$2.log 2>&1
  echo "$1 $2 rc=$? $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/s/san-$1-$2.log | tr '\n' ' ') $(grep -o '"config": *"[^"]*"' $OUT/s/san-$1-$2.log | head -3 | tr '\n' ' ')"
}
san memcheck 384x520x512 a
san memcheck 200x264x131 b
san racecheck 256x264x200 c
san synccheck 256x264x200 d
