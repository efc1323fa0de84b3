#!/usr/bin/env bash
# Session an, batch an1: the decode family in tf32 (`acc = tf32`: m16n8k8 swap-AB,
# fragments straight from global memory, 16-k chunks; a row-major W read across element
# by element) against the head before it (7257b9c), where tf32 calls of few rows ran the
# 64x64 wgmma or mma.sync tiles (16x4096x4096: 36.0 µs on the H200, 0.81x cuBLAS's tf32
# GEMM), gemv turned around (f32 FMA) at few columns, and mma.sync 64x64 with a row-major
# W of 9-16 columns (0.38-0.51x on an H100, batch am1/am6).
# Correct on CUDA first (every planned tf32 decode config: K-contiguous in both forms, and
# across: a row-major B turned around, a column-major A; memcheck), then first calls
# without the shipped tables (the planners' defaults), old and new alternating over two
# rounds, and a tune of 16x4096x4096 tf32 (which decode config wins).
# Binaries: .dev/an0c (7257b9c), .dev/an1c (the tf32 decode), .dev/an1k (tests/kernels.rs
# at an1). Carry: [".dev/an0c", ".dev/an1c", ".dev/an1k"]. ~7 minutes.
# Written before: the decode rows stream B (or A turned around) at the f16 rows' rate per
# byte: 64 MB of f32 at 16x4096x4096 in about 2x the f16 row's time (f16: 19.6 µs on an
# H100 at 16 rows), so ~25-30 µs against cuBLAS tf32's ~40: 1.3-1.6x; at 1 row, gemv's
# f32 FMA was already reading at the copy rate, so decode ties it there; a row-major W
# of 9-16 columns 0.4-0.5x -> above 1.0x.
BATCH=${BATCH:-an1}
B=.dev/an1c
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
K=.dev/an1k/kernels
timeout 150 $K every_planned_decode_config_across --test-threads 1 > $R/kernels-across.log 2>&1; echo "kernels across rc=$?"
CROSSGEMM_TEST_CONFIGS=decode timeout 150 $K every_planned_config_bf16_f32 --test-threads 1 > $R/kernels-tf32.log 2>&1; echo "kernels tf32 decode rc=$?"
timeout 100 $K decode_configs_give_the_same_bits_twice --test-threads 1 > $R/kernels-bits.log 2>&1; echo "kernels bits rc=$?"
grep -hE "^test |test result" $R/kernels-across.log $R/kernels-tf32.log $R/kernels-bits.log
NO_TABLES=1 DTYPES=tf32 ROWS=2 first_calls ".dev/an0c $B" \
  "c16|--shape 16x4096x4096 --epilogues none,bias_relu" \
  "c1|--shape 1x12288x4096 --epilogues none" \
  "c8|--shape 8x4096x4096 --epilogues none" \
  "c32|--shape 32x4096x4096 --epilogues none" \
  "c16l|--shape 16x12288x4096 --epilogues none" \
  "t8|--shape 4096x8x4096 --epilogues none" \
  "r16|--shape 4096x16x4096 --w-layout row --epilogues none" \
  "r8|--shape 4096x8x4096 --w-layout row --epilogues none" \
  "r1|--shape 12288x1x4096 --w-layout row --epilogues none" \
  "r16l|--shape 12288x16x4096 --w-layout row --epilogues none"
export CROSSGEMM_IGNORE_TABLES=1
timeout 120 $B/crossgemm tune --shape 16x4096x4096 --dtype tf32 --epilogue none --json --cache-dir /tmp/cg-$BATCH-tune > $R/tune-16x4096x4096.json 2> $R/tune-16x4096x4096.err
python3 bench/tune_summary.py "tf32 16x4096x4096 tuned" $R/tune-16x4096x4096.json
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $K every_planned_decode_config_across --test-threads 1 > $R/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|test result" $R/memcheck.log | tail -3
finish
