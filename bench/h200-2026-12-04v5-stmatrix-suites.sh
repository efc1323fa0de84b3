#!/usr/bin/env bash
# Session v, batch v5 (.dev/v4 again): the CUDA suites with the stmatrix epilogue, on the
# H200 alone (batch v4 ran them on every device and stopped at the machine's PoCL 5.0,
# whose known fault failed the first PoCL shape of most tests, before some CUDA ones
# ran), then memcheck and racecheck on the layouts and epilogue tests (stmatrix writes
# the staging rows that the warp's 16-byte reads take after __syncwarp).
# Written before: every suite passes; the sanitizers report nothing.
B=.dev/v4
source bench/lib.sh v5
for f in $B/*.gz; do [ -e "$f" ] && gunzip -f "$f"; done
export CROSSGEMM_TEST_DEVICES=cuda:0
t() { local n=$1 s=$2; shift 2; CROSSGEMM_CACHE_DIR=/tmp/cg-v5-$n timeout $s $B/$n "$@" --test-threads 8 > $R/$n.log 2>&1; echo "$n rc=$?"; grep -hE "test result|panicked" $R/$n.log | head -4; }
t kernels 200
t epilogue_values 150
t views 90
t batched 90
for tool in memcheck racecheck; do
  CROSSGEMM_CACHE_DIR=/tmp/cg-v5-san timeout 150 compute-sanitizer --tool $tool --print-limit 20 $B/kernels f16_layouts --test-threads 1 > $R/san-$tool.log 2>&1; echo "$tool rc=$?"
  grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|test result" $R/san-$tool.log | head -3
done
finish
