#!/usr/bin/env bash
# H200, 2026-12-01 afternoon, call 1 of 3 (issue 12, 14): the full-tune benchmark of f16
# and bf16 over the whole shape table (every candidate timed), its tuning cache exported
# as records (with each kernel's IR: the macro's config tables read them), then the
# kernel test suite through CUDA at this commit. Binaries in .dev/s2 (built at the commit
# in .dev/s2/COMMIT: `cargo build --release --features baseline --bin crossgemm` and the
# test binaries of `cargo test --release --no-run`).
set -u
B=.dev/s2
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_CACHE_DIR=/tmp/cg-rec CROSSGEMM_COMMIT=$(cat $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > $OUT/r/gpu.txt 2>&1
timeout 330 $B/crossgemm bench --dtypes f16,bf16 --out $OUT/r --name full-f16-bf16 > $OUT/r/bench.log 2>&1; echo "bench rc=$?"
$B/crossgemm cache export $OUT/r/records-f16-bf16.json 2>&1 | tail -1
CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_REQUIRE_NVRTC=1 timeout 230 $B/kernels --test-threads 16 > $OUT/r/kernels.log 2>&1; echo "kernels rc=$?"
grep -E "test result|panicked|FAILED" $OUT/r/kernels.log | head -12; tail -3 $OUT/r/bench.log
grep -A3 "^| dtype | rows | geometric" $OUT/r/full-f16-bf16.md | head -5
