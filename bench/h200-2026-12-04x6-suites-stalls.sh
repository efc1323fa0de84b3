#!/usr/bin/env bash
# Session x, batch x6 (.dev/x6s: the CLI and the batched and views suites of
# scripts/dev-build.sh at 0000a63).
# 1. The batched suite with its new shapes of few columns (every planned config of a
#    row-major/column-major kernel on batches of 3, B broadcast and batched: the decode
#    and gemv families' turned-around configs on CUDA), and the views suite.
#    Written before: both pass (PoCL ran them here; the CUDA forms share the view prologue
#    and batch grid with the plain ones).
# 2. Batch v8's question again with the stall metrics it lacked: what the plain
#    4096x4096x128 winner's warps wait on (Nsight Compute, per-issue stall reasons).
#    Written before: if long-scoreboard/LG-throttle stalls (global stores, loads) lead,
#    more warps storing is the lever; if barrier or membar stalls (the ping-pong turn, the
#    epilogue's named barriers), the schedule is.
B=.dev/x6s
source bench/lib.sh x6
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
timeout 150 $B/batched --test-threads 8 > $R/batched.log 2>&1; echo "batched rc=$?"
grep -hE "test result|panicked" $R/batched.log | head -3
timeout 100 $B/views --test-threads 8 > $R/views.log 2>&1; echo "views rc=$?"
grep -hE "test result|panicked" $R/views.log | head -3
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
C=$(cfg 64 128 128 6 2 false 1 ',"pingpong":true')
timeout 120 $NCU --clock-control none --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" -k regex:cg_gemm_f16_none -c 1 \
  $B/crossgemm diagnose --cache-dir /tmp/cg-x6 --shape 4096x4096x128 --dtype f16 --epilogue none --config "$C" > $R/ncu-stalls.txt 2>&1
echo "ncu rc=$?"
grep -E "stalled" $R/ncu-stalls.txt | sort -k3 -g -r | head -12
timeout 120 $NCU --clock-control none --section WarpStateStats --print-details all -k regex:cg_gemm_f16_none -c 1 \
  $B/crossgemm diagnose --cache-dir /tmp/cg-x6b --shape 4096x4096x128 --dtype f16 --epilogue none --config "$C" > $R/ncu-warpstate.txt 2>&1
echo "ncu warpstate rc=$?"
sed -n '/Warp State Statistics/,$p' $R/ncu-warpstate.txt | head -40
finish
