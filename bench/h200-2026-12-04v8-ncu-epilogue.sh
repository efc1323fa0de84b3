#!/usr/bin/env bash
# Session v, batch v8: written, NOT run (the session's device time was spent). Needs a CLI
# at 618335e or later (`scripts/dev-build.sh .dev/v8`, or `cargo build --release --features
# baseline --bin crossgemm` copied to .dev/v8 with its COMMIT).
# What the plain 4096x4096x128 winner (128x128x64 s6 ping-pong) waits on: batch s7 found it
# latency-bound (0.39 eligible warps a scheduler, SMs idle 16-17% of the cycles), q4 put 26%
# of its time in writing the output, and stmatrix (v4) cut the staging writes' instructions
# without moving it. Nsight Compute's warp-state and source counters, with the staging
# written by stmatrix and by 4-byte stores (CROSSGEMM_EXP_DEFINES=CG_STSM=0/1), the first
# launch inside `crossgemm diagnose --config`, clocks left alone.
# Written before: if the consumers wait on their global stores (long scoreboard / LG
# throttle on STG) or on the ping-pong turn barrier, the staging's shared traffic is not the
# path and the next lever is more warps storing (three consumers, as the fused rows) or the
# stores' order; if on the staging's LDS/STS (MIO throttle, short scoreboard), the swizzled
# layout of s8 deserves the profiler's look.
B=${B:-.dev/v8}
source bench/lib.sh v8
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
C=$(cfg 64 128 128 6 2 false 1 ',"pingpong":true')
for v in 0 1; do
  CROSSGEMM_EXP_DEFINES=CG_STSM=$v timeout 150 $NCU --clock-control none --set full -k regex:cg_gemm_f16_none -c 1 \
    $B/crossgemm diagnose --cache-dir /tmp/cg-v8-$v --shape 4096x4096x128 --dtype f16 --epilogue none --config "$C" > $R/ncu-stsm$v.txt 2>&1
  echo "ncu CG_STSM=$v rc=$?"
  grep -E "Duration|SM Active Cycles|Elapsed Cycles|Eligible Warps|Issued Warp|No Eligible|Stall|Warp Cycles Per Issued" $R/ncu-stsm$v.txt | head -16
done
finish
