#!/usr/bin/env bash
# H200, 2026-12-01 evening, call 3 (issue 9): the full-tune benchmark of tf32 over the
# whole shape table with the wgmma family serving tf32 (K-major A and B), against the
# afternoon's report (mma.sync tf32 then), and its tuning cache exported as records.
# Binaries in .dev/t2 (see bench/h200-2026-12-01c-suite-tf32-2.sh).
set -u
B=.dev/t2
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_CACHE_DIR=/tmp/cg-tf32 CROSSGEMM_COMMIT=$(cat $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1
mkdir -p $OUT/b
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > $OUT/b/gpu.txt 2>&1
timeout 540 $B/crossgemm bench --dtypes tf32 --out $OUT/b --name full-tf32 --against bench/results/h200-2026-12-01b/full-f32-tf32.json > $OUT/b/bench.log 2>&1; echo "bench rc=$?"
$B/crossgemm cache export $OUT/b/records-tf32.json 2>&1 | tail -1
tail -3 $OUT/b/bench.log
grep -A3 "^| dtype | rows | geometric" $OUT/b/full-tf32.md | head -5
