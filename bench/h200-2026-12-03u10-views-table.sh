#!/usr/bin/env bash
# Session u, batch u10 (.dev/u9: the CLI with the 2x2 clusters planned and ordered by the
# rows, as committed in b2454c6).
# Issue 13's views table (batch 03c's five shapes, K + 8 views beside packed operands and
# cuBLAS on the same views), full tunes, --against 03c's pad8.json.
# Written before: 2048x11008x4096 views ~0.94-0.97 of packed (u9), the rest within the
# spread of 03c (the 2x2 clusters come last on aligned rows, and at 1000^3 and K = 128,
# where they lost before, the tune times them and keeps the faster).
B=.dev/u9
source bench/lib.sh u10
V="--shape 4096x4096x4096 --shape 2048x11008x4096 --shape 16x4096x4096 --shape 1000x1000x1000 --shape 4096x4096x128"
timeout 400 $B/crossgemm bench $V --dtypes f16 --epilogues none --max 48 --pad 8 --cache-dir /tmp/cg-u10 --out $R --name pad8 --against bench/results/h200-2026-12-03c/pad8.json > $R/pad8.log 2>&1; echo "bench rc=$?"
grep -E "^\| [0-9]" $R/pad8.md | head -5 | cut -d'|' -f2,5,6,7,9,17
sed -n '/Views against/,$p' $R/pad8.md | grep -E "^\| [0-9]|rows:" | cut -d'|' -f2,5,6,7,8,9
finish
