#!/usr/bin/env bash
# H200, 2026-12-01 afternoon, call 4 (issue 12): where a first call's time goes. Fresh
# processes, empty caches, CROSSGEMM_LOG=1 (each NVRTC compile with its ms); then the GPU
# machine's PoCL (call 2: the runtime's OpenCL unit test got zeros for f32 there).
set -u
B=.dev/s2
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(cat $B/COMMIT)
mkdir -p $OUT/g /tmp/fc
for s in 4096x4096x4096 16x12288x4096 1x12288x4096 1024x1024x1024; do
  CROSSGEMM_LOG=1 CROSSGEMM_CACHE_DIR=/tmp/cg-log-$s timeout 60 $B/crossgemm bench --first-call --shape $s --dtypes f16 --epilogues bias_gelu --no-vendor --runs 10 --out /tmp/fc --name fresh-$s > $OUT/g/fresh-$s.log 2>&1
  echo "fresh $s rc=$?"; grep -E "nvrtc|first call|verif|check" $OUT/g/fresh-$s.log | cut -c1-240
done
$B/crossgemm devices --json > $OUT/g/devices.json 2>&1
CROSSGEMM_TEST_DEVICES=opencl:0:0 timeout 100 $B/kernels f32 --test-threads 16 > $OUT/g/pocl-kernels-f32.log 2>&1; echo "pocl kernels f32 rc=$?"
grep -hE "test result|panicked" -A3 $OUT/g/pocl-kernels-f32.log | head -12
