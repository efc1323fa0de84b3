#!/usr/bin/env bash
# Session al, batch al2: the planner's default at 12288x16x4096 with a row-major weight
# (`--w-layout row`), which 8eb3e6e's padding-aware block count moved from a 128x256 to a
# 128x128 tile (f16, bf16, tf32: wgmma or mma.sync) and nothing has timed. First calls with
# the tables left out (each call runs the default), the build before 8eb3e6e (.dev/ak4s,
# e2bc4fa) against the head's (.dev/al1c), alternating over two rounds (`first_calls`).
# Runs on an H100 or an H200. Carry: [".dev/al1c", ".dev/ak4s"] (al1c: the CLI of .dev/al1s alone). ~3 minutes.
# Written before: the 128x128 default at least as fast as 128x256: 16 columns fill an
# eighth of either tile's width, and 128x128 makes twice the blocks (96 against 48 on 132
# SMs), so the new default should take 10-40% less time; tf32 likewise.
BATCH=${BATCH:-al2}
B=${B:-.dev/al1c}
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
NO_TABLES=1 DTYPES=f16,bf16,tf32 ROWS=3 first_calls ".dev/ak4s $B" \
  "n16|--shape 12288x16x4096 --w-layout row --epilogues none"
finish
