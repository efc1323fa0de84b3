#!/usr/bin/env bash
# Session w, batch w1 (.dev/w1: scripts/dev-build.sh at bf92432, the overlapped-epilogue commit;
# the code was reverted after this run: apply results/h200-2026-12-04w1/cg-overlap.patch to bf92432^
# to rebuild it).
# The overlapped cooperative schedule (CG_OVERLAP, gemm-core/src/family/wgmma/overlap.rs):
# each consumer keeps two sets of accumulators and writes the previous tile's output
# while the next tile's first k-tile is on the tensor cores (SASS checked here: HGMMA,
# then the epilogue's STSM/STG, then the wait). Switched per process with
# CROSSGEMM_EXP_DEFINES (configs it does not apply to ignore it).
# Written before: 4096x4096x128's consumers wait on their stores (store-bound, batch q4)
# and the cooperative 128x128 tile ran MMAs and stores one after the other (18.5 us against
# ping-pong's 16.6 in 03c's diagnose). Overlapped, both consumers store at once (two
# warpgroups write faster than one, p1) with the MMAs hidden: the cooperative 128x128 tiles
# should drop 15-25% (to ~14-15 us, below the ping-pong winner's ~15.8) at
# 4096x4096x128 none and bias_relu; 1000^3 (16 k-tiles, only the first overlapped) within
# ~3%. Correctness: the kernels and batched suites with CG_OVERLAP=1 on every process-wide
# compile (every cooperative config of at most 64 accumulators a thread overlapped).
B=${B:-.dev/w1}
source bench/lib.sh w1
t() { CROSSGEMM_EXP_DEFINES=CG_OVERLAP=1 CROSSGEMM_CACHE_DIR=/tmp/cg-w1-$1 timeout $2 $B/$1 --test-threads 8 > $R/$1-ovl.log 2>&1; echo "$1 (CG_OVERLAP=1) rc=$?"; grep -hE "test result|panicked" $R/$1-ovl.log | head -4; }
t batched 90
t kernels 200
P=',"pingpong":true'
V="CG_OVERLAP=0 CG_OVERLAP=1"
C64=$(cfg 64 128 128 6 2 false)
C128=$(cfg 128 128 128 3 2 false)
alternate CROSSGEMM_EXP_DEFINES "$V" ovl 4096x4096x128 "$C64" "$C128" "$(cfg 64 128 128 6 2 false 1 "$P")"
EPI=bias_relu alternate CROSSGEMM_EXP_DEFINES "$V" ovl 4096x4096x128 "$C64" "$C128" "$(cfg 128 64 128 4 3 false 1 "$P")"
alternate CROSSGEMM_EXP_DEFINES "$V" ovl 8192x8192x128 "$C64" "$C128" "$(cfg 64 128 128 6 2 false 1 "$P")"
alternate CROSSGEMM_EXP_DEFINES "$V" ovl 1000x1000x1000 "$C64" "$(cfg 64 128 128 5 2 false)"
EPI=bias_relu alternate CROSSGEMM_EXP_DEFINES "$V" ovl 4100x4000x136 "$C64" "$C128"
finish
