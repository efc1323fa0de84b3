#!/usr/bin/env bash
# H200, 2026-12-01 (session d), call 3 (issue 10): the wgmma family's split-K (KSPLIT 2
# and 4 on 64x64 .. 128x128 tiles; gemm-core/src/family/wgmma/splitk.rs).
# 1. tests/kernels.rs split_k_configs_give_the_same_bits_twice: every planned split-K
#    config, twice, bit for bit, against the host reference; then the same test under
#    compute-sanitizer memcheck, racecheck and synccheck.
# 2. crossgemm bench (full tune: the split-K configs are candidates) at the skinny, odd
#    and decode-size shapes, f16 and bf16, none and bias_relu, against the last full-tune
#    report (bench/results/h200-2026-12-01b/full-f16-bf16.json).
# Binaries: scripts/dev-build.sh .dev/sk (commit in .dev/sk/COMMIT).
set -u
B=.dev/sk
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(head -1 $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
mkdir -p $OUT/s
cp $B/COMMIT $OUT/s/commit.txt
T=split_k_configs_give_the_same_bits_twice
CROSSGEMM_CACHE_DIR=/tmp/cg-sk CROSSGEMM_TEST_DEVICES=cuda:0 timeout 90 $B/kernels $T > $OUT/s/kernels-split.log 2>&1; echo "split test rc=$? $(grep -h 'test result' $OUT/s/kernels-split.log)"
grep -h panicked -A3 $OUT/s/kernels-split.log | head -8
for tool in memcheck racecheck synccheck; do
  CROSSGEMM_CACHE_DIR=/tmp/cg-sk CROSSGEMM_TEST_DEVICES=cuda:0 timeout 100 compute-sanitizer --tool $tool --print-limit 20 $B/kernels $T > $OUT/s/san-$tool.log 2>&1
  echo "$tool rc=$? $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY|test result' $OUT/s/san-$tool.log | tr '\n' ' ')"
done
S="--shape 16x4096x4096 --shape 16x4096x11008 --shape 128x4096x11008 --shape 16x11008x4096 --shape 16x12288x4096 --shape 128x8192x8192 --shape 1000x1000x1000 --shape 3000x5000x700 --shape 128x12288x4096"
CROSSGEMM_CACHE_DIR=/tmp/cg-skb timeout 300 $B/crossgemm bench $S --dtypes f16,bf16 --epilogues none,bias_relu --out $OUT/s --name skinny-splitk --against bench/results/h200-2026-12-01b/full-f16-bf16.json > $OUT/s/bench.log 2>&1; echo "bench rc=$?"
grep -A5 "^| dtype | epilogue | rows" $OUT/s/skinny-splitk.md | head -7
grep -E "^\| [0-9]+x" $OUT/s/skinny-splitk.md | cut -d'|' -f2,4,5,6,10,17 | head -40
cd $OUT && tar czf s.tgz s && rm -rf s
