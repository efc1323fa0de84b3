#!/usr/bin/env bash
# Session al, batch al7: the decode family's K-contiguous path (a column-major W) after the
# across change, whose source adds preprocessor lines only there: first calls with the
# shipped tables at the decode rows, 6b865b1 (.dev/al1c) against fef2496 (.dev/al6c),
# alternating (`first_calls`). Runs on an H100 or an H200. Carry: [".dev/al6c",
# ".dev/al1c"]. ~2 minutes.
# Written before: every row within 2% of its time before.
BATCH=${BATCH:-al7}
B=.dev/al6c
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
DTYPES=f16,bf16 ROWS=2 first_calls ".dev/al1c $B" \
  "m16|--shape 16x4096x4096 --epilogues none" \
  "m1|--shape 1x12288x4096 --epilogues none" \
  "n8|--shape 4096x8x4096 --epilogues none"
finish
