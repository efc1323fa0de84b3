#!/usr/bin/env bash
# Session v, batch v2 (.dev/v2: the CLI and tests/kernels.rs, tests/batched.rs with
# k-chunked maps; .dev/v1: the CLI before them, 9501844).
# K-major k-tiles of several 128-byte rows (BK 128 f16) now arrive as one rank-3 TMA box
# per operand where K is a multiple of 64 (TensorMap::k_chunks), where the producer issued
# one rank-2 box per row. u5: one issuing thread moves 6.9 TB/s from L2 in 16 KiB boxes,
# 12.8 TB/s in 32 KiB boxes of two runs (the per-box cost is fixed).
# 1. Correctness: the new k-chunk test (every run shape: single, ping-pong, three
#    consumers, clusters; f16, bf16, tf32; K past the last k-tile's runs, K below a k-tile)
#    and the batched suite (rank-3 batch maps beside chunked broadcast ones), then
#    memcheck on the k-chunk test.
# 2. Timing, the binaries alternating process by process (`alternate B`), the same configs:
#    BK 128 tiles against the BK 64 winners.
# Written before: where q4's no_store variant found 4096x4096x128 bound by its loads
# (12.3 us without stores), BK 128 tiles with one box per operand run 5-10% faster than
# with two and may pass the BK 64 ping-pong winner (15.5-15.9 us); the fused BK 128 winner
# (64x128x128 three consumers, 18.2 us) gains as much. At 4096^3 and 128x8192x8192 (not box
# bound: u6/u7's extra issuers changed nothing) within 1%.
B=.dev/v2
source bench/lib.sh v2
CROSSGEMM_CACHE_DIR=/tmp/cg-v2k timeout 150 $B/kernels k_tiles --test-threads 4 > $R/kernels-k-chunks.log 2>&1; echo "kernels k_tiles rc=$?"
grep -hE "test result|panicked" $R/kernels-k-chunks.log | head -5
CROSSGEMM_CACHE_DIR=/tmp/cg-v2b timeout 120 $B/batched --test-threads 4 > $R/batched.log 2>&1; echo "batched rc=$?"
grep -hE "test result|panicked" $R/batched.log | head -5
P=',"pingpong":true'
alternate B ".dev/v1 .dev/v2" bins 4096x4096x128 "$(cfg 64 128 128 6 2 false 1 "$P")" "$(cfg 128 128 128 3 2 false 1 "$P")" "$(cfg 128 64 128 4 3 false 1 "$P")" "$(cfg 128 128 256 2 2 false)" "$(cfg 128 128 128 3 2 false)"
EPI=bias_relu alternate B ".dev/v1 .dev/v2" bins 4096x4096x128 "$(cfg 128 64 128 4 3 false 1 "$P")" "$(cfg 64 64 128 6 3 false 1 "$P")" "$(cfg 128 128 128 3 2 false 1 "$P")"
alternate B ".dev/v1 .dev/v2" bins 128x8192x8192 "$(cfg 64 64 128 8 1 true)" "$(cfg 128 64 128 4 1 true)" "$(cfg 256 64 64 3 1 true)"
alternate B ".dev/v1 .dev/v2" bins 4096x4096x4096 "$(cfg 64 128 256 4 2 false)" "$(cfg 128 128 256 2 2 false)" "$(cfg 128 128 128 3 2 false)"
CROSSGEMM_CACHE_DIR=/tmp/cg-v2m timeout 200 compute-sanitizer --tool memcheck --print-limit 20 $B/kernels k_tiles --test-threads 1 > $R/san-memcheck.log 2>&1; echo "memcheck rc=$?"
grep -hE "ERROR SUMMARY|test result" $R/san-memcheck.log | head -3
finish
