#!/usr/bin/env bash
# H200, 2026-12-01 evening, call 5 (issues 9 and 14): tf32 wgmma with TFLOAT32 maps (TMA
# rounds to tf32): the full-tune tf32 benchmark over the table again, against the
# afternoon's mma.sync report, its cache exported as records; then tests/kernels.rs
# (every planned config, tf32 wgmma included) with the tight tf32 tolerance restored.
# Binaries in .dev/t4 (built at .dev/t4/COMMIT: `cargo build --release --features
# baseline --bin crossgemm`, `cargo test --release --features baseline --no-run --test
# kernels`).
set -u
B=.dev/t4
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(cat $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
mkdir -p $OUT/r
CROSSGEMM_CACHE_DIR=/tmp/cg-tf32r timeout 230 $B/crossgemm bench --dtypes tf32 --out $OUT/r --name full-tf32 --against bench/results/h200-2026-12-01b/full-f32-tf32.json > $OUT/r/bench.log 2>&1; echo "bench rc=$?"
CROSSGEMM_CACHE_DIR=/tmp/cg-tf32r $B/crossgemm cache export $OUT/r/records-tf32.json 2>&1 | tail -1
tail -2 $OUT/r/bench.log; grep -A5 "^| dtype | epilogue | rows" $OUT/r/full-tf32.md | head -6
CROSSGEMM_CACHE_DIR=/tmp/cg-suite CROSSGEMM_TEST_DEVICES=cuda:0 timeout 230 $B/kernels --test-threads 16 > $OUT/r/kernels.log 2>&1; echo "kernels rc=$?"
grep -hE "test result|panicked|FAILED" $OUT/r/kernels.log | head -8
