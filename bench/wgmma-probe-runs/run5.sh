#!/bin/bash
# Device run 5: the epilogue (Row/Col parameters staged per tile, fast gelu) and the
# cp.async producer for rows TMA cannot map. Correctness first (parallel per config),
# sanitizers, then timing (ours, cuBLAS and cuBLASLt alternating run by run).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
B=./.dev/wgmma_probe5   # this change
OLD=./.dev/wgmma_probe  # run-4 binary: the kernel before it
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
mkdir -p /tmp/chk
SUB=f16.rc,bf16.cc,bf16.cr,f16.rc.bias_gelu,f16.rc.col_res_silu,bf16.cr.col_res_silu
run() { local n=$1; shift; ( timeout 70 "$@" > /tmp/chk/$n.log 2>&1; echo "exit=$?" >> /tmp/chk/$n.log ) & }
run p1 $B --configs 128x256s4c2 --shapes tiny,odd --fuzz-odd 10
run p2 $B --configs 64x128s8c1 --shapes tiny,odd --fuzz-odd 10
run p3 $B --configs 256x128s3c2 --kinds $SUB --shapes tiny,odd --fuzz-odd 10
run p4 $B --configs 128x128s5c2 --kinds $SUB --shapes tiny,odd --fuzz-odd 10
run p5 $B --configs 128x64s8c2,64x64s10c1 --kinds $SUB --shapes tiny,odd --fuzz-odd 6
run p6 $B --configs 128x256s4c2x2 --shapes tiny --fuzz 8
run p7 $B --configs 128x256s4c2d --kinds $SUB --shapes tiny,odd
run p8 $B --configs 128x256s4c2 --kinds f16.rc.bias_gelu,f16.rc.col_res_silu,bf16.cr.col_res_silu,bf16.rc.bias_relu,f16.rc.bias_gelu.f32 --shapes 1000x1000x1008,1024x1024x2048,3000x5000x704,3000x5000x700
run p9 $B --define CG_GELU_TANH=1 --configs 128x256s4c2,64x128s8c1 --kinds f16.rc.bias_gelu,bf16.rc.bias_gelu,f16.rc.bias_gelu.f32 --shapes tiny,odd,1024x1024x1024
( timeout 70 compute-sanitizer --tool memcheck $B --configs 128x256s4c2,64x128s8c1 --kinds f16.rc.col_res_silu,bf16.cr.col_res_silu,f16.rc.bias_gelu,bf16.cc --shapes 66x130x70,129x258x138,200x300x36,65x130x72 > /tmp/chk/memcheck.log 2>&1; echo "memcheck exit=$?" >> /tmp/chk/memcheck.log ) &
( timeout 70 compute-sanitizer --tool racecheck $B --configs 128x256s4c2 --kinds f16.rc.col_res_silu,bf16.cr.col_res_silu --shapes 66x130x70,129x258x72 > /tmp/chk/racecheck.log 2>&1; echo "racecheck exit=$?" >> /tmp/chk/racecheck.log ) &
wait
for p in p1 p2 p3 p4 p5 p6 p7 p8 p9; do echo "=== $p"; cat /tmp/chk/$p.log; done > $OUT/correct.log
cat /tmp/chk/memcheck.log /tmp/chk/racecheck.log > $OUT/sanitizer.log
echo "correctness done at $(el) s: $(grep -c ' same$' $OUT/correct.log) ok rows, $(grep -c 'FAIL' $OUT/correct.log) FAIL, $(grep -c 'skipped' $OUT/correct.log) skipped"
grep -h "FAIL\|HANG\|ERROR\|DIFF\|exit=" $OUT/correct.log | sort | uniq -c | head -30
grep -h "exit=\|ERROR SUMMARY\|RACECHECK SUMMARY" $OUT/sanitizer.log
# strict (test-suite tolerance) violations per kind and gelu form
awk '/^=== /{p=$2} / same/ && $11>0 {print p, $1, $2, $3, "strict=" $11}' $OUT/correct.log | head -30
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 500 > $OUT/clocks.txt 2>&1 &
SMI=$!
K3=f16.rc,f16.rc.bias_relu,f16.rc.bias_gelu
t() {
  if [ $(el) -ge 160 ]; then echo "skipped (time): $*"; return; fi
  timeout 35 "$@" --time --time-kinds all > /tmp/chk/t.log 2>&1; echo "exit=$?"
  grep -h "ERROR\|note:" /tmp/chk/t.log | head -5; sed -n '/== summary/,$p' /tmp/chk/t.log
}
{
echo "## C1 4096x4096x128"; t $B --configs 256x128s3c2,128x128s5c2 --kinds $K3 --shapes 4096x4096x128
echo "## C2 4096^3"; t $B --configs 128x256s4c2,128x256s4c2x2 --kinds $K3 --shapes 4096x4096x4096
echo "## C3 1024^3"; t $B --configs 64x128s8c1,128x64s8c2 --kinds $K3 --shapes 1024x1024x1024
echo "## C4 cp.async 3000x5000x700 (704: TMA)"; t $B --configs 128x256s4c2,128x192s4c2,256x128s4c2,128x128s5c2,64x256s5c1 --kinds f16.rc,f16.rc.bias_relu --shapes 3000x5000x700,3000x5000x704
echo "## C5 gelu tanh.approx"; t $B --define CG_GELU_TANH=1 --configs 256x128s3c2,128x256s4c2 --kinds f16.rc.bias_gelu --shapes 4096x4096x128,4096x4096x4096
echo "## C6 prelude math (CG_FAST_MATH 0)"; t $B --define CG_FAST_MATH=0 --configs 256x128s3c2,128x256s4c2 --kinds f16.rc.bias_gelu --shapes 4096x4096x128,4096x4096x4096
echo "## C7 before (run-4 binary) / after, bf16 bias_relu"; t $OLD --configs 256x128s4c2,128x256s4c2 --kinds bf16.rc.bias_relu --shapes 4096x4096x128,4096x4096x4096
t $B --configs 256x128s4c2,128x256s4c2 --kinds bf16.rc.bias_relu --shapes 4096x4096x128,4096x4096x4096
} > $OUT/timing.log 2>&1
kill $SMI
echo "all done at $(el) s"
cat $OUT/timing.log
