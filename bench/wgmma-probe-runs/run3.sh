#!/bin/bash
# Device run 3: correctness of every config with the new defaults, then timing with ours and
# cuBLAS alternating run by run (all configs on bf16/f16 TN; all layouts on 3 configs).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
B=./.dev/wgmma_probe
CFGS="128x256s4c2 128x256s4c2w1 128x256s4c2d 128x256s4c2x2 128x256s4c2g16 128x256s4c2g4 128x256s4c2x2g16 128x256s3c2 256x128s4c2 256x128s4c2x2 128x192s4c2 128x128s6c2 128x128s6c2x2 128x128s6c1 64x256s5c1 64x128s8c1 64x128s8c1d 64x64s10c1"
T0=$(date +%s)
mkdir -p /tmp/chk
for c in $CFGS; do
  ( timeout 60 $B --configs $c --shapes tiny,mid > /tmp/chk/$c.log 2>&1; echo "exit=$?" >> /tmp/chk/$c.log ) &
done
wait
for c in $CFGS; do echo "=== $c"; cat /tmp/chk/$c.log; done > $OUT/check.log
echo "check done in $(( $(date +%s) - T0 )) s; rows: $(grep -c ' same$' $OUT/check.log) ok"
grep -h "FAIL\|HANG\|ERROR\|DIFF\|exit=" $OUT/check.log | sort | uniq -c | head -40
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 500 > $OUT/clocks.txt 2>&1 &
SMI=$!
T1=$(date +%s)
timeout 100 $B --configs all --kinds bf16.rc,f16.rc --shapes big,mid --time --variants > $OUT/time.log 2>&1
echo "time exit=$? in $(( $(date +%s) - T1 )) s"
T2=$(date +%s)
timeout 60 $B --configs 128x256s4c2,128x256s4c2x2,64x128s8c1 --shapes 4096x4096x4096,8192x8192x8192,2048x2048x2048 --time --time-kinds all > $OUT/time_kinds.log 2>&1
echo "time kinds exit=$? in $(( $(date +%s) - T2 )) s"
kill $SMI
T3=$(date +%s)
( timeout 30 compute-sanitizer --tool memcheck $B --configs 128x256s4c2,64x128s8c1 --kinds bf16.rc,bf16.cr,f16.rc.f32col,bf16.rc.bias_relu --shapes tiny ;
  echo "memcheck exit=$?" ) > $OUT/sanitizer.log 2>&1
echo "sanitizers in $(( $(date +%s) - T3 )) s"
grep -h "exit=\|ERROR SUMMARY" $OUT/sanitizer.log
sed -n '/== summary/,$p' $OUT/time.log | grep -E "4096x4096x4096|8192x8192x8192" | head -60
sed -n '/== summary/,$p' $OUT/time_kinds.log | head -60
