#!/usr/bin/env bash
# Session h, second batch (binaries of `scripts/dev-build.sh .dev/pp`): the ping-pong
# schedule of the wgmma family (CG_PINGPONG: two consumers on alternate tiles, mainloops in
# turn, one's epilogue under the other's mainloop) and the variant check on a small grid.
# `part1`: the kernels suite on CUDA (every planned config, ping-pong ones included, and the
#   new persistent_grids_loop_over_tiles: 3112x3112x136, 300+ tiles, so blocks loop and the
#   ping-pong consumers alternate), then compute-sanitizer memcheck, racecheck and
#   synccheck on that test.
# `part2`: full tunes beside cuBLAS/cuBLASLt (f16 none, bias_relu, bias_gelu) on the shapes
#   where the epilogue or the tile loop costs most, against the 2026-12-01 report; the
#   batched rows of part3 of h200-2026-12-01h; then part1 of h200-2026-12-01h-aot.sh's
#   fresh-process first calls (the variant check no longer compiles comparison kernels).
#   Expected: fused rows at or above cuBLASLt where ping-pong wins (bias_gelu at
#   4096x4096x128 was 34.3 vs 23.5 us); first calls all <= 300 ms.
set -u
B=${B:-.dev/pp}  # B=.dev/next: the suite (with stream-K in persistent_grids_loop_over_tiles) at a later commit
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(head -1 $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
mkdir -p $OUT/pp
cp $B/COMMIT $OUT/pp/commit.txt
case "${1:-part1}" in
part1)
  CROSSGEMM_CACHE_DIR=/tmp/cg-suite CROSSGEMM_TEST_DEVICES=cuda:0 timeout 300 $B/kernels --test-threads 16 > $OUT/pp/kernels.log 2>&1; echo "kernels rc=$?"
  grep -hE "test result|panicked" -A3 $OUT/pp/kernels.log | head -12
  SAN=/usr/local/cuda/bin/compute-sanitizer
  for tool in memcheck racecheck synccheck; do
    CROSSGEMM_CACHE_DIR=/tmp/cg-san CROSSGEMM_TEST_DEVICES=cuda:0 timeout 80 $SAN --tool $tool $B/kernels --test-threads 1 persistent_grids_loop_over_tiles > $OUT/pp/san-$tool.log 2>&1; echo "$tool rc=$?"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test result" $OUT/pp/san-$tool.log
  done
  ;;
part2)
  S="--shape 4096x4096x4096 --shape 2048x2048x2048 --shape 1024x1024x1024 --shape 2048x11008x4096 --shape 4096x4096x128 --shape 1000x1000x1000 --shape 128x12288x4096"
  CROSSGEMM_CACHE_DIR=/tmp/cg-b timeout 240 $B/crossgemm bench $S --dtypes f16 --epilogues none,bias_relu,bias_gelu --out $OUT/pp --name pingpong --against bench/results/nvidia-h200-2026-12-01.json > $OUT/pp/pingpong.log 2>&1; echo "bench rc=$?"
  grep -E "^\| [0-9]" $OUT/pp/pingpong.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -24
  C="--dtypes f16 --epilogues none,bias_relu,bias_gelu --out $OUT/pp"
  CROSSGEMM_CACHE_DIR=/tmp/cg-b32 timeout 60 $B/crossgemm bench --shape 512x512x128 --batch 32 $C --name b32 > $OUT/pp/b32.log 2>&1; echo "b32 rc=$?"
  CROSSGEMM_CACHE_DIR=/tmp/cg-b8 timeout 90 $B/crossgemm bench --shape 2048x2048x2048 --batch 8 $C --name b8 > $OUT/pp/b8.log 2>&1; echo "b8 rc=$?"
  for b in b32 b8; do grep -E "^\| [0-9]+x\(" $OUT/pp/$b.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -4; done
  # The fresh-process first calls again (into $OUT/aot.tgz).
  B=$B bash bench/h200-2026-12-01h-aot.sh part1 | tail -8
  ;;
esac
cd $OUT && tar czf pp.tgz pp && rm -rf pp
