#!/usr/bin/env bash
# Session o, batch c (.dev/o4: the CLI at 1f1e421, `baseline`).
# 1. Issue 9's table at the head: the tuner's final round now ties configs within two
#    standard errors of the median per-round ratio (about 1% over 50 rounds) instead of
#    one round's IQR (2-4% on the H200). Expected: the same winners where one config is
#    clearly ahead; where two were tied within 1-3% (2048x11008x4096: 128x128 s6 against
#    192x192 and 128x256) the faster one now wins; rows within noise of zm (+-2%).
# 2. Views (K + 8, K + 64) with cuBLAS and cuBLASLt reading the same strided layouts:
#    whether the K + 8 cost (rows an odd multiple of 16 bytes) is the layout's or ours.
#    Expected: cuBLAS slower on K + 8 rows too, by a similar 3-10%.
# 3. `diagnose` at 4096x4096x128 and at 2048x11008x4096 bias_gelu: what the epilogue
#    costs (full against no_epilogue), before building a TMA-store epilogue. Expected at
#    short K: the stores a third or more of the time; at K = 4096 1-3%.
# 4. Issue 9's f16 rows again in a fresh cache: how far two full tunes agree.
set -u
B=.dev/o4
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
R=$OUT/c; mkdir -p $R
cp $B/COMMIT $R/commit.txt
S="--shape 2048x11008x4096 --shape 2048x12288x4096 --shape 2048x4096x11008 --shape 4096x4096x4096 --shape 2048x2048x2048 --shape 8192x8192x8192"
for d in f16 bf16; do
  CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-t timeout 160 $B/crossgemm bench $S --max 48 --dtypes $d --out $R --name $d --against bench/results/h200-2026-12-02zm/$d.json > $R/$d.log 2>&1; echo "bench $d rc=$?"
  grep -E "^\| [0-9]" $R/$d.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -18
done
CROSSGEMM_CACHE_DIR=/tmp/cg-t $B/crossgemm cache export $R/records.json 2>&1 | tail -1
V="--shape 4096x4096x4096 --shape 2048x11008x4096 --shape 16x4096x4096 --shape 1000x1000x1000 --shape 4096x4096x128"
for pad in 8 64; do
  timeout 150 $B/crossgemm bench --cache-dir /tmp/cg-v$pad $V --dtypes f16 --epilogues none --max 48 --pad $pad --out $R --name pad$pad > $R/pad$pad.log 2>&1; echo "pad $pad rc=$?"
  grep -E "^\| [0-9]" $R/pad$pad.md | head -5 | cut -d'|' -f2,5,6,7,9,10
  sed -n '/Views against/,$p' $R/pad$pad.md | grep -E "rows:"
done
for x in "4096x4096x128 none" "4096x4096x128 bias_relu" "2048x11008x4096 bias_gelu"; do
  set -- $x
  CROSSGEMM_CACHE_DIR=/tmp/cg-t timeout 60 $B/crossgemm diagnose --shape $1 --dtype f16 --epilogue $2 > $R/diagnose-$1-$2.txt 2>&1; echo "diagnose $1 $2 rc=$?"
  grep -E "^  [a-z_ ]+[0-9.]+ us" $R/diagnose-$1-$2.txt | head -6
done
CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-t2 timeout 110 $B/crossgemm bench $S --max 48 --dtypes f16 --out $R --name f16-again --against $R/f16.json > $R/f16-again.log 2>&1; echo "bench f16 again rc=$?"
grep -E "^\| [0-9]" $R/f16-again.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -18
cd $OUT && tar czf c.tgz c && rm -rf c
