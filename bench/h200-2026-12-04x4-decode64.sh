#!/usr/bin/env bash
# Session x, batch x4 (.dev/x2s, run right after x3 on the warm machine; results in
# results/h200-2026-12-04x3/decode64/): the decode family's 64-row tiles (planned only
# under `tune(block_m = [64])`) at 64x4096x4096 and, turned around, 4096x64x4096, beside
# the wgmma tile that won both in x3 (64x64x128 ping-pong of two), two processes each.
# Written before: if the 64-row decode tiles stream B (or A) as the 32-row ones do
# (16.2-16.7 us at M or N = 32), they take the rows x3 left at 0.95-0.97x cuBLAS.
B=.dev/x2s
source bench/lib.sh x4
W='{"family":"wgmma","epi_smem":true,"cluster_m":1,"inflight":false,"group_m":8,"bk":128,"bm":64,"bn":64,"stages":6,"consumers":2,"pingpong":true}'
for sw in false true; do
  s=64x4096x4096; [ $sw = true ] && s=4096x64x4096
  for r in 1 2; do
    timeout 60 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --json --cache-dir /tmp/cg-x4-$sw-$r \
      --config "{\"family\":\"decode\",\"mt\":8,\"nt\":1,\"warps\":8,\"kw\":8,\"unroll\":2,\"swap\":$sw}" \
      --config "{\"family\":\"decode\",\"mt\":8,\"nt\":1,\"warps\":4,\"kw\":4,\"unroll\":2,\"swap\":$sw}" \
      --config "{\"family\":\"decode\",\"mt\":8,\"nt\":1,\"warps\":8,\"kw\":8,\"unroll\":1,\"swap\":$sw}" \
      --config "$W" > $R/tune-$s-$r.json 2> $R/tune-$s-$r.err
    echo "rc=$?"; python3 bench/tune_summary.py "$s $r" $R/tune-$s-$r.json
  done
done
finish
