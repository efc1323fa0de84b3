#!/usr/bin/env bash
# Session ap, batch ap1: a row-major W (`x · W`, W stored K×N) in f32 and tf32 with the
# fused epilogues, which the CLI has had since session ap (before, only their plain
# products): first calls with the planner's default (no tables), beside cuBLAS's SGEMM and
# tf32 GEMM plus an elementwise kernel, and cuBLASLt's fused epilogue, reading the same
# buffers; one round each (the first rows' plain product was timed in ao1). Any GPU.
# Binaries: the CLI at the commit in COMMIT (B, default .dev/ap2c). Carry: [B]. ~2 minutes.
# Written before: every output within its limit; tf32 at 8-32 rows on decode_n, the fused
# rows within 1-3% of their plain row's time (ao1: 16x4096x4096 36.1-36.6 µs, 1.06x), so
# 1.2-1.4x cuBLAS with its separate epilogue; f32 at the simt or gemv_n default; one row on
# gemv_n (tf32 77.7 µs at 1x12288x4096 in ao1).
BATCH=${BATCH:-ap1}
B=${B:-.dev/ap2c}
source bench/lib.sh $BATCH
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
S=(--shape 8x4096x4096 --shape 16x4096x4096 --shape 32x4096x4096 --shape 1x12288x4096)
for d in tf32 f32; do
  timeout 150 $B/crossgemm bench --first-call --w-layout row "${S[@]}" --dtypes $d \
    --epilogues none,bias_relu,bias_gelu --cache-dir /tmp/cg-$BATCH-$d --out $R --name row-$d > $R/row-$d.log 2>&1
  echo "bench $d rc=$?"
  python3 bench/rows.py $R/row-$d.json | tail -16
done
finish
