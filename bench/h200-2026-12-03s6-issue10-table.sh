#!/usr/bin/env bash
# Session s, batch s6 (.dev/s1old: the CLI at 6c82d37, the kernels as committed).
# Issue 10's rows in one run with both 16-bit dtypes (its "done" asks f16 and bf16, none
# and bias_relu, from one run; batch p6 had f16 alone) and the LLM decode rows that its
# copy-bandwidth target names (M = 1, 16, 128 at N = 12288, K = 4096). Full tunes (48
# candidates, tables ignored), sides in the same rounds, f16 against batch p6.
# Written before: the f16 rows within +-3% of p6 (no kernel change since), bf16 within a
# few % of f16 (the same kernels, bf16 conversions in the epilogue).
set -u
B=.dev/s1old
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
R=$OUT/s6; mkdir -p $R
cp $B/COMMIT $R/commit.txt
S="--shape 16x4096x4096 --shape 128x8192x8192 --shape 4096x4096x128 --shape 1000x1000x1000 --shape 3000x5000x700 --shape 1x12288x4096 --shape 16x12288x4096 --shape 128x12288x4096"
timeout 560 $B/crossgemm bench $S --cache-dir /tmp/cg-s6 --max 48 --dtypes f16,bf16 --epilogues none,bias_relu --out $R --name issue10 --against bench/results/h200-2026-12-03p6/issue10.json > $R/issue10.log 2>&1; echo "bench issue10 rc=$?"
grep -E "^\| [0-9]" $R/issue10.md | cut -d'|' -f2,4,5,6,7,8,9,10,17 | head -40
CROSSGEMM_CACHE_DIR=/tmp/cg-s6 $B/crossgemm cache export $R/records-issue10.json > /dev/null 2>&1
cd $OUT && tar czf s6.tgz s6 && rm -rf s6
