#!/usr/bin/env bash
# Issue 13, strided views on the H200 (binaries of `scripts/dev-build.sh .dev/views`).
# Part 1 (`part1`): the kernels suite at the head (the ABI gained the views' geometry),
#   tests/views.rs through CUDA (every planned config, wgmma TMA and cp.async included, on
#   views with 16-byte and odd leading dimensions and offsets), and compute-sanitizer
#   memcheck on the view tests of the default launch path.
# Part 2 (`part2`): the padded-leading-dimension target: ours on packed operands, then on
#   views with K + 8 (16-byte rows kept: TMA) and K + 3 (odd: the cp.async/element path),
#   full tune each in its own cache, f16 none and bias_relu; the padded runs are compared
#   with the packed one through --against.
# Part 3 (`part3`): K + 64 against part 2's packed report (in the repository).
# Everything lands in $OUT/views.tgz.
set -u
B=.dev/views
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(head -1 $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
mkdir -p $OUT/views
cp $B/COMMIT $OUT/views/commit.txt
case "${1:-part1}" in
part1)
  CROSSGEMM_CACHE_DIR=/tmp/cg-suite CROSSGEMM_TEST_DEVICES=cuda:0 timeout 250 $B/kernels --test-threads 16 > $OUT/views/kernels.log 2>&1; echo "kernels rc=$?"
  CROSSGEMM_CACHE_DIR=/tmp/cg-suite CROSSGEMM_TEST_DEVICES=cuda:0 timeout 250 $B/views --test-threads 16 > $OUT/views/views.log 2>&1; echo "views rc=$?"
  grep -hE "test result|panicked" -A3 $OUT/views/kernels.log $OUT/views/views.log | head -12
  SAN=/usr/local/cuda/bin/compute-sanitizer
  CROSSGEMM_CACHE_DIR=/tmp/cg-san CROSSGEMM_TEST_DEVICES=cuda:0 timeout 80 $SAN --tool memcheck $B/views --test-threads 1 epilogue_operands_as_views sub_blocks_compose > $OUT/views/san-memcheck.log 2>&1; echo "memcheck rc=$?"
  grep -E "ERROR SUMMARY|test result" $OUT/views/san-memcheck.log
  ;;
part2)
  S="--shape 4096x4096x4096 --shape 2048x11008x4096 --shape 16x4096x4096 --shape 1000x1000x1000 --shape 4096x4096x128"
  C="--dtypes f16 --epilogues none,bias_relu --no-vendor --out $OUT/views"
  CROSSGEMM_CACHE_DIR=/tmp/cg-p0 timeout 170 $B/crossgemm bench $S $C --name packed > $OUT/views/packed.log 2>&1; echo "packed rc=$?"
  for p in 8 3; do
    CROSSGEMM_CACHE_DIR=/tmp/cg-p$p timeout 170 $B/crossgemm bench $S $C --pad $p --name pad$p --against $OUT/views/packed.json > $OUT/views/pad$p.log 2>&1; echo "pad$p rc=$?"
    grep -A12 "^## Change" $OUT/views/pad$p.md | head -16
  done
  ;;
part3)
  # K + 64 (128-byte rows for f16: each TMA row starts on a 128-byte line again), against
  # part 2's packed report.
  S="--shape 4096x4096x4096 --shape 2048x11008x4096 --shape 16x4096x4096 --shape 1000x1000x1000 --shape 4096x4096x128"
  C="--dtypes f16 --epilogues none,bias_relu --no-vendor --out $OUT/views"
  CROSSGEMM_CACHE_DIR=/tmp/cg-p64 timeout 170 $B/crossgemm bench $S $C --pad 64 --name pad64 --against bench/results/h200-2026-12-01f/part2/packed.json > $OUT/views/pad64.log 2>&1; echo "pad64 rc=$?"
  grep -A16 "^## Change" $OUT/views/pad64.md | head -20
  ;;
esac
cd $OUT && tar czf views.tgz views && rm -rf views
