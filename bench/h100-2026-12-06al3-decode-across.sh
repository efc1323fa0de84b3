#!/usr/bin/env bash
# Session al, batch al3: the decode family with its small side stored across (a row-major
# weight W, K x N with N <= 32, turned around: the streamed side is x's K-contiguous rows,
# W's pairs of columns come through `movmatrix.trans`). Runs on an H100 or an H200.
# Binaries: .dev/al3c (the CLI), .dev/al3k (tests/kernels.rs), .dev/al1c (the CLI before,
# 6b865b1). Carry: [".dev/al3c", ".dev/al3k", ".dev/al1c"]. ~8 minutes.
# 1. Correct: every planned across config of three kernels (f16 and bf16 row-major B
#    turned around, f16 column-major A plain) against the host reference, the decode
#    same-bits test (the K-contiguous path's source changed by preprocessor lines only),
#    and memcheck over the across test.
# 2. First calls with the tables left out (each call runs the planner's default), before
#    against after, at N = 1, 8, 16, 32 of x . W (W row-major, `--w-layout row`).
# 3. Full tunes (48 candidates, tables ignored) at 12288x16x4096 and 4096x32x4096, none and
#    bias_relu, beside cuBLAS/cuBLASLt reading the same row-major W.
# Written before: correct everywhere. The decode default reads x (100 MB at 12288x16x4096)
# once at near the decode rows' bandwidth, W (128 KB) from L1/L2: at 12288x16x4096 about
# 31-36 us against 52.6 for the 128x128 wgmma default (al2, H100) and cuBLAS's 47: 1.3-1.5x
# cuBLAS. At N = 1 and 8 the old default was gemv turned around; decode should tie or win
# (decode beat gemv at every decode shape measured with a column-major W).
BATCH=${BATCH:-al3}
B=.dev/al3c
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
K=.dev/al3k/kernels
timeout 200 $K every_planned_decode_config_across decode_configs_give_the_same_bits_twice --test-threads 1 > $R/kernels.log 2>&1; echo "kernels rc=$?"
grep -E "^test |test result" $R/kernels.log
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $K every_planned_decode_config_across --test-threads 1 > $R/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|test result" $R/memcheck.log | tail -3
NO_TABLES=1 DTYPES=f16,bf16 first_calls ".dev/al1c $B" \
  "n16|--shape 12288x16x4096 --w-layout row --epilogues none" \
  "n8|--shape 4096x8x4096 --w-layout row --epilogues none" \
  "n1|--shape 12288x1x4096 --w-layout row --epilogues none" \
  "n32|--shape 4096x32x4096 --w-layout row --epilogues none"
for s in 12288x16x4096 4096x32x4096; do
  timeout 100 $B/crossgemm bench --cache-dir /tmp/cg-$BATCH-t --shape $s --w-layout row --dtypes f16 --epilogues none,bias_relu --max 48 --out $R --name tune-$s > $R/tune-$s.log 2>&1; echo "tune $s rc=$?"
  grep -E "^\| [0-9]+x" $R/tune-$s.md | head -2 | cut -d'|' -f2-10,17
done
finish
