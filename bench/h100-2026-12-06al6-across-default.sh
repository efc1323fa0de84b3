#!/usr/bin/env bash
# Session al, batch al6: the across decode's final default (16 rows a block, the rotated
# walk first: batch al5) as first calls, against 6b865b1 (.dev/al1c): tables left out
# (the planner's default), then the head's calls with the shipped tables (what a user's
# first call runs: a table winner of a far bucket, or the specialist's default). Runs on
# an H100 or an H200. Binaries: .dev/al6c (the CLI at the head), .dev/al1c. Carry:
# [".dev/al6c", ".dev/al1c"]. ~3 minutes.
# Written before (al5): 4096x8x4096 about 19 us (1.09x cuBLAS), 12288x1x4096 about 42.5
# (1.1x), 12288x16x4096 about 45 (1.05x); with the tables the same (the specialist's
# default is kept over a far bucket's wgmma winner).
BATCH=${BATCH:-al6}
B=.dev/al6c
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
CASES=("n16|--shape 12288x16x4096 --w-layout row --epilogues none,bias_relu"
  "n8|--shape 4096x8x4096 --w-layout row --epilogues none"
  "n1|--shape 12288x1x4096 --w-layout row --epilogues none")
NO_TABLES=1 DTYPES=f16,bf16 ROWS=4 first_calls ".dev/al1c $B" "${CASES[@]}"
# The tables' calls in caches of their own (first_calls names them by NAME).
R0=$R N0=$NAME; R=$R/tables NAME=${N0}t; mkdir -p $R
DTYPES=f16 ROWS=2 first_calls "$B" "${CASES[@]}"
R=$R0 NAME=$N0
finish
