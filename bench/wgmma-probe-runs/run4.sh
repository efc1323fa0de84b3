#!/bin/bash
# Device run 4: fuzzed shapes on 7 configs x 8 kinds, memcheck on fuzzed shapes, and the headline
# timings twice more (ours and cuBLAS alternating, 30 reps).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
B=./.dev/wgmma_probe
CFGS="128x256s4c2 128x256s4c2x2 128x256s4c2d 256x128s4c2 128x128s6c1 64x128s8c1 64x64s10c1"
T0=$(date +%s)
mkdir -p /tmp/chk
for c in $CFGS; do
  ( timeout 60 $B --configs $c --fuzz 40 > /tmp/chk/$c.log 2>&1; echo "exit=$?" >> /tmp/chk/$c.log ) &
done
wait
for c in $CFGS; do echo "=== $c"; cat /tmp/chk/$c.log; done > $OUT/fuzz.log
echo "fuzz done in $(( $(date +%s) - T0 )) s; rows: $(grep -c ' same$' $OUT/fuzz.log) ok, $(grep -c 'skipped' $OUT/fuzz.log) skipped"
grep -h "FAIL\|HANG\|ERROR\|DIFF\|exit=" $OUT/fuzz.log | sort | uniq -c | head -40
T1=$(date +%s)
( timeout 40 compute-sanitizer --tool memcheck $B --configs 128x256s4c2x2,64x64s10c1 --kinds bf16.rc,bf16.cc,f16.rr,bf16.rc.bias_relu --fuzz 6 ;
  echo "memcheck exit=$?" ) > $OUT/sanitizer.log 2>&1
echo "memcheck in $(( $(date +%s) - T1 )) s"
grep -h "exit=\|ERROR SUMMARY" $OUT/sanitizer.log
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 500 > $OUT/clocks.txt 2>&1 &
SMI=$!
T2=$(date +%s)
for rep in 1 2; do
  timeout 60 $B --configs 128x256s4c2,128x256s4c2g16,128x256s4c2x2 --kinds bf16.rc,f16.rc --shapes 4096x4096x4096,8192x8192x8192 --time --reps 30 > $OUT/time_$rep.log 2>&1
  echo "time $rep exit=$?"
done
kill $SMI
echo "timing in $(( $(date +%s) - T2 )) s"
for rep in 1 2; do sed -n '/== summary/,$p' $OUT/time_$rep.log; done
