#!/usr/bin/env bash
# NOT RUN in session k: no device was lent after batch m (ready for the next session).
# Session k, batch n (binaries of `scripts/dev-build.sh .dev/m`, the commit in COMMIT; the
# commits after it change docs and records only): issue 13's batched rows with the sides
# timed in the same rounds (ours, cublasGemmStridedBatchedEx, it + the epilogue kernel,
# cublasLtMatmul on strided-batch layouts with its fused epilogue broadcast to every
# product: never measured on the H200 before), full tunes (tables ignored), 48 candidates.
# Expected: near the 12-01g numbers (0.95-1.00x plain, 1.13-1.84x fused against cuBLAS),
# and the fused rows' first ratios against cuBLASLt.
set -u
B=${B:-.dev/m}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
R=$OUT/n; mkdir -p $R
cp $B/COMMIT $R/commit.txt
C="--max 48 --dtypes f16 --epilogues none,bias_relu --out $R"
for s in "512x512x128 32" "128x4096x128 64" "2048x2048x2048 8"; do
  set -- $s
  CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-b timeout 70 $B/crossgemm bench --shape $1 --batch $2 $C --name b$2 > $R/b$2.log 2>&1; echo "b$2 rc=$?"
  grep -E "^\| [0-9]" $R/b$2.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -3
done
CROSSGEMM_CACHE_DIR=/tmp/cg-b $B/crossgemm cache export $R/records.json 2>&1 | tail -1
cd $OUT && tar czf n.tgz n && rm -rf n
