#!/usr/bin/env bash
# Session ad, batch ad2: staging's rows copied by crossgemm's kernel (row_copy.rs, the new
# default) against the driver's 2-D copy (CROSSGEMM_ROW_COPY=driver), in one binary.
# Binaries: `scripts/dev-build.sh .dev/ad2` at the commit in COMMIT, carried as .dev/ad2s
# (the CLI gzipped and the test binaries this batch runs).
# Why: ab1's first-call table timed 3000x5000x700 f16 (K = 700: A's and B's 1400-byte rows
# staged into 1408-byte ones) at 74 / 131 / 196 us (none / bias_relu / bias_gelu) where
# the kernel alone takes ~41 us; a K + 3 view of 16x4096x4096 took 65 us staged against
# 15.6 packed (02a). The copies move 11 MB (3000x5000x700) and 32 MB (the view's W) each
# way; a kernel that gives a warp to a row and moves 8-byte (2-byte for K + 3) words
# should take ~7 us and ~25 us, where the driver's copies of narrow misaligned rows are
# slow and vary from call to call.
# Written before: correct (the row-copy unit test on the H200 at every word width, the
# staged suite, memcheck clean); with the kernel 3000x5000x700 at 48-55 us in every
# epilogue (the driver's: 74-196, as ab1), the K + 3 view at 40-45 us (driver ~65).
# Batch ad3 is this script again on `.dev/ad3s` (a warp a segment of a row, 8 loads in
# flight a lane, after ad2's warp a row lost 2x on the K + 3 view): BATCH=ad3.
BATCH=${BATCH:-ad2}
B=.dev/${BATCH}s
source bench/lib.sh $BATCH
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
timeout 60 $B/runtime_tests row_copy > $R/unit.log 2>&1; echo "unit rc=$?"; grep -E "test result|panicked" $R/unit.log | head -3
timeout 120 $B/staged > $R/staged.log 2>&1; echo "staged rc=$?"; grep -E "test result|panicked" $R/staged.log | head -3
timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool memcheck $B/runtime_tests row_copy::tests > $R/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "SUMMARY|test result" $R/memcheck.log | head -3
# First calls on the shipped tables, as a user's program makes them.
unset CROSSGEMM_IGNORE_TABLES
for round in 1 2; do for mode in kernel driver; do
  CROSSGEMM_ROW_COPY=$mode timeout 60 $B/crossgemm bench --first-call --shape 3000x5000x700 --dtypes f16 --epilogues none,bias_relu,bias_gelu --cache-dir /tmp/cg-$BATCH-$mode --out $R --name odd-$mode-$round > $R/odd-$mode-$round.log 2>&1; echo "odd $mode $round rc=$?"
  python3 bench/rows.py $R/odd-$mode-$round.json
  CROSSGEMM_ROW_COPY=$mode timeout 60 $B/crossgemm bench --first-call --pad 3 --shape 16x4096x4096 --dtypes f16 --epilogues none --cache-dir /tmp/cg-$BATCH-$mode --out $R --name pad3-$mode-$round > $R/pad3-$mode-$round.log 2>&1; echo "pad3 $mode $round rc=$?"
  grep "^| 16x4096x4096 | skinny" $R/pad3-$mode-$round.md | cut -d"|" -f4-9
done; done
# Where a staged call's time goes: the GPU's own trace of each mode (nsys, if the machine
# has it): the copies' and the kernel's durations and the gaps between them.
NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys /usr/local/cuda/nsight-systems*/bin/nsys 2>/dev/null | head -1)
echo "nsys: ${NSYS:-none}"
if [ -n "$NSYS" ]; then for mode in kernel driver; do
  CROSSGEMM_ROW_COPY=$mode timeout 120 $NSYS profile -o $R/trace-$mode --force-overwrite true --trace cuda $B/crossgemm bench --first-call --shape 3000x5000x700 --dtypes f16 --epilogues bias_relu --runs 10 --warmup 2 --cache-dir /tmp/cg-$BATCH-$mode --out $R --name nsys-$mode > $R/nsys-$mode.log 2>&1; echo "nsys $mode rc=$?"
  timeout 90 $NSYS stats --report cuda_gpu_kern_sum,cuda_gpu_mem_time_sum --format csv -o $R/stats-$mode $R/trace-$mode.nsys-rep > /dev/null 2>&1
  for f in $R/stats-$mode*.csv; do echo "== $f"; head -8 "$f" | cut -c1-200; done
  timeout 90 $NSYS stats --report cuda_gpu_trace --format csv -o $R/gputrace-$mode $R/trace-$mode.nsys-rep > /dev/null 2>&1
  rm -f $R/trace-$mode.sqlite
done; fi
finish
