#!/usr/bin/env bash
# Session am, batch am6: gemv with 16 rows where the small side is stored across in f32
# (0aa71c7: f32 and tf32 with a row-major W of 9-16 columns, whose defaults were simt's
# 32x16 tile with K in 8 and mma.sync's 64x64), against e515fcc (am4). Correct on CUDA
# (f32's gemv configs, 16 rows among them; the across kernels; memcheck of the 16-row
# configs), then first calls of f32 and tf32 with a row-major W, alternating over two
# rounds: 9-16 columns (new default) and 8 and 1 (the 1-row walk's addressing changed:
# should not move).
# Binaries: .dev/am4c (e515fcc), .dev/am6c (0aa71c7), .dev/am6k (tests/kernels.rs at
# 0aa71c7). Carry: [".dev/am4c", ".dev/am6c", ".dev/am6k"]. ~6 minutes on an H100.
# Written before (am1, H100): 4096x16x4096 f32 53.9 µs (simt, 0.99x cuBLAS), tf32 78.1
# (mma 64x64, 0.51x). With 16 rows, X's rows 64 bytes a k (4 vectors), 1 column: 35-45
# µs (1.2-1.5x f32; tf32 0.9-1.1x against cuBLAS's 39.5); 12288x16x4096 ~95-110 µs; 8
# and 1 column within 2% of am4.
BATCH=${BATCH:-am6}
B=.dev/am6c
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
K=.dev/am6k/kernels
CROSSGEMM_TEST_CONFIGS=gemv timeout 100 $K every_planned_config_bf16_f32 --test-threads 1 > $R/kernels-f32.log 2>&1; echo "kernels f32 gemv rc=$?"
timeout 100 $K every_planned_gemv_config_across gemv_configs_give_the_same_bits_twice --test-threads 1 > $R/kernels.log 2>&1; echo "kernels rc=$?"
grep -hE "^test |test result" $R/kernels-f32.log $R/kernels.log
CROSSGEMM_TEST_CONFIGS="N <= 16" timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $K every_planned_config_bf16_f32 --test-threads 1 > $R/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|test result" $R/memcheck.log | tail -3
NO_TABLES=1 DTYPES=f32,tf32 ROWS=2 first_calls ".dev/am4c $B" \
  "n16|--shape 4096x16x4096 --w-layout row --epilogues none" \
  "n12|--shape 4096x12x4096 --w-layout row --epilogues none" \
  "l16|--shape 12288x16x4096 --w-layout row --epilogues none" \
  "n8|--shape 4096x8x4096 --w-layout row --epilogues none" \
  "n1|--shape 12288x1x4096 --w-layout row --epilogues none"
finish
