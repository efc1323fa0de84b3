#!/usr/bin/env bash
# Session v, batch v7 (.dev/v6: the CLI at 5f61f01, with the stmatrix epilogue; the head's
# kernels compile to the same SASS).
# Issue 10's rows in f16 and bf16 from one run (its "done" asks both), full tunes,
# --against batch s6 (the last run with both).
# Written before: as v6 for f16 (4096x4096x128 bias_relu ~5% faster than s6, the rest
# within 5%), bf16 likewise.
B=.dev/v6
source bench/lib.sh v7
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
S="--shape 16x4096x4096 --shape 128x8192x8192 --shape 4096x4096x128 --shape 1000x1000x1000 --shape 3000x5000x700 --shape 1x12288x4096 --shape 16x12288x4096 --shape 128x12288x4096"
timeout 200 $B/crossgemm bench $S --cache-dir /tmp/cg-v7 --max 48 --dtypes f16,bf16 --epilogues none,bias_relu --out $R --name issue10 --against bench/results/h200-2026-12-03s6/issue10.json > $R/issue10.log 2>&1; echo "bench rc=$?"
grep -E "^\| [0-9]" $R/issue10.md | cut -d'|' -f2,4,5,6,7,9,10 | head -32
grep -A6 "^| dtype | epilogue" $R/issue10.md | head -8
finish
