#!/bin/bash
# Device run 6: run 5's fixes (no 4-byte parameter copy past an odd-length vector, named
# barriers by immediate id), tanh.approx gelu for 16-bit outputs, the 16/8-byte split of
# 8-byte cp.async rows; correctness, the three sanitizers, the final timings.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
B=./.dev/wgmma_probe6
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
mkdir -p /tmp/chk
SUB=f16.rc,bf16.cc,bf16.cr,f16.rc.bias_gelu,f16.rc.col_res_silu,bf16.cr.col_res_silu
ODD=tiny,odd,129x130x20,130x66x1030
run() { local n=$1; shift; ( timeout 60 "$@" > /tmp/chk/$n.log 2>&1; echo "exit=$?" >> /tmp/chk/$n.log ) & }
run p1 $B --configs 128x256s4c2 --shapes $ODD --fuzz-odd 10
run p2 $B --configs 64x128s8c1 --shapes $ODD --fuzz-odd 10
run p3 $B --configs 256x128s3c2 --kinds $SUB --shapes $ODD --fuzz-odd 10
run p4 $B --configs 128x128s5c2,128x192s5c2 --kinds $SUB --shapes $ODD
run p5 $B --configs 128x64s8c2,64x64s10c1 --kinds $SUB --shapes $ODD --fuzz-odd 6
run p6 $B --configs 128x256s4c2x2 --shapes tiny --fuzz 8
run p7 $B --configs 128x256s4c2d --kinds $SUB --shapes $ODD
run p8 $B --configs 128x256s4c2 --kinds f16.rc.bias_gelu,bf16.rc.bias_gelu,f16.rc.col_res_silu,bf16.cr.col_res_silu,f16.rc.bias_gelu.f32 --shapes 1000x1000x1008,1024x1024x2048,3000x5000x700,4096x4096x128
run p9 $B --define CG_CPA_SPLIT=0 --configs 128x256s4c2 --kinds f16.rc,bf16.cc,bf16.cr --shapes $ODD
( timeout 60 compute-sanitizer --tool memcheck $B --configs 128x256s4c2,64x128s8c1 --kinds f16.rc.col_res_silu,bf16.cr.col_res_silu,f16.rc.bias_gelu,bf16.cc --shapes 66x130x70,129x130x20,200x300x36,65x130x72,1x8x4,7x13x2,130x66x1030 > /tmp/chk/memcheck.log 2>&1; echo "memcheck exit=$?" >> /tmp/chk/memcheck.log ) &
( timeout 60 compute-sanitizer --tool racecheck $B --configs 128x256s4c2 --kinds f16.rc.col_res_silu,bf16.cr.col_res_silu --shapes 66x130x70,129x130x20 > /tmp/chk/racecheck.log 2>&1; echo "racecheck exit=$?" >> /tmp/chk/racecheck.log ) &
( timeout 60 compute-sanitizer --tool synccheck $B --configs 128x256s4c2,64x128s8c1 --kinds f16.rc.col_res_silu,f16.rc --shapes 66x130x70,129x130x20 > /tmp/chk/synccheck.log 2>&1; echo "synccheck exit=$?" >> /tmp/chk/synccheck.log ) &
wait
for p in p1 p2 p3 p4 p5 p6 p7 p8 p9; do echo "=== $p"; cat /tmp/chk/$p.log; done > $OUT/correct.log
cat /tmp/chk/memcheck.log /tmp/chk/racecheck.log /tmp/chk/synccheck.log > $OUT/sanitizer.log
echo "correctness done at $(el) s: $(grep -c ' same$' $OUT/correct.log) ok rows, $(grep -c 'FAIL' $OUT/correct.log) FAIL, $(grep -c 'skipped' $OUT/correct.log) skipped"
grep -h "FAIL\|HANG\|ERROR\|DIFF\|exit=" $OUT/correct.log | sort | uniq -c | head -30
grep -h "exit=\|ERROR SUMMARY\|RACECHECK SUMMARY\|Invalid" $OUT/sanitizer.log | sort | uniq -c
awk '/^=== /{p=$2} / same/ {n[p]++; if ($11>0) s[p]++} END {for (k in n) print "strict", k, n[k], s[k]+0}' $OUT/correct.log | sort
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 500 > $OUT/clocks.txt 2>&1 &
SMI=$!
K3=f16.rc,f16.rc.bias_relu,f16.rc.bias_gelu
t() {
  if [ $(el) -ge 165 ]; then echo "skipped (time): $*"; return; fi
  timeout 30 "$@" --time --time-kinds all > /tmp/chk/t.log 2>&1; echo "exit=$?"
  grep -h "ERROR\|note:" /tmp/chk/t.log | head -5; sed -n '/== summary/,$p' /tmp/chk/t.log | tail -n +3
}
{
echo "## C1 4096x4096x128"; t $B --configs 256x128s3c2,128x128s5c2,128x256s4c2 --kinds $K3 --shapes 4096x4096x128
echo "## C2 4096^3"; t $B --configs 128x256s4c2 --kinds $K3 --shapes 4096x4096x4096
echo "## C3 1024^3"; t $B --configs 64x128s8c1,128x64s8c2 --kinds $K3 --shapes 1024x1024x1024
echo "## C4 cp.async split, 3000x5000x700"; t $B --configs 128x256s4c2,128x192s4c2,256x128s4c2,128x192s5c2,128x128s5c2 --kinds f16.rc,f16.rc.bias_relu --shapes 3000x5000x700
echo "## C5 no split (run 5's producer)"; t $B --define CG_CPA_SPLIT=0 --configs 128x256s4c2,128x192s4c2 --kinds f16.rc --shapes 3000x5000x700
echo "## C6a 704 rows forced through cp.async 16 B"; t $B --define CG_CPASYNC=1 --define CG_CPA_A=16 --define CG_CPA_B=16 --configs 128x256s4c2 --kinds f16.rc --shapes 3000x5000x704
echo "## C6b 704 rows forced through cp.async 8 B (.ca)"; t $B --define CG_CPASYNC=1 --define CG_CPA_A=8 --define CG_CPA_B=8 --define CG_CPA_SPLIT=0 --configs 128x256s4c2 --kinds f16.rc --shapes 3000x5000x704
echo "## C6c 4-byte rows (K = 702)"; t $B --configs 128x256s4c2,128x192s4c2 --kinds f16.rc --shapes 3000x5000x702
echo "## C7 gelu ex2/rcp form"; t $B --define CG_GELU_TANH=0 --configs 256x128s3c2,128x256s4c2 --kinds f16.rc.bias_gelu --shapes 4096x4096x128,4096x4096x4096
} > $OUT/timing.log 2>&1
kill $SMI
echo "all done at $(el) s"
cat $OUT/timing.log
