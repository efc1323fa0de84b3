#!/usr/bin/env bash
# Session h, third batch (binaries of `scripts/dev-build.sh .dev/rl`): staging on CUDA
# through the realign kernel (gemm-runtime/src/realign.rs: 16-byte loads and stores,
# funnel-shifted) instead of cuMemcpy2DAsync (about 1.1 TB/s on odd pitches).
# tests/staged.rs through CUDA and memcheck on it (odd pitches, offsets, batch strides:
# every 2-byte misalignment), then 3000x5000x700 against h200-2026-12-01h's staged report,
# K + 3 views against session f's packed report, and two fresh-process first calls of a
# staged shape (the kernel is compiled by NVRTC there: what it adds).
# Expected: 3000x5000x700 from 69.9 to ~57 us (copies of 22 MB from ~20 to ~7 us);
# K + 3 views from 0.23-0.63x to ~0.6-0.85x of packed.
set -u
B=.dev/rl
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(head -1 $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
mkdir -p $OUT/rl/json
cp $B/COMMIT $OUT/rl/commit.txt
CROSSGEMM_CACHE_DIR=/tmp/cg-st CROSSGEMM_TEST_DEVICES=cuda:0 timeout 60 $B/staged > $OUT/rl/staged.log 2>&1; echo "staged rc=$?"
grep -hE "test result|panicked" -A3 $OUT/rl/staged.log | head -6
C="--shape 3000x5000x700 --dtypes f16 --epilogues none,bias_relu,bias_gelu --out $OUT/rl"
CROSSGEMM_CACHE_DIR=/tmp/cg-k700 timeout 90 $B/crossgemm bench $C --name k700-staged --against bench/results/h200-2026-12-01h/part2/k700-staged.json > $OUT/rl/k700-staged.log 2>&1; echo "k700 rc=$?"
grep -hE "^\| 3000x5000x700" $OUT/rl/k700-staged.md | cut -d'|' -f2,4,5,6,7,9,10,17
CROSSGEMM_CACHE_DIR=/tmp/cg-stsan CROSSGEMM_TEST_DEVICES=cuda:0 timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool memcheck $B/staged > $OUT/rl/san-staged.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|test result" $OUT/rl/san-staged.log
S="--shape 4096x4096x4096 --shape 2048x11008x4096 --shape 16x4096x4096 --shape 1000x1000x1000 --shape 4096x4096x128"
CROSSGEMM_CACHE_DIR=/tmp/cg-p3 timeout 90 $B/crossgemm bench $S --dtypes f16 --epilogues none,bias_relu --no-vendor --pad 3 --out $OUT/rl --name pad3-staged --against bench/results/h200-2026-12-01f/part2/packed.json > $OUT/rl/pad3.log 2>&1; echo "pad3 rc=$?"
grep -A14 "^## Change" $OUT/rl/pad3-staged.md | grep -E "^\| [0-9]" | cut -d'|' -f2,4,5,6,7
for e in none bias_relu; do
  rm -rf /tmp/cc-$e /tmp/cg-$e
  CUDA_CACHE_PATH=/tmp/cc-$e CROSSGEMM_CACHE_DIR=/tmp/cg-$e timeout 40 $B/crossgemm bench --first-call --shape 3000x5000x700 --dtypes f16 --epilogues $e --no-vendor --runs 10 --out $OUT/rl/json --name fc-$e > $OUT/rl/json/fc-$e.log 2>&1
  grep -o 'first call [0-9]* ms ([^)]*)' $OUT/rl/json/fc-$e.log | head -1
done
cd $OUT && tar czf rl.tgz rl && rm -rf rl
