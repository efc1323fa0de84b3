#!/usr/bin/env bash
# H200, 2026-12-01 (session d), call 5 (issues 10 and 14), binaries of .dev/sk2: split-K
# plus k-tiles of 2 and 4 swizzle rows on the 64-row tiles (K-major A and B).
# 1. The whole tests/kernels.rs suite (every planned config, split-K determinism).
# 2. crossgemm bench (thorough tune) at the decode-size, skinny and odd shapes, f16, bf16
#    and tf32, every epilogue, against the last full-tune reports; the tuning cache
#    exported as records (merged into records/h200.json afterwards, here).
set -u
B=.dev/sk2
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(head -1 $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
mkdir -p $OUT/k
cp $B/COMMIT $OUT/k/commit.txt
CROSSGEMM_CACHE_DIR=/tmp/cg-suite CROSSGEMM_TEST_DEVICES=cuda:0 timeout 260 $B/kernels --test-threads 16 > $OUT/k/kernels.log 2>&1; echo "kernels rc=$?"
grep -hE "test result|panicked" -A2 $OUT/k/kernels.log | head -8
S="--shape 16x4096x4096 --shape 16x4096x11008 --shape 128x4096x11008 --shape 16x11008x4096 --shape 16x12288x4096 --shape 128x12288x4096 --shape 128x11008x4096 --shape 128x8192x8192 --shape 1000x1000x1000"
export CROSSGEMM_CACHE_DIR=/tmp/cg-deep
timeout 290 $B/crossgemm bench $S --dtypes f16,bf16,tf32 --out $OUT/k --name skinny-deepk --against bench/results/h200-2026-12-01b/full-f16-bf16.json > $OUT/k/bench.log 2>&1; echo "bench rc=$?"
$B/crossgemm cache export $OUT/k/records-skinny.json 2>&1 | tail -1
grep -A9 "^| dtype | epilogue | rows" $OUT/k/skinny-deepk.md | head -11
grep -E "^\| [0-9]+x" $OUT/k/skinny-deepk.md | cut -d'|' -f2,4,5,6,10,17 | head -81
cd $OUT && tar czf k.tgz k && rm -rf k
