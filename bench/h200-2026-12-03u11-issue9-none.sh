#!/usr/bin/env bash
# Session u, batch u11 (.dev/u9: the CLI with the 2x2 clusters planned and ordered by the
# rows, as committed in b2454c6).
# Issue 9's plain f16 rows with full tunes, --against batch 03c's f16.json: the 2x2
# clusters now in every wgmma plan come last on these aligned rows (estimate x1.15), so
# the winners and times should be 03c's. Written before: every row within the spread of
# 03c (same-round ratios to cuBLAS within ~2%), no 2x2 winner.
B=${B:-.dev/u9}
source bench/lib.sh u11
S="--shape 2048x11008x4096 --shape 2048x12288x4096 --shape 2048x4096x11008 --shape 4096x4096x4096 --shape 2048x2048x2048 --shape 8192x8192x8192"
timeout 330 $B/crossgemm bench $S --dtypes f16 --epilogues none --max 48 --cache-dir /tmp/cg-u11 --out $R --name f16 --against bench/results/h200-2026-12-03c/f16.json > $R/f16.log 2>&1; echo "bench rc=$?"
grep -E "^\| [0-9]" $R/f16.md | head -6 | cut -d'|' -f2,5,6,7,9,10,17
finish
