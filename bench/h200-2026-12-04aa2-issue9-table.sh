#!/usr/bin/env bash
# Session aa, batch aa2 (.dev/aa2: the CLI at the session's head, whose kernels are session
# z's: aa1's change is reverted). Issue 9's table in f16 and bf16 from one run, full
# tunes (48 candidates, tables ignored), --against batch 03c (its report of record, run
# 2026-12-03 at 1f1e421), to see whether sessions p-z (the stmatrix epilogue, the
# estimate's order and default pick, the shape specialists) moved it.
# Written before: every row within +-2% of 03c in its ratios (plain 0.97-1.02x cuBLAS,
# fused 0.97-1.04x cuBLASLt); the same winners (128x256 s4, 192x192 three consumers at
# 2048x11008x4096's fused rows).
B=.dev/aa2
source bench/lib.sh aa2
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
S="--shape 2048x11008x4096 --shape 2048x12288x4096 --shape 2048x4096x11008 --shape 4096x4096x4096 --shape 2048x2048x2048 --shape 8192x8192x8192"
for d in f16 bf16; do
  timeout 270 $B/crossgemm bench $S --cache-dir /tmp/cg-aa2 --max 48 --dtypes $d --out $R --name $d --against bench/results/h200-2026-12-03c/$d.json > $R/$d.log 2>&1; echo "bench $d rc=$?"
  grep -E "^\| [0-9]" $R/$d.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -18
done
$B/crossgemm --cache-dir /tmp/cg-aa2 cache export $R/records.json > $R/export.log 2>&1; echo "export rc=$?"
finish
