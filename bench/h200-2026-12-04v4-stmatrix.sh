#!/usr/bin/env bash
# Session v, batch v4 (.dev/v4: the CLI and the CUDA suites with the staged epilogue's
# stmatrix, `CG_STSM`, on by default for 16-bit outputs; CROSSGEMM_EXP_DEFINES=CG_STSM=0
# gives the 4-byte stores with the same binaries).
# Batch s7 found the K = 128 winners latency-bound (0.39 eligible warps a scheduler) with
# the staged epilogue on their path; q4: writing the output costs 4096x4096x128 26% of its
# time. stmatrix writes a warp's 16 x 16 block of the output in one instruction where four
# 4-byte stores did (NVRTC: 104 fewer instructions in the 128x128 ping-pong kernel, no
# spills).
# Written before: 4096x4096x128 (none and bias_relu winners) 1-4% faster with stmatrix, the
# K = 4096 rows within 1%; every suite passes with it (f16/bf16 outputs all take it).
B=.dev/v4
source bench/lib.sh v4
for f in $B/*.gz; do gunzip -f "$f"; done
t() { CROSSGEMM_CACHE_DIR=/tmp/cg-v4-$1 timeout $2 $B/$1 ${3:-} --test-threads 4 > $R/$1${3:+-$3}.log 2>&1; echo "$1 ${3:-} rc=$?"; grep -hE "test result|panicked" $R/$1${3:+-$3}.log | head -4; }
t kernels 200
t epilogue_values 120
t views 100
P=',"pingpong":true'
V="CG_STSM=0 CG_STSM=1"
alternate CROSSGEMM_EXP_DEFINES "$V" stsm 4096x4096x128 "$(cfg 64 128 128 6 2 false 1 "$P")" "$(cfg 128 64 128 4 3 false 1 "$P")" "$(cfg 64 128 256 3 2 false)"
EPI=bias_relu alternate CROSSGEMM_EXP_DEFINES "$V" stsm 4096x4096x128 "$(cfg 128 64 128 4 3 false 1 "$P")" "$(cfg 64 128 128 6 2 false 1 "$P")"
alternate CROSSGEMM_EXP_DEFINES "$V" stsm 1000x1000x1000 "$(cfg 64 128 128 6 2 false)" "$(cfg 64 64 128 6 1 true)"
alternate CROSSGEMM_EXP_DEFINES "$V" stsm 128x12288x4096 "$(cfg 64 128 128 6 2 false)" "$(cfg 64 64 192 6 1 true)"
EPI=bias_gelu alternate CROSSGEMM_EXP_DEFINES "$V" stsm 2048x2048x2048 "$(cfg 64 128 256 4 2 false)" "$(cfg 64 256 128 4 2 false)"
finish
