#!/usr/bin/env bash
# Session ad, batch ad1 (.dev/ab1s, built at 7898c0f): where a staged call's time goes.
# ab1's first-call table (bench/results/h200-2026-12-05ab1) timed 3000x5000x700 f16 at
# 74.3 / 130.9 / 195.6 us (none / bias_relu / bias_gelu) with one config, whose kernel
# alone takes ~41 us in a tune (aa3): K = 700 makes A's and B's rows 1400 bytes, so each
# call stages both (two driver 2-D copies into 1408-byte rows of scratch allocated with
# cuMemAllocAsync and freed in stream order). Batch q5 saw 59-127 us on the same row.
# The scratch is not remapped per call any more: the default pool keeps 256 MiB of freed
# memory since 272286b (02a: staged 69.9 -> 59.8 us). Hypothesis (written before): the
# driver's 2-D copies of 1400-byte rows (3000 of A, 5000 of B) run on a copy engine at a
# fraction of the device-to-device bandwidth and their time varies from call to call;
# nsys shows the kernel at ~41 us in every call and the two copies taking the other
# 20-150 us. Beside it, the same rows with CROSSGEMM_STAGE=never (the kernels' element
# loads on the rows where they lie), which q5 did not time.
B=.dev/ab1s
source bench/lib.sh ad1
unset CROSSGEMM_IGNORE_TABLES
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
S="--shape 3000x5000x700 --dtypes f16 --epilogues none,bias_relu,bias_gelu"
for i in 1 2; do
  timeout 60 $B/crossgemm bench --first-call $S --cache-dir /tmp/cg-ad1 --out $R --name first-$i > $R/first-$i.log 2>&1; echo "first $i rc=$?"
  python3 bench/rows.py $R/first-$i.json
done
CROSSGEMM_STAGE=never timeout 60 $B/crossgemm bench --first-call $S --cache-dir /tmp/cg-ad1 --out $R --name never > $R/never.log 2>&1; echo "never rc=$?"
python3 bench/rows.py $R/never.json
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
