#!/usr/bin/env bash
# Session k, batch m (binaries of `scripts/dev-build.sh .dev/m` at the commit in COMMIT):
# the f16 shape table with the tuner's final round and the bench's sides timed in the
# same rounds (ours, cuBLAS, cuBLAS + epilogue kernel, cuBLASLt: one run of each in turn),
# full tunes (tables ignored), 48 candidates, against the 12-01 report; then the bf16 rows
# of the M = 2048 LLM shapes and the squares; records exported for records/h200.json.
# Expected: ratios within a few % of 12-01 where the winner is the same config, and the
# row-to-row swings of batch l (the same config 242.7 -> 274.1 us at 2048x4096x11008
# bias_relu while cuBLAS stayed at 245) gone from the ratios.
set -u
B=${B:-.dev/m}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
R=$OUT/m; mkdir -p $R
cp $B/COMMIT $R/commit.txt
CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-b timeout 400 $B/crossgemm bench --max 48 --dtypes f16 --out $R --name f16 --against bench/results/nvidia-h200-2026-12-01.json > $R/f16.log 2>&1; echo "bench f16 rc=$?"
grep -E "^\| [0-9]" $R/f16.md | cut -d'|' -f2,4,5,6,7,9,10 | head -60
S="--shape 2048x11008x4096 --shape 2048x12288x4096 --shape 2048x4096x11008 --shape 4096x4096x4096 --shape 2048x2048x2048 --shape 8192x8192x8192"
CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-b timeout 130 $B/crossgemm bench $S --max 48 --dtypes bf16 --out $R --name bf16 --against bench/results/nvidia-h200-2026-12-01.json > $R/bf16.log 2>&1; echo "bench bf16 rc=$?"
grep -E "^\| [0-9]" $R/bf16.md | cut -d'|' -f2,4,5,6,7,9,10 | head -20
CROSSGEMM_CACHE_DIR=/tmp/cg-b $B/crossgemm cache export $R/records.json 2>&1 | tail -1
cd $OUT && tar czf m.tgz m && rm -rf m
