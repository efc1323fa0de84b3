#!/usr/bin/env bash
# Session j, first batch (binaries in .dev/e1: crossgemm-base at eb2f683, crossgemm-exp
# with both changes below).
# 1. decode: one block of 16 warps per SM over 32 columns (`(2,16,16,2)`: 32-column
#    warps, and `(1,16,8,4)`: two groups of 16-column warps), so that A is read once per
#    32 columns instead of per 16. Expected: 16x4096x4096 from 15.7 toward 15.0 us (the
#    8-row time), 32x4096x4096 from 18.2 toward 16.
# 2. wgmma: TMA only for rows at multiples of 32 bytes, the cp.async producer (16-byte
#    copies) for rows at odd multiples of 16 (1000^3: 2000-byte rows; K + 8 views).
#    Expected: 1000^3 from ~12.2 toward 10.6 us (the K + 8 view's winner in -01f).
set -u
D=.dev/e1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
R=$OUT/e; mkdir -p $R
top() { python3 -c "
import json
d=json.load(open('$1'))
t=sorted(d['timings'], key=lambda t: t['us'])
print('  ', '; '.join('%s %.2f' % (x['config'].replace('decode ','').replace('cols ','c').replace('warps ','w').replace('unroll ','u').replace('stages ','s').replace('consumers ','c').replace(' cluster 1','').replace(' group 8',''), x['us']) for x in t[:$2]))
"; }
for s in 16x4096x4096 32x4096x4096 8x4096x4096 16x12288x4096 1x12288x4096 16x4096x11008; do
  CROSSGEMM_CACHE_DIR=/tmp/cg-x timeout 60 $D/crossgemm-exp tune --shape $s --dtype f16 --epilogue none --max 64 --json > $R/tune-exp-$s.json 2> $R/tune-exp-$s.log; echo "tune exp $s rc=$?"
  top $R/tune-exp-$s.json 8
done
for b in base exp; do
  for e in none bias_relu; do
    CROSSGEMM_CACHE_DIR=/tmp/cg-$b timeout 60 $D/crossgemm-$b tune --shape 1000x1000x1000 --dtype f16 --epilogue $e --max 64 --json > $R/tune-$b-1000-$e.json 2> $R/tune-$b-1000-$e.log; echo "tune $b 1000^3 $e rc=$?"
    top $R/tune-$b-1000-$e.json 6
  done
done
S="--shape 1000x1000x1000 --shape 16x4096x4096 --shape 32x4096x4096 --shape 16x12288x4096"
CROSSGEMM_CACHE_DIR=/tmp/cg-exp timeout 150 $D/crossgemm-exp bench $S --max 64 --dtypes f16 --epilogues none,bias_relu --out $R --name exp > $R/exp.log 2>&1; echo "bench exp rc=$?"
grep -E "^\| [0-9]" $R/exp.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -12
for b in base exp; do
  CROSSGEMM_CACHE_DIR=/tmp/cg-p$b timeout 120 $D/crossgemm-$b bench --shape 4096x4096x4096 --shape 2048x11008x4096 --shape 1000x1000x1000 --max 48 --dtypes f16 --epilogues none --no-vendor --pad 8 --out $R --name pad8-$b > $R/pad8-$b.log 2>&1; echo "bench pad8 $b rc=$?"
  grep -E "^\| [0-9]" $R/pad8-$b.md | cut -d'|' -f2,4,5,17 | head -4
done
cd $OUT && tar czf e.tgz e && rm -rf e
