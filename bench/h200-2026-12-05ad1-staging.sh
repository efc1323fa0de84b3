#!/usr/bin/env bash
# Session ad, batch ad1 (.dev/ab1s, built at 7898c0f): where a staged call's time goes.
# ab1's first-call table (bench/results/h200-2026-12-05ab1) timed 3000x5000x700 f16 at
# 74.3 / 130.9 / 195.6 us (none / bias_relu / bias_gelu) with one config, whose kernel
# alone takes ~41 us in a tune (aa3): K = 700 makes A's and B's rows 1400 bytes, so each
# call stages both (two driver 2-D copies into 1408-byte rows of scratch allocated with
# cuMemAllocAsync and freed in stream order). Batch q5 saw 59-127 us on the same row.
# Hypothesis (written before): not the kernel and not the copies' bandwidth (11 MB each
# way, ~7 us) but the scratch: the default memory pool's release threshold is 0, so each
# synchronize between timed runs hands the scratch back to the OS and the next call maps
# it again. nsys shows the kernel at ~41 us and the copies at a few us in every call,
# and the gaps (or a memcpy's time) where the rest goes.
B=.dev/ab1s
source bench/lib.sh ad1
unset CROSSGEMM_IGNORE_TABLES
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
S="--shape 3000x5000x700 --dtypes f16 --epilogues none,bias_relu,bias_gelu"
for i in 1 2; do
  timeout 60 $B/crossgemm bench --first-call $S --cache-dir /tmp/cg-ad1 --out $R --name first-$i > $R/first-$i.log 2>&1; echo "first $i rc=$?"
  python3 bench/rows.py $R/first-$i.json
done
NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys /usr/local/cuda/nsight-systems*/bin/nsys 2>/dev/null | head -1)
echo "nsys: ${NSYS:-none}"
if [ -n "$NSYS" ]; then
  timeout 150 $NSYS profile -o $R/staged --force-overwrite true --trace cuda $B/crossgemm bench --first-call $S --runs 10 --warmup 2 --cache-dir /tmp/cg-ad1 --out $R --name nsys > $R/nsys.log 2>&1; echo "nsys rc=$?"
  timeout 120 $NSYS stats --report cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_api_sum --format csv -o $R/stats $R/staged.nsys-rep > $R/stats.log 2>&1; echo "stats rc=$?"
  for f in $R/stats_*.csv; do echo "== $f"; head -14 "$f" | cut -c1-220; done
  timeout 120 $NSYS stats --report cuda_gpu_trace --format csv -o $R/trace $R/staged.nsys-rep > /dev/null 2>&1
  rm -f $R/staged.sqlite
fi
finish
