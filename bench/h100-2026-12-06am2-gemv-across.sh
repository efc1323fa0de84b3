#!/usr/bin/env bash
# Session am, batch am2: gemv's small side stored across read as vectors (cg_x_across)
# instead of element by element. Correct on CUDA (every planned gemv config across, the
# bit-for-bit repeat, f32's gemv configs; memcheck), then first calls with a row-major W of
# few columns before (.dev/am1c, 5969443's CLI) and after (.dev/am2c), f32 and tf32 (the
# planner's default is gemv turned around at N <= 8), alternating over two rounds; a tune
# of f32 at 4096x8x4096 and 12288x4x4096 (where gemv now ranks among simt's tiles); and
# the f16 first call through NVIDIA's OpenCL, whose default is gemv turned around too.
# Binaries: .dev/am1c, .dev/am2c (the CLI), .dev/am2k (tests/kernels.rs). Carry:
# [".dev/am1c", ".dev/am2c", ".dev/am2k"]. ~7 minutes on an H100.
# Written before (am1, H100, f32: 4096x8x4096 539 µs with gemv MR 8 cols 1, cuBLAS 53;
# 12288x4x4096 128 µs with MR 4, cuBLAS 146; simt's best 53 and 121): MR 8 4-8x faster
# (X's loads per step 32 -> 8 of 16 bytes; each still one line per lane, so L1-bound:
# 70-130 µs, behind simt's 53); MR 4 (16 -> 4 loads) toward W's stream, 128 -> 80-100 µs
# (1.5-1.8x cuBLAS); MR 1 unchanged (one element a k either way).
BATCH=${BATCH:-am2}
B=.dev/am2c
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
K=.dev/am2k/kernels
timeout 120 $K every_planned_gemv_config_across gemv_configs_give_the_same_bits_twice --test-threads 1 > $R/kernels.log 2>&1; echo "kernels rc=$?"
CROSSGEMM_TEST_CONFIGS=gemv timeout 100 $K every_planned_config_bf16_f32 --test-threads 1 > $R/kernels-f32.log 2>&1; echo "kernels f32 gemv rc=$?"
grep -hE "^test |test result" $R/kernels.log $R/kernels-f32.log
NO_TABLES=1 DTYPES=f32,tf32 ROWS=2 first_calls ".dev/am1c $B" \
  "n8|--shape 4096x8x4096 --w-layout row --epilogues none" \
  "n4|--shape 12288x4x4096 --w-layout row --epilogues none" \
  "n2|--shape 12288x2x4096 --w-layout row --epilogues none" \
  "n1|--shape 12288x1x4096 --w-layout row --epilogues none"
export CROSSGEMM_IGNORE_TABLES=1
for s in 4096x8x4096 12288x4x4096; do
  timeout 100 $B/crossgemm tune --shape $s --dtype f32 --epilogue none --w-layout row --max 48 --json \
    --cache-dir /tmp/cg-$BATCH-t > $R/tune-$s.json 2> $R/tune-$s.err; echo "tune $s rc=$?"
  python3 bench/tune_summary.py "f32 row-W $s" $R/tune-$s.json | cut -c1-700
done
for bin in .dev/am1c $B; do
  timeout 60 $bin/crossgemm bench --first-call --device opencl:0:0 --w-layout row --dtypes f16 --epilogues none \
    --shape 4096x8x4096 --shape 12288x4x4096 --cache-dir /tmp/cg-$BATCH-ocl-$(basename $bin) --out $R --name ocl-$(basename $bin) > $R/ocl-$(basename $bin).log 2>&1
  echo "opencl $bin rc=$?"; grep -E "^\| [0-9]+x" $R/ocl-$(basename $bin).md | head -2 | cut -d'|' -f2-10,17
done
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $K every_planned_gemv_config_across --test-threads 1 > $R/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|test result" $R/memcheck.log | tail -3
finish
