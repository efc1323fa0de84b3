#!/usr/bin/env bash
# Session v, batch v6 (.dev/v6: the CLI at 5f61f01, with the stmatrix epilogue).
# Issue 10's f16 rows (none and bias_relu) from one run with full tunes, --against batch s6.
# Written before: 4096x4096x128 bias_relu ~1% faster (batch v4: its winner 1.3%), every
# other row within the spread of s6 (+-3%).
B=.dev/v6
source bench/lib.sh v6
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
S="--shape 16x4096x4096 --shape 128x8192x8192 --shape 4096x4096x128 --shape 1000x1000x1000 --shape 3000x5000x700 --shape 1x12288x4096 --shape 16x12288x4096 --shape 128x12288x4096"
timeout 270 $B/crossgemm bench $S --cache-dir /tmp/cg-v6 --max 48 --dtypes f16 --epilogues none,bias_relu --out $R --name issue10-f16 --against bench/results/h200-2026-12-03s6/issue10.json > $R/issue10-f16.log 2>&1; echo "bench rc=$?"
grep -E "^\| [0-9]" $R/issue10-f16.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -16
finish
