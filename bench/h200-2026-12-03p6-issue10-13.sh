#!/usr/bin/env bash
# Session p, batch p6 (.dev/p6: the CLI at the commit in .dev/p6/COMMIT, `baseline`): issue
# 10's rows and issue 13's batches at the session's head (three-consumer ping-pong planned,
# the rows' marks in the keys), full tunes (tables ignored), sides in the same rounds,
# against zi (issue 10's last table) and -03a (the batches).
# Expected: the fused K = 128 rows as in batch p5 (4096x4096x128 bias_relu ~1.85x cuBLAS,
# ~1.08x cuBLASLt; 32x512x512x128 bias_relu ~1.09x cuBLASLt), the rest within noise of zi.
set -u
B=${B:-.dev/p6}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
export CROSSGEMM_IGNORE_TABLES=1
R=$OUT/p6; mkdir -p $R
cp $B/COMMIT $R/commit.txt
S10="--shape 16x4096x4096 --shape 128x8192x8192 --shape 4096x4096x128 --shape 1000x1000x1000 --shape 3000x5000x700 --shape 1x12288x4096"
timeout 240 $B/crossgemm bench $S10 --cache-dir /tmp/cg-10 --max 48 --dtypes f16 --epilogues none,bias_relu --out $R --name issue10 --against bench/results/h200-2026-12-02zi/issue10.json > $R/issue10.log 2>&1; echo "bench issue10 rc=$?"
grep -E "^\| [0-9]" $R/issue10.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -12
for b in "512x512x128 32" "128x4096x128 64" "2048x2048x2048 8"; do
  set -- $b
  timeout 100 $B/crossgemm bench --cache-dir /tmp/cg-b --shape $1 --batch $2 --dtypes f16 --epilogues none,bias_relu --max 48 --out $R --name batch$2 > $R/batch$2.log 2>&1; echo "bench batch$2 rc=$?"
  grep -E "^\| [0-9]" $R/batch$2.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -2
done
CROSSGEMM_CACHE_DIR=/tmp/cg-10 $B/crossgemm cache export $R/records-issue10.json > /dev/null 2>&1
CROSSGEMM_CACHE_DIR=/tmp/cg-b $B/crossgemm cache export $R/records-batch.json > /dev/null 2>&1
cd $OUT && tar czf p6.tgz p6 && rm -rf p6
