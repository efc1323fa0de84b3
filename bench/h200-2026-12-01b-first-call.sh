#!/usr/bin/env bash
# H200, 2026-12-01 afternoon, call 3 of 3 (issue 12): first calls with the shipped
# records and an empty cache. The binary embeds records/h200.json regenerated from calls
# 1 and 2. Three fresh processes (one case each: the first call pays CUDA's and NVRTC's
# start too), then the f16/bf16 table in one process with `bench --first-call`, compared
# with call 1's full-tune report (--against). Then a look at the GPU machine's PoCL,
# where call 2 saw the runtime's OpenCL unit test get zeros for f32.
set -u
B=.dev/s2
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(cat $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1
mkdir -p $OUT/f
for s in 4096x4096x4096 16x4096x4096 3000x5000x700; do
  CROSSGEMM_CACHE_DIR=/tmp/cg-fresh-$s timeout 60 $B/crossgemm bench --first-call --shape $s --dtypes f16 --epilogues bias_relu --no-vendor --out $OUT/f --name fresh-$s > $OUT/f/fresh-$s.log 2>&1
  echo "fresh $s rc=$?"; grep -A3 "first call ms" $OUT/f/fresh-$s.md | tail -1
done
CROSSGEMM_CACHE_DIR=/tmp/cg-first timeout 300 $B/crossgemm bench --first-call --dtypes f16,bf16 --out $OUT/f --name first-call --against $B/full-f16-bf16.json > $OUT/f/bench.log 2>&1; echo "first-call bench rc=$?"
tail -2 $OUT/f/bench.log; grep "first calls:" $OUT/f/first-call.md; grep -A4 "^| dtype | rows | geometric mean" $OUT/f/first-call.md
$B/crossgemm devices > $OUT/f/devices.txt 2>&1
CROSSGEMM_TEST_DEVICES=opencl:0:0 timeout 100 $B/kernels f32 --test-threads 16 > $OUT/f/pocl-kernels-f32.log 2>&1; echo "pocl kernels f32 rc=$?"
timeout 60 $B/table > $OUT/f/pocl-table.log 2>&1; echo "pocl table rc=$?"
grep -hE "test result|panicked" $OUT/f/pocl-kernels-f32.log $OUT/f/pocl-table.log | head -8; grep -i "opencl" $OUT/f/devices.txt
