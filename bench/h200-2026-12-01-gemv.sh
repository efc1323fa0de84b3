#!/usr/bin/env bash
# H200: the gemv family through the runtime: the CUDA suite (every planned config, gemv
# included), memcheck on a tune whose first candidates are gemv configs, and crossgemm
# bench on decode-size shapes beside cuBLAS / cuBLASLt.
set -u
B=.dev/gemv
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_CACHE_DIR=/tmp/cg-gemv CROSSGEMM_REQUIRE_CUDA=1
log=$OUT/gemv.log
run() { local t=$1; shift; echo "=== [$(date +%T)] $*" >> $log; timeout $t "$@" >> $log 2>&1; echo "=== rc=$?" >> $log; }
run 150 env CROSSGEMM_TEST_DEVICES=cuda:0 $B/kernels every_planned --test-threads 16
run 60 env CROSSGEMM_TUNE_MAX=8 compute-sanitizer --tool memcheck --print-limit 20 $B/crossgemm tune --shape 5x1000x1000 --dtype f16 --epilogue bias_relu --json --cache-dir /tmp/cg-san-gemv
mkdir -p $OUT/b
run 150 $B/crossgemm bench --dtypes f16 --epilogues none,bias_relu --out $OUT/b --name gemv --max 48 \
  --shape 1x12288x4096 --shape 1x4096x11008 --shape 4x12288x4096 --shape 8x4096x4096 --shape 8x12288x4096 --shape 1x4096x4096 --shape 16x4096x4096
grep -E "=== rc|test result|ERROR SUMMARY|panicked" $log; grep -E "^\| [0-9]" $OUT/b/gemv.md | cut -d'|' -f2-4,5-7,9-10,17 | head -30
