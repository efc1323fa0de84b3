#!/usr/bin/env bash
# Session ao, batch ao1: the decode_n family in tf32 (`acc = tf32`: m16n8k8 swap-AB on
# 8-byte shared loads from each warp's cp.async ring, 16-k chunks of 64 bytes a row of X,
# W's tile rows of 256 bytes), for a row-major W at 1-32 rows. Before it those calls ran
# mma.sync 64x64 (0.37-0.44x cuBLAS's tf32 GEMM at 16x4096x4096 on an H100, batch an3),
# gemv_n at one row, and the decode form streaming W across (0a33f62, .dev/an5c, never
# timed without its L2 prefetch; with it 0.52-0.59x at 16-32 rows, an4).
# Correct on CUDA first (every planned tf32 decode_n config, with f16 and bf16 again
# after the source's restructure; memcheck on the 16-row configs), then first calls
# without the shipped tables (the planner's defaults), old and new alternating over two
# rounds (f16 too: its source moved into per-width blocks, the SASS differs by a few
# integer ops). Cut to fit about 5 minutes beside batch ao2 (device starts failed for
# an hour).
# Binaries: .dev/an1c (ba7926c: the defaults before), .dev/an5c (0a33f62: decode
# streaming W across), .dev/ao2c (the tf32 decode_n, and operand reuse for batch ao2), .dev/ao2k (tests/kernels.rs at ao2).
# Carry: [".dev/an1c", ".dev/an5c", ".dev/ao2c", ".dev/ao2k"]. ~5 minutes.
# Written before: decode_n streams W's rows at the 16-bit rows' rate per byte (f16 8 and
# 16 rows of 4096x4096 19-20 µs on an H100), so tf32's 64 MB in ~32-36 µs against cuBLAS
# tf32's ~39-40 (mma.sync 64x64: 89-106): ~1.1x; 32 rows (64 accumulators) a little
# slower; at one row 1x12288x4096 near gemv_n's 78.5 µs (within 5%); f16 unchanged
# (within 1%).
BATCH=${BATCH:-ao1}
B=.dev/ao2c
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
K=.dev/ao2k/kernels
timeout 150 $K every_planned_decode_n_config --test-threads 1 > $R/kernels-decode-n.log 2>&1; echo "kernels decode_n rc=$?"
grep -hE "^test |test result|panicked" $R/kernels-decode-n.log | head -5
NO_TABLES=1 DTYPES=tf32 ROWS=2 first_calls ".dev/an1c $B" \
  "w16|--shape 16x4096x4096 --w-layout row --epilogues none,bias_relu" \
  "w8|--shape 8x4096x4096 --w-layout row --epilogues none" \
  "w32|--shape 32x4096x4096 --w-layout row --epilogues none" \
  "w1|--shape 1x12288x4096 --w-layout row --epilogues none"
NO_TABLES=1 DTYPES=tf32 ROWS=1 first_calls ".dev/an5c" \
  "w16|--shape 16x4096x4096 --w-layout row --epilogues none"
NO_TABLES=1 DTYPES=f16 ROWS=1 first_calls ".dev/an1c $B" \
  "f16|--shape 16x4096x4096 --w-layout row --epilogues none"
CROSSGEMM_TEST_CONFIGS="decode_n rows 16 cols 64 warps 8 stages 4" timeout 80 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $K every_planned_decode_n_config --test-threads 1 > $R/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|test result" $R/memcheck.log | tail -3
finish
