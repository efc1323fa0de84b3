#!/usr/bin/env bash
# Session ao, batch ao6: one row with a row-major W now goes to gemv_n in every dtype
# (decode_n refuses M = 1 since 9de18b0, after ao1's tf32 row). First calls without the
# tables, 6696118 (decode_n's default at one row) against 9de18b0, f16, bf16 and tf32 at
# 1x12288x4096 and 1x4096x4096, two rounds alternating.
# Binaries: .dev/ao2c (6696118), .dev/ao6c (9de18b0; B names another, later build). Carry:
# [".dev/ao2c", ".dev/ao6c"].
# ~2 minutes.
# Written before: gemv_n 1-5% faster than decode_n in f16 and bf16 (the H200's z3 tunes),
# 4% in tf32 (ao1).
BATCH=${BATCH:-ao6}
B=${B:-.dev/ao6c}
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
NO_TABLES=1 DTYPES=f16,bf16,tf32 ROWS=3 first_calls ".dev/ao2c $B" \
  "r1l|--shape 1x12288x4096 --w-layout row --epilogues none" \
  "r1|--shape 1x4096x4096 --w-layout row --epilogues none"
finish
