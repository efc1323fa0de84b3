#!/usr/bin/env bash
# H200, end of 2026-12-01: crossgemm bench f16 over the whole shape table (the wgmma
# family with the per-tile epilogue and the cp.async producer, gemv, the new tuner
# verification) against the morning's report, then the CUDA suite's every-planned-config
# tests. Binaries in .dev/final (built at the commit in .dev/final/COMMIT).
set -u
B=.dev/final
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_CACHE_DIR=/tmp/cg-final CROSSGEMM_COMMIT=$(cat $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1
mkdir -p $OUT/f
timeout 200 $B/crossgemm bench --dtypes f16 --out $OUT/f --name final-f16 --max 48 --against bench/results/nvidia-h200-2026-12-01.json > $OUT/f/bench.log 2>&1; echo "bench rc=$?"
CROSSGEMM_TEST_DEVICES=cuda:0 timeout 110 $B/kernels every_planned --test-threads 16 > $OUT/f/suite.log 2>&1; echo "suite rc=$?"
grep -E "test result|panicked" $OUT/f/suite.log | head -5; tail -2 $OUT/f/bench.log
grep -A5 "^| dtype | epilogue | rows" $OUT/f/final-f16.md | head -6; grep -A3 "^| dtype | rows | geometric" $OUT/f/final-f16.md
