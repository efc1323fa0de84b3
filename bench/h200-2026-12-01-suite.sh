#!/usr/bin/env bash
# H200, 2026-12-01 (results in bench/results/h200-2026-12-01/): the test suite through CUDA, the quickstart, compute-sanitizer on tunes that run
# wgmma configs through the runtime. Everything into $OUT/log.txt.
set -u
B=.dev/bin
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_CACHE_DIR=/tmp/cg-cache
log=$OUT/log.txt
run() { local t=$1; shift; echo "=== [$(date +%T)] $*" >> $log; timeout $t "$@" >> $log 2>&1; echo "=== rc=$?" >> $log; }
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv >> $log 2>&1
run 60 $B/quickstart
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
run 200 env CROSSGEMM_TEST_DEVICES=cuda:0 $B/kernels --test-threads 16
run 60 env CROSSGEMM_TEST_DEVICES=cuda:0 $B/epilogue_values --test-threads 16
run 60 $B/runtime_tests cuda --test-threads 4
export CROSSGEMM_TUNE_MAX=6
run 90 compute-sanitizer --tool memcheck --print-limit 20 $B/crossgemm tune --shape 200x264x328 --dtype f16 --epilogue bias_relu --json --cache-dir /tmp/cg-san1
export CROSSGEMM_TUNE_MAX=3
run 90 compute-sanitizer --tool racecheck --print-limit 20 $B/crossgemm tune --shape 136x264x200 --dtype bf16 --epilogue none --json --cache-dir /tmp/cg-san2
run 90 compute-sanitizer --tool synccheck --print-limit 20 $B/crossgemm tune --shape 136x264x200 --dtype bf16 --epilogue none --json --cache-dir /tmp/cg-san3
grep -E "test result|ERROR SUMMARY|RACECHECK SUMMARY|=== rc|panicked|FAILED" $log | tail -40
