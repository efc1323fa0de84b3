#!/usr/bin/env bash
# Session n, batch zm (the CLI at the commit in .dev/n6/COMMIT, `baseline`): issue 9's
# table in one run at the session's head (paired final round, finer N buckets, the
# three-consumer 192-row tiles): its six shapes, f16 and bf16, none / bias_relu /
# bias_gelu, full tunes (tables ignored), 48 candidates, sides timed in the same rounds,
# against batch zi. Expected: zi's plain rows (0.96-1.02x) and zk's fused rows at
# 2048x11008x4096 (1.01-1.02x cuBLASLt where 192x192 wins), the rest within noise.
set -u
B=${B:-.dev/n6}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
R=$OUT/zm; mkdir -p $R
cp $B/COMMIT $R/commit.txt
S="--shape 2048x11008x4096 --shape 2048x12288x4096 --shape 2048x4096x11008 --shape 4096x4096x4096 --shape 2048x2048x2048 --shape 8192x8192x8192"
for d in f16 bf16; do
  CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-b timeout 140 $B/crossgemm bench $S --max 48 --dtypes $d --out $R --name $d --against bench/results/h200-2026-12-02zi/$d.json > $R/$d.log 2>&1; echo "bench $d rc=$?"
  grep -E "^\| [0-9]" $R/$d.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -18
done
CROSSGEMM_CACHE_DIR=/tmp/cg-b $B/crossgemm cache export $R/records.json 2>&1 | tail -1
cd $OUT && tar czf zm.tgz zm && rm -rf zm
