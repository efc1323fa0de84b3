#!/usr/bin/env bash
# Session i, second batch (binaries of `scripts/dev-build.sh .dev/pf`): the decode family's
# L2 prefetch (PREFETCH 0, 2, 4 super-steps ahead, cp.async.bulk.prefetch).
# - correctness: every decode config (prefetch ones included) twice, same bits, and
#   memcheck on it; every planned f16 config on aligned and odd shapes;
# - every candidate's time at four decode shapes (crossgemm tune --json);
# - the decode-size rows for all six f16/bf16 kernels beside cuBLAS/cuBLASLt, against the
#   2026-12-01 report, exported as records.
# Expected: prefetch 2-4 takes 16x4096x4096 from 15.6 toward 13-14 us and
# 1x12288x4096 from 31.5 toward 28 us (more bytes in flight than the registers hold).
set -u
B=${B:-.dev/pf}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(head -1 $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
SAN=/usr/local/cuda/bin/compute-sanitizer
mkdir -p $OUT/pf
cp $B/COMMIT $OUT/pf/commit.txt
export CROSSGEMM_TEST_DEVICES=cuda:0
CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 150 $B/kernels --test-threads 16 decode_configs every_planned_config_f16 > $OUT/pf/kernels.log 2>&1; echo "kernels rc=$?"
grep -hE "test result|panicked" -A3 $OUT/pf/kernels.log | head -8
CROSSGEMM_CACHE_DIR=/tmp/cg-san timeout 60 $SAN --tool memcheck $B/kernels --test-threads 1 decode_configs_give_the_same_bits_twice > $OUT/pf/san-decode-memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|test result" $OUT/pf/san-decode-memcheck.log
unset CROSSGEMM_TEST_DEVICES
for s in 16x4096x4096 1x12288x4096 16x12288x4096 32x4096x4096; do
  CROSSGEMM_CACHE_DIR=/tmp/cg-t timeout 40 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --max 48 --json > $OUT/pf/tune-$s.json 2> $OUT/pf/tune-$s.log; echo "tune $s rc=$?"
  python3 -c "
import json,sys
d=json.load(open('$OUT/pf/tune-$s.json'))
t=sorted(d['timings'], key=lambda t: t['us'])
print('  ', '; '.join('%s %.1f' % (x['config'].replace('decode ','').replace('cols ','c').replace('warps ','w').replace('unroll ','u').replace('prefetch ','pf'), x['us']) for x in t[:8]))
"
done
S="--shape 16x4096x4096 --shape 16x12288x4096 --shape 16x4096x11008 --shape 16x11008x4096 --shape 1x12288x4096 --shape 1x4096x11008 --shape 1x11008x4096 --shape 8x4096x4096 --shape 32x4096x4096"
CROSSGEMM_CACHE_DIR=/tmp/cg-b timeout 300 $B/crossgemm bench $S --max 48 --dtypes f16,bf16 --epilogues none,bias_relu,bias_gelu --out $OUT/pf --name decode --against bench/results/nvidia-h200-2026-12-01.json > $OUT/pf/decode.log 2>&1; echo "bench rc=$?"
grep -E "^\| [0-9]" $OUT/pf/decode.md | cut -d'|' -f2,3,4,5,6,7,9,10,17 | head -60
CROSSGEMM_CACHE_DIR=/tmp/cg-b $B/crossgemm cache export $OUT/pf/records-decode.json 2>&1 | tail -1
cd $OUT && tar czf pf.tgz pf && rm -rf pf
