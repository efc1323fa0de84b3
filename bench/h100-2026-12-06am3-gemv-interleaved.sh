#!/usr/bin/env bash
# Session am, batch am3: gemv with a small side stored across, its step's k's interleaved
# over the lanes by 4-byte words (W's loads whole 128-byte lines, X's rows at a load's k's
# consecutive across the warp) against am2's vectors (a lane's CG_VEC consecutive k's,
# each lane of a load on a line of its own) and the element loads before both. Correct on
# CUDA (every planned gemv config across, the bit-for-bit repeat, f32's gemv configs;
# memcheck), first calls with a row-major W (f32 and tf32: the planner's default is gemv
# turned around at N <= 8; 6 and 5 columns: vectors of 2 and of 1), the three builds
# alternating over two rounds, and tunes of f32 (4096x8x4096) and f16 (4096x8x4096, where
# decode is the default) listing every candidate.
# Binaries: .dev/am1c (5969443, element loads), .dev/am2c (vectors), .dev/am3c
# (interleaved), .dev/am3k (tests/kernels.rs at am3c). Carry: [".dev/am1c", ".dev/am2c",
# ".dev/am3c", ".dev/am3k"]. ~8 minutes on an H100.
# Written before (am2, H100): 4096x8x4096 f32 142 µs with vectors (simt's best 53, cuBLAS
# 53): X's L1 wavefronts a step 8 loads x 32 lines -> 8 x 8, W's 4 x 1 line: 2-3x faster,
# 50-70 µs; 12288x4x4096 (81 µs, 2.5 TB/s, near the stream) and 12288x2x4096 within 5%;
# 12288x1x4096 (X one element a k) within 5%.
BATCH=${BATCH:-am3}
B=.dev/am3c
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
K=.dev/am3k/kernels
timeout 120 $K every_planned_gemv_config_across --test-threads 1 > $R/kernels.log 2>&1; echo "kernels rc=$?"
timeout 60 $K gemv_configs_give_the_same_bits_twice --test-threads 1 > $R/kernels-bits.log 2>&1; echo "kernels bits rc=$?"
CROSSGEMM_TEST_CONFIGS=gemv timeout 100 $K every_planned_config_bf16_f32 --test-threads 1 > $R/kernels-f32.log 2>&1; echo "kernels f32 gemv rc=$?"
grep -hE "^test |test result" $R/kernels.log $R/kernels-bits.log $R/kernels-f32.log
NO_TABLES=1 DTYPES=f32,tf32 ROWS=2 first_calls ".dev/am1c .dev/am2c $B" \
  "n8|--shape 4096x8x4096 --w-layout row --epilogues none" \
  "n6|--shape 4096x6x4096 --w-layout row --epilogues none" \
  "n5|--shape 4096x5x4096 --w-layout row --epilogues none" \
  "n4|--shape 12288x4x4096 --w-layout row --epilogues none" \
  "n1|--shape 12288x1x4096 --w-layout row --epilogues none"
export CROSSGEMM_IGNORE_TABLES=1
for dt in f32 f16; do
  s=4096x8x4096
  timeout 100 $B/crossgemm tune --shape $s --dtype $dt --epilogue none --w-layout row --max 48 --json \
    --cache-dir /tmp/cg-$BATCH-t-$dt > $R/tune-$dt-$s.json 2> $R/tune-$dt-$s.err; echo "tune $dt $s rc=$?"
  python3 bench/tune_summary.py "$dt row-W $s" $R/tune-$dt-$s.json | cut -c1-900
done
timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $K every_planned_gemv_config_across --test-threads 1 > $R/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|test result" $R/memcheck.log | tail -3
finish
