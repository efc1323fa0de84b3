#!/usr/bin/env bash
# Issue 13, batched GEMM on the H200 (binaries of `scripts/dev-build.sh .dev/batched`).
# Run 2026-12-01 (session e) at 80f5628 → bench/results/h200-2026-12-01g/part1, part2 (a grid per
# product), and at fd13ff7 → .../flat/part1, flat/part2 (one persistent grid over every product;
# flat/suite/ holds tests/kernels.rs through CUDA at fd13ff7, run after part1 in the same call
# with the kernels line of h200-2026-12-01g-suite.sh).
# Part 1 (`part1`): tests/batched.rs through CUDA (every planned config on a batch: the
#   wgmma configs through the cp.async producer, B broadcast and batched) and
#   compute-sanitizer memcheck on its two launch tests.
# Part 2 (`part2`): the issue's batched bench rows beside cublasGemmStridedBatchedEx in
#   the same process (full tune each, f16, none and bias_relu):
#   32x(512x512x128), 64x(128x4096x128), 8x(2048x2048x2048).
# Everything lands in $OUT/batched.tgz.
set -u
B=.dev/batched
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(head -1 $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
mkdir -p $OUT/batched
cp $B/COMMIT $OUT/batched/commit.txt
case "${1:-part1}" in
part1)
  CROSSGEMM_CACHE_DIR=/tmp/cg-b CROSSGEMM_TEST_DEVICES=cuda:0 timeout 200 $B/batched --test-threads 16 > $OUT/batched/batched.log 2>&1; echo "batched rc=$?"
  grep -hE "test result|panicked" -A3 $OUT/batched/batched.log | head -8
  SAN=/usr/local/cuda/bin/compute-sanitizer
  CROSSGEMM_CACHE_DIR=/tmp/cg-bsan CROSSGEMM_TEST_DEVICES=cuda:0 timeout 200 $SAN --tool memcheck $B/batched --test-threads 1 every_config_on_a_batch epilogue_operands_per_product > $OUT/batched/san-memcheck.log 2>&1; echo "memcheck rc=$?"
  grep -E "ERROR SUMMARY|test result" $OUT/batched/san-memcheck.log
  ;;
part2)
  C="--dtypes f16 --epilogues none,bias_relu --out $OUT/batched"
  CROSSGEMM_CACHE_DIR=/tmp/cg-b32 timeout 150 $B/crossgemm bench --shape 512x512x128 --batch 32 $C --name b32 > $OUT/batched/b32.log 2>&1; echo "b32 rc=$?"
  CROSSGEMM_CACHE_DIR=/tmp/cg-b64 timeout 150 $B/crossgemm bench --shape 128x4096x128 --batch 64 $C --name b64 > $OUT/batched/b64.log 2>&1; echo "b64 rc=$?"
  CROSSGEMM_CACHE_DIR=/tmp/cg-b8 timeout 200 $B/crossgemm bench --shape 2048x2048x2048 --batch 8 $C --name b8 > $OUT/batched/b8.log 2>&1; echo "b8 rc=$?"
  for b in b32 b64 b8; do grep -E "^\| [0-9]+x\(" $OUT/batched/$b.md | head -4; done
  ;;
esac
cd $OUT && tar czf batched.tgz batched && rm -rf batched
