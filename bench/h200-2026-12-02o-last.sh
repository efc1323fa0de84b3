#!/usr/bin/env bash
# Ran at the end of session k (results/h200-2026-12-02o/).
# Session k, last call (the CLI of the commit in .dev/o/COMMIT, built with `baseline`, no
# `aot`): diagnose with its probes timed in the same rounds, on the GPU for the first time
# (16x4096x4096 f16 none: batch -02g had load-only 96-101 % of the full time); then the
# batched rows 8x(2048^3) and 32x(512x512x128), none and bias_relu, with the sides timed
# together (cuBLASLt's strided-batch fused epilogue for the first time).
set -u
B=.dev/o
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
R=$OUT/o; mkdir -p $R
cp $B/COMMIT $R/commit.txt
CROSSGEMM_CACHE_DIR=/tmp/cg-d timeout 50 $B/crossgemm diagnose --shape 16x4096x4096 --dtype f16 --epilogue none > $R/diagnose-16x4096x4096.txt 2>&1; echo "diagnose rc=$?"
sed -n '2,12p' $R/diagnose-16x4096x4096.txt
C="--max 48 --dtypes f16 --epilogues none,bias_relu --out $R"
for s in "2048x2048x2048 8" "512x512x128 32"; do
  set -- $s
  CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-b timeout 60 $B/crossgemm bench --shape $1 --batch $2 $C --name b$2 > $R/b$2.log 2>&1; echo "b$2 rc=$?"
  grep -E "^\| [0-9]" $R/b$2.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -3
done
cd $OUT && tar czf o.tgz o && rm -rf o
