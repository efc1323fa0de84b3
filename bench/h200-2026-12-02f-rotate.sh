#!/usr/bin/env bash
# Session j, batch f (binaries in .dev/e1: crossgemm-base at eb2f683, crossgemm-rot with
# the decode walk rotated per block: block b starts at chunk (b mod (whole/UNROLL))*UNROLL
# and wraps).
# Hypothesis: blocks in step read the same chunk of A at the same moment (every block's
# request for one line at one L2 slice). Expected: 16x4096x4096 from 15.7 toward the
# 8-row time (14.7), and 1x12288x4096 (A is 8 KB, read by all 768 blocks) from 31.8
# toward 30. Each binary tunes twice, alternating, for the noise.
set -u
D=.dev/e1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
R=$OUT/f; mkdir -p $R
top() { python3 -c "
import json
d=json.load(open('$1'))
t=sorted((x for x in d['timings'] if x['config'].startswith('decode')), key=lambda t: t['config'])
print('  ', '; '.join('%s %.2f' % (x['config'].replace('decode ','').replace('rows ','r').replace('cols ','c').replace('warps ','w').replace('unroll ','u').replace('kw ','k'), x['us']) for x in t))
"; }
for s in 16x4096x4096 8x4096x4096 1x12288x4096 16x12288x4096 32x4096x4096 1x4096x11008; do
  for i in 1 2; do
    for b in base rot; do
      CROSSGEMM_CACHE_DIR=/tmp/cg-$b$i timeout 60 $D/crossgemm-$b tune --shape $s --dtype f16 --epilogue none --max 24 --json > $R/tune-$b$i-$s.json 2> $R/tune-$b$i-$s.log; echo "tune $b$i $s rc=$?"
      top $R/tune-$b$i-$s.json
    done
  done
done
for b in base rot; do
  CROSSGEMM_CACHE_DIR=/tmp/cg-${b}1 timeout 60 $D/crossgemm-$b diagnose --shape 16x4096x4096 --epilogue none > $R/diagnose-$b-16x4096x4096.txt 2>&1; echo "diagnose $b rc=$?"
  grep -iE "load-only|compute-only|no-epilogue|verdict|full" $R/diagnose-$b-16x4096x4096.txt | head -6
done
S="--shape 16x4096x4096 --shape 8x4096x4096 --shape 1x12288x4096 --shape 16x12288x4096 --shape 32x4096x4096"
for b in base rot; do
  CROSSGEMM_CACHE_DIR=/tmp/cg-${b}2 timeout 120 $D/crossgemm-$b bench $S --dtypes f16 --epilogues none --out $R --name bench-$b > $R/bench-$b.log 2>&1; echo "bench $b rc=$?"
  grep -E "^\| [0-9]" $R/bench-$b.md | cut -d'|' -f2,4,5,6,8,17 | head -6
done
cd $OUT && tar czf f.tgz f && rm -rf f
