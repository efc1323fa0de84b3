#!/bin/bash
# Device run 1: correctness of every config (one process each, in parallel), then timing, then sanitizers.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
B=./.dev/wgmma_probe
CFGS="128x256s4c2 128x256s3c2 128x256s4c2g16 128x256s4c2x2 128x256s4c2x2g16 256x128s4c2 128x192s4c2 128x128s6c2 128x128s6c2x2 128x128s6c1 64x256s5c1 64x128s8c1"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/smi.txt 2>&1
T0=$(date +%s)
mkdir -p /tmp/chk
for c in $CFGS; do
  ( timeout 70 $B --configs $c --shapes tiny,mid > /tmp/chk/$c.log 2>&1; echo "exit=$?" >> /tmp/chk/$c.log ) &
done
wait
for c in $CFGS; do echo "=== $c"; cat /tmp/chk/$c.log; done > $OUT/check.log
echo "check done in $(( $(date +%s) - T0 )) s"
grep -h "FAIL\|HANG\|ERROR\|exit=" $OUT/check.log | sort | uniq -c | head -40
T1=$(date +%s)
timeout 90 $B --configs all --kinds bf16.rc,f16.rc --shapes big,mid --time --variants > $OUT/time.log 2>&1
echo "time exit=$? in $(( $(date +%s) - T1 )) s"
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv >> $OUT/smi.txt 2>&1
T2=$(date +%s)
( timeout 25 compute-sanitizer --tool memcheck $B --configs 128x256s4c2,128x256s4c2x2 --kinds bf16.rc,bf16.rr --shapes tiny ;
  echo "memcheck exit=$?" ) > $OUT/sanitizer.log 2>&1
( timeout 20 compute-sanitizer --tool racecheck $B --configs 128x256s4c2 --kinds bf16.rc --shapes 65x130x72 ;
  echo "racecheck exit=$?" ) >> $OUT/sanitizer.log 2>&1
( timeout 20 compute-sanitizer --tool synccheck $B --configs 128x256s4c2x2 --kinds bf16.rc --shapes 65x130x72 ;
  echo "synccheck exit=$?" ) >> $OUT/sanitizer.log 2>&1
echo "sanitizers in $(( $(date +%s) - T2 )) s"
grep -h "exit=\|ERROR SUMMARY\|RACECHECK SUMMARY" $OUT/sanitizer.log
sed -n '/== summary/,$p' $OUT/time.log
