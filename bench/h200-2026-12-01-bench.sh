#!/usr/bin/env bash
# H200, 2026-12-01: crossgemm bench f16 and bf16 beside cuBLAS/cuBLASLt, against the 2026-11-29 report
# (results in bench/results/h200-2026-12-01/ and bench/results/nvidia-h200-2026-12-01.*). Binaries in .dev/bin.
set -u
B=.dev/bin
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_CACHE_DIR=/tmp/cg-bench CROSSGEMM_COMMIT=$(cat $B/COMMIT)
mkdir -p $OUT/h200
timeout 330 $B/crossgemm bench --dtypes f16 --out $OUT/h200 --name part-f16 --max 48 --against bench/results/nvidia-h200-2026-11-29.json > $OUT/h200/bench-f16.log 2>&1; echo "f16 rc=$?"
timeout 230 $B/crossgemm bench --dtypes bf16 --out $OUT/h200 --name part-bf16 --max 48 --against bench/results/nvidia-h200-2026-11-29.json > $OUT/h200/bench-bf16.log 2>&1; echo "bf16 rc=$?"
ls $OUT/h200; grep -iE "geomean|geometric|wins" $OUT/h200/*.md | head
