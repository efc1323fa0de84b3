#!/bin/bash
# Device run 2: correctness of every config (parallel processes), timing with cuBLAS per row,
# clocks sampled during timing, ncu on two configs, sanitizers on the new paths.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
B=./.dev/wgmma_probe
CFGS="128x256s4c2 128x256s4c2w0 128x256s4c2e 128x256s4c2w0e 128x256s4c2x2 128x256s4c2x2w0e 128x256s4c2x2e 128x256s3c2 128x256s4c2g16 256x128s4c2 256x128s4c2w0e 128x192s4c2 128x128s6c2 128x128s6c2w0e 128x128s6c2x2 128x128s6c1 64x256s5c1 64x128s8c1 64x128s8c1w0e"
T0=$(date +%s)
mkdir -p /tmp/chk
for c in $CFGS; do
  ( timeout 60 $B --configs $c --shapes tiny,mid > /tmp/chk/$c.log 2>&1; echo "exit=$?" >> /tmp/chk/$c.log ) &
done
wait
for c in $CFGS; do echo "=== $c"; cat /tmp/chk/$c.log; done > $OUT/check.log
echo "check done in $(( $(date +%s) - T0 )) s; rows: $(grep -c ' same$' $OUT/check.log) ok"
grep -h "FAIL\|HANG\|ERROR\|DIFF\|exit=" $OUT/check.log | sort | uniq -c | head -40
T1=$(date +%s)
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 500 > $OUT/clocks.txt 2>&1 &
SMI=$!
timeout 110 $B --configs all --kinds bf16.rc,f16.rc --shapes big,mid --time --variants > $OUT/time.log 2>&1
echo "time exit=$? in $(( $(date +%s) - T1 )) s"
kill $SMI
T2=$(date +%s)
( for c in 128x256s4c2 128x256s4c2w0e; do
    timeout 40 ncu --clock-control none --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats -k regex:cg_wg -c 1 $B --configs $c --kinds bf16.rc --shapes 4096x4096x4096 2>&1 | grep -v "^bf16\|built\|^kind"
    echo "ncu $c exit=$?"
  done ) > $OUT/ncu.txt 2>&1
echo "ncu in $(( $(date +%s) - T2 )) s"
T3=$(date +%s)
( timeout 25 compute-sanitizer --tool memcheck $B --configs 128x256s4c2x2w0e,128x256s4c2e --kinds bf16.rc,bf16.rr,bf16.rc.bias_relu --shapes tiny ;
  echo "memcheck exit=$?" ) > $OUT/sanitizer.log 2>&1
( timeout 25 compute-sanitizer --tool racecheck $B --configs 128x256s4c2w0e --kinds bf16.rc --shapes 129x257x136,136x264x8 ;
  echo "racecheck exit=$?" ) >> $OUT/sanitizer.log 2>&1
( timeout 20 compute-sanitizer --tool synccheck $B --configs 128x256s4c2x2w0e --kinds bf16.rc --shapes 129x257x136 ;
  echo "synccheck exit=$?" ) >> $OUT/sanitizer.log 2>&1
echo "sanitizers in $(( $(date +%s) - T3 )) s"
grep -h "exit=\|ERROR SUMMARY\|RACECHECK SUMMARY" $OUT/sanitizer.log
sed -n '/== summary/,$p' $OUT/time.log | grep -E "4096x4096x4096|8192x8192x8192" | head -90
