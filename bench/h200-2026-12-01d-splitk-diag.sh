#!/usr/bin/env bash
# H200, 2026-12-01 (session d), call 4 (issues 10 and 14), binaries of .dev/sk:
# 1. why the decode-size shapes stay at cuBLAS's speed with split-K: every candidate's
#    time (`tune --json`, the whole plan) and `diagnose` (load-only / compute-only
#    variants, neighbours) at 16x4096x4096 and 128x4096x11008, f16, no epilogue;
# 2. the whole tests/kernels.rs suite with the split-K configs planned.
set -u
B=.dev/sk
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(head -1 $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
mkdir -p $OUT/d
cp $B/COMMIT $OUT/d/commit.txt
for s in 16x4096x4096 128x4096x11008; do
  CROSSGEMM_CACHE_DIR=/tmp/cg-d-$s timeout 60 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --max 64 --json > $OUT/d/tune-$s.json 2> $OUT/d/tune-$s.log; echo "tune $s rc=$?"
  CROSSGEMM_CACHE_DIR=/tmp/cg-d-$s timeout 60 $B/crossgemm diagnose --shape $s --dtype f16 --epilogue none > $OUT/d/diagnose-$s.txt 2>&1; echo "diagnose $s rc=$?"
  grep -iE "verdict|load-only|compute-only|no-epilogue|roof" $OUT/d/diagnose-$s.txt | head -8
done
CROSSGEMM_CACHE_DIR=/tmp/cg-suite CROSSGEMM_TEST_DEVICES=cuda:0 timeout 330 $B/kernels --test-threads 16 > $OUT/d/kernels.log 2>&1; echo "kernels rc=$?"
grep -hE "test result|panicked" $OUT/d/kernels.log | head -8
cd $OUT && tar czf d.tgz d && rm -rf d
