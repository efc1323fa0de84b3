#!/usr/bin/env bash
# For the next H200 session's first device call (written 2026-12-01 evening, not run yet).
# Build here first: `scripts/dev-build.sh` (into .dev/next), then carry .dev/next.
# 1. issue 14: the CUDA suite at the new head (kernels, epilogue values, the runtime's
#    CUDA unit tests, the CUDA interop test and example), every switch required.
# 2. compute-sanitizer on tunes whose candidates are tf32 wgmma configs.
# (bench/h200-next-first-calls.sh is the second call: first calls after prepare and in
# fresh processes.)
# Everything lands in one archive, $OUT/n.tgz.
set -u
B=.dev/next
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(head -1 $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
mkdir -p $OUT/n
cp $B/COMMIT $OUT/n/commit.txt
CROSSGEMM_CACHE_DIR=/tmp/cg-suite CROSSGEMM_TEST_DEVICES=cuda:0 timeout 230 $B/kernels --test-threads 16 > $OUT/n/kernels.log 2>&1; echo "kernels rc=$?"
CROSSGEMM_CACHE_DIR=/tmp/cg-suite CROSSGEMM_TEST_DEVICES=cuda:0 timeout 100 $B/epilogue_values --test-threads 16 > $OUT/n/epilogue_values.log 2>&1; echo "epilogue_values rc=$?"
CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 30 $B/runtime_tests cuda --test-threads 4 > $OUT/n/runtime_tests_cuda.log 2>&1; echo "runtime cuda rc=$?"
CROSSGEMM_CACHE_DIR=/tmp/cg-int timeout 60 $B/interop_cuda --test-threads 1 > $OUT/n/interop_cuda.log 2>&1; echo "interop rc=$?"
CROSSGEMM_CACHE_DIR=/tmp/cg-int timeout 30 $B/interop_cuda_example >> $OUT/n/interop_cuda.log 2>&1; echo "interop example rc=$? $(tail -1 $OUT/n/interop_cuda.log)"
grep -hE "test result|panicked" $OUT/n/*.log | head -12
# 2. compute-sanitizer on tf32 wgmma kernels (the evening's sanitizer tunes timed mma.sync
#    tiles only): at these shapes the first candidates are wgmma tiles (one and two
#    consumers, a 2-block cluster).
san() { # tool shape max
  timeout 90 compute-sanitizer --tool $1 --print-limit 20 $B/crossgemm tune --shape $2 --dtype tf32 --epilogue bias_gelu --max $3 --json --cache-dir /tmp/cg-san-$1-$2 > $OUT/n/san-$1-$2.log 2>&1
  echo "$1 $2 rc=$? $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/n/san-$1-$2.log | tr '\n' ' ') $(grep -o '"best":"[^"]*"' $OUT/n/san-$1-$2.log)"
}
san memcheck 1024x1024x512 3
san racecheck 1024x1024x512 2
san synccheck 2048x2048x1024 3
cd $OUT && tar czf n.tgz n && rm -rf n
