#!/usr/bin/env bash
# Session i, third batch (binaries of `scripts/dev-build.sh .dev/oc`): the decode family with
# more bytes in flight: 8 rows with 8 chunks a warp at 16 warps per SM (21 loads ahead of
# the first MMA, against 12) or 4 chunks at 24 warps per SM (85 registers); 16 rows with
# 5 chunks (20 loads ahead, against 16).
# Expected: 1x12288x4096 from 31.6 toward 29 us, 16x4096x4096 from 15.5 toward 14.5 us.
set -u
B=${B:-.dev/oc}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(head -1 $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
SAN=/usr/local/cuda/bin/compute-sanitizer
mkdir -p $OUT/oc
cp $B/COMMIT $OUT/oc/commit.txt
CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-san timeout 90 $SAN --tool memcheck $B/kernels --test-threads 1 decode_configs_give_the_same_bits_twice > $OUT/oc/san-decode-memcheck.log 2>&1; echo "decode memcheck rc=$?"
grep -E "ERROR SUMMARY|test result" $OUT/oc/san-decode-memcheck.log
for s in 16x4096x4096 1x12288x4096 16x12288x4096 8x4096x4096; do
  CROSSGEMM_CACHE_DIR=/tmp/cg-t timeout 40 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --max 48 --json > $OUT/oc/tune-$s.json 2> $OUT/oc/tune-$s.log; echo "tune $s rc=$?"
  python3 -c "
import json
d=json.load(open('$OUT/oc/tune-$s.json'))
t=sorted(d['timings'], key=lambda t: t['us'])
print('  ', '; '.join('%s %.1f' % (x['config'].replace('decode ','').replace('cols ','c').replace('warps ','w').replace('unroll ','u').replace('occupancy ','occ'), x['us']) for x in t[:7]))
"
done
S="--shape 16x4096x4096 --shape 16x12288x4096 --shape 16x4096x11008 --shape 16x11008x4096 --shape 1x12288x4096 --shape 1x4096x11008 --shape 1x11008x4096 --shape 8x4096x4096 --shape 32x4096x4096"
CROSSGEMM_CACHE_DIR=/tmp/cg-b timeout 200 $B/crossgemm bench $S --max 48 --dtypes f16,bf16 --epilogues none,bias_relu --out $OUT/oc --name decode --against bench/results/h200-2026-12-02b/decode.json > $OUT/oc/decode.log 2>&1; echo "bench rc=$?"
grep -E "^\| [0-9]" $OUT/oc/decode.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -36
CROSSGEMM_CACHE_DIR=/tmp/cg-b $B/crossgemm cache export $OUT/oc/records-decode.json 2>&1 | tail -1
cd $OUT && tar czf oc.tgz oc && rm -rf oc
