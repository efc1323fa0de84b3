#!/usr/bin/env bash
# Session h, last call (the CLI of `cargo build --release --features baseline,aot` copied
# to .dev/pool): staged calls with the default memory pool keeping 256 MiB of freed
# memory (keep_pool_memory in gemm-runtime/src/device/cuda/mod.rs). Hypothesis: the
# staging scratch was remapped on every call (release threshold 0), which is what made
# 3000x5000x700 staged 69.9 us rather than ~55 and K + 3 views 0.2-0.6x of packed.
set -u
B=.dev/pool
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(head -1 $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
mkdir -p $OUT/pool
CROSSGEMM_CACHE_DIR=/tmp/cg-k700 timeout 45 $B/crossgemm bench --shape 3000x5000x700 --dtypes f16 --epilogues none,bias_relu --out $OUT/pool --name k700-staged --against bench/results/h200-2026-12-01h/part2/k700-staged.json > $OUT/pool/k700.log 2>&1; echo "k700 rc=$?"
grep -A8 "^## Change" $OUT/pool/k700-staged.md | grep -E "^\| [0-9]" | cut -d'|' -f2,4,5,6,7
CROSSGEMM_CACHE_DIR=/tmp/cg-p3 timeout 30 $B/crossgemm bench --shape 16x4096x4096 --dtypes f16 --epilogues none --no-vendor --pad 3 --out $OUT/pool --name pad3 --against bench/results/h200-2026-12-01h/part2/pad3-staged.json > $OUT/pool/pad3.log 2>&1; echo "pad3 rc=$?"
grep -A8 "^## Change" $OUT/pool/pad3.md | grep -E "^\| [0-9]" | cut -d'|' -f2,4,5,6,7
