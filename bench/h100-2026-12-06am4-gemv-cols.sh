#!/usr/bin/env bash
# Session am, batch am4: e515fcc against 191f02b (am3's interleaved walk): the interleaved
# walk for MR = 8 only (am3: MR 4 and 1 lost 9-15% with it) and f32's turned-around MR = 8
# configs with 2 columns (the register rule now counts X's chunk as 4 floats a row in f32,
# not 8). Correct on CUDA (every planned gemv config across, f32's gemv configs, the
# bit-for-bit repeat; memcheck), first calls of f32 and tf32 with a row-major W (N = 8, 6,
# 4, 1) and a column-major W (N = 8: the K-contiguous turned form takes 2 columns too),
# alternating over two rounds, and f32 row-W 4096x8x4096 under MR = 8 with 1, 2 and 3
# columns side by side.
# Binaries: .dev/am3c (191f02b), .dev/am4c (e515fcc), .dev/am4k (tests/kernels.rs at
# e515fcc). Carry: [".dev/am3c", ".dev/am4c", ".dev/am4k"]. ~6 minutes on an H100.
# Written before: N = 4 and 1 back to am2's 81 and 83 µs; N = 8 and 6 with 2 columns
# 10-25% faster than am3's 45.5 and 41.9 (X's loads a W column halved); col-W N = 8 within
# +-5% (its X loads are K-contiguous 16-byte chunks, a small share of the step).
BATCH=${BATCH:-am4}
B=.dev/am4c
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
K=.dev/am4k/kernels
timeout 100 $K every_planned_gemv_config_across --test-threads 1 > $R/kernels.log 2>&1; echo "kernels rc=$?"
timeout 60 $K gemv_configs_give_the_same_bits_twice --test-threads 1 > $R/kernels-bits.log 2>&1; echo "kernels bits rc=$?"
CROSSGEMM_TEST_CONFIGS=gemv timeout 100 $K every_planned_config_bf16_f32 --test-threads 1 > $R/kernels-f32.log 2>&1; echo "kernels f32 gemv rc=$?"
grep -hE "^test |test result" $R/kernels.log $R/kernels-bits.log $R/kernels-f32.log
NO_TABLES=1 DTYPES=f32,tf32 ROWS=2 first_calls ".dev/am3c $B" \
  "n8|--shape 4096x8x4096 --w-layout row --epilogues none" \
  "n6|--shape 4096x6x4096 --w-layout row --epilogues none" \
  "n4|--shape 12288x4x4096 --w-layout row --epilogues none" \
  "n1|--shape 12288x1x4096 --w-layout row --epilogues none" \
  "c8|--shape 4096x8x4096 --epilogues none"
export CROSSGEMM_IGNORE_TABLES=1
g() { echo "{\"family\":\"gemv\",\"mr\":8,\"warps\":8,\"cols\":$1,\"ksplit\":1,\"swap\":true}"; }
for round in 1 2; do
  timeout 60 $B/crossgemm tune --shape 4096x8x4096 --dtype f32 --epilogue none --w-layout row --json \
    --cache-dir /tmp/cg-$BATCH-c-$round --config "$(g 1)" --config "$(g 2)" --config "$(g 3)" > $R/tune-cols-$round.json 2> $R/tune-cols-$round.err
  python3 bench/tune_summary.py "f32 row-W 4096x8x4096 MR 8 cols 1-3, round $round" $R/tune-cols-$round.json
done
timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $K every_planned_gemv_config_across --test-threads 1 > $R/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|test result" $R/memcheck.log | tail -3
finish
