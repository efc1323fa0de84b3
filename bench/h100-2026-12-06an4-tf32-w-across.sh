#!/usr/bin/env bash
# Session an, batch an4: decode's tf32 form that streams the wide side across (a
# row-major W at 8-32 rows, x · W as NumPy stores W; turned around a column-major A),
# against ba7926c (an1), whose tf32 default there was mma.sync 64x64 (16x4096x4096:
# 88.7-106.4 µs, 0.37-0.44x cuBLAS's tf32 GEMM, batch an3).
# Correct on CUDA first (every planned decode config across, tf32's A and B row-major now
# in both forms and both column-major in both; memcheck), then first calls without the
# shipped tables, old and new alternating over two rounds.
# Binaries: .dev/an1c (ba7926c), .dev/an4c (8304e84), .dev/an4k (tests/kernels.rs at
# 8304e84). Carry: [".dev/an1c", ".dev/an4c", ".dev/an4k"]. ~3 minutes (cut to fit the session's last device minutes).
# Written before: the rows stream W's 16-byte pieces of 4 rows a lane (whole 128-byte
# lines a warp) at about the K-contiguous form's rate: 16x4096x4096 30-35 µs (1.1-1.3x,
# from 0.37-0.44x), 16x12288x4096 ~80 (1.0x); one row near gemv_n's.
BATCH=${BATCH:-an4}
B=.dev/an4c
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
K=.dev/an4k/kernels
timeout 150 $K every_planned_decode_config_across --test-threads 1 > $R/kernels-across.log 2>&1; echo "kernels across rc=$?"
grep -hE "^test |test result|panicked" $R/kernels-across.log | head -8
NO_TABLES=1 DTYPES=tf32 ROWS=1 first_calls ".dev/an1c $B" \
  "w16|--shape 16x4096x4096 --w-layout row --epilogues none,bias_relu" \
  "w32|--shape 32x4096x4096 --w-layout row --epilogues none" \
  "w1|--shape 1x12288x4096 --w-layout row --epilogues none" \
  "w16l|--shape 16x12288x4096 --w-layout row --epilogues none"
timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $K every_planned_decode_config_across --test-threads 1 > $R/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|test result" $R/memcheck.log | tail -3
finish
