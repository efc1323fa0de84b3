#!/usr/bin/env bash
# H200, 2026-12-01 afternoon, call 2 of 3: the full-tune benchmark of f32 and tf32 over
# the shape table (each tune bounded to 4 s), its cache exported as records, then the
# epilogue-value tests and the runtime's unit tests through CUDA.
set -u
B=.dev/s2
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_CACHE_DIR=/tmp/cg-rec2 CROSSGEMM_COMMIT=$(cat $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1
mkdir -p $OUT/r
CROSSGEMM_TUNE_BUDGET_MS=4000 timeout 250 $B/crossgemm bench --dtypes f32,tf32 --out $OUT/r --name full-f32-tf32 > $OUT/r/bench32.log 2>&1; echo "bench rc=$?"
$B/crossgemm cache export $OUT/r/records-f32-tf32.json 2>&1 | tail -1
CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_REQUIRE_NVRTC=1 timeout 110 $B/epilogue_values --test-threads 16 > $OUT/r/epilogue_values.log 2>&1; echo "epilogue_values rc=$?"
CROSSGEMM_REQUIRE_NVRTC=1 timeout 60 $B/runtime_tests --test-threads 4 > $OUT/r/runtime_tests.log 2>&1; echo "runtime_tests rc=$?"
# Call 1's one failure (no odd shape for M-/N-major cluster-2 configs), with the shape added.
CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_REQUIRE_NVRTC=1 timeout 120 $B/kernels every_planned_config_f16 --test-threads 16 > $OUT/r/kernels-f16.log 2>&1; echo "kernels f16 rc=$?"
grep -hE "test result|panicked|FAILED" $OUT/r/epilogue_values.log $OUT/r/runtime_tests.log $OUT/r/kernels-f16.log | head -12; tail -3 $OUT/r/bench32.log
grep -A3 "^| dtype | rows | geometric" $OUT/r/full-f32-tf32.md | head -5
