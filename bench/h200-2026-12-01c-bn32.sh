#!/usr/bin/env bash
# H200, 2026-12-01 evening, call 7 (issues 10 and 14): wgmma with 32-column tiles in the
# space. The skinny and decode-size shapes (M = 16 and 128) beside cuBLAS, against the
# afternoon's full-tune report, then tests/kernels.rs over every planned config (the BN =
# 32 ones included). Binaries in .dev/t5 (built at .dev/t5/COMMIT: `cargo build
# --release --features baseline --bin crossgemm`, `cargo test --release --features
# baseline --no-run --test kernels`).
set -u
B=.dev/t5
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(cat $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
mkdir -p $OUT/k
S="--shape 16x4096x4096 --shape 16x4096x11008 --shape 16x12288x4096 --shape 16x11008x4096 --shape 128x4096x11008 --shape 128x12288x4096"
CROSSGEMM_CACHE_DIR=/tmp/cg-bn32 timeout 150 $B/crossgemm bench $S --dtypes f16,bf16 --epilogues none,bias_relu --out $OUT/k --name skinny-bn32 --against bench/results/h200-2026-12-01b/full-f16-bf16.json > $OUT/k/bench.log 2>&1; echo "bench rc=$?"
grep -A5 "^| dtype | epilogue | rows" $OUT/k/skinny-bn32.md | head -7; grep -A4 "^| dtype | rows | geometric" $OUT/k/skinny-bn32.md
CROSSGEMM_CACHE_DIR=/tmp/cg-suite CROSSGEMM_TEST_DEVICES=cuda:0 timeout 200 $B/kernels --test-threads 16 > $OUT/k/kernels.log 2>&1; echo "kernels rc=$?"
grep -hE "test result|panicked|FAILED" $OUT/k/kernels.log | head -8
