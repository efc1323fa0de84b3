#!/usr/bin/env bash
# Session u, batch u6 (.dev/u6: the CLI and tests/kernels.rs at c093e9e with
# exp-producers.patch: CG_PRODUCERS = 2 makes lane 0 of producer warp 0 issue A's boxes
# and lane 0 of warp 1 B's, each arriving on the stage's full barrier with its bytes;
# CROSSGEMM_EXP_PRODUCERS=2 adds the define to every wgmma compile).
# First u5 (tma_boxes.py, 1 GiB a launch): is the ~275 ns a box one issuing thread's?
# Then the GEMM: if one thread's issue bounds the producer, two threads take the small
# tiles (1000^3, K = 128, M = 128) a few % faster and the large ones (8192^3, whose
# 128x256 tile's two boxes a k-tile ~ its math) a little. Written before: 0-3% at 8192^3
# and 4096^3, up to 5-10% at 1000^3 if u5 shows issuers dividing the per-box cost; nothing
# anywhere if u5 does not.
B=.dev/u6
source bench/lib.sh u6
U=u5 bash bench/h200-2026-12-03u4-boxes.sh
CROSSGEMM_EXP_PRODUCERS=2 CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-u6t timeout 150 $B/kernels cluster_blocks every_planned_config_f16 persistent --test-threads 8 > $R/kernels-p2.log 2>&1; echo "kernels (2 producers) rc=$?"
grep -hE "test result|panicked" $R/kernels-p2.log | head -5
PP=',"pingpong":true'
run() { alternate CROSSGEMM_EXP_PRODUCERS "1 2" producers "$@"; }
run 1000x1000x1000 "$(cfg 64 128 128 6 2 false)" "$(cfg 64 64 128 8 1 true)"
run 4096x4096x128 "$(cfg 64 128 128 6 2 false 1 $PP)" "$(cfg 64 128 128 6 2 false)"
run 128x12288x4096 "$(cfg 64 128 128 6 2 false)" "$(cfg 64 64 192 6 1 true)"
run 4096x4096x4096 "$(cfg 64 128 256 4 2 false)" "$(cfg 64 128 128 6 2 false)"
run 2048x11008x4096 "$(cfg 64 128 256 4 2 false)" "$(cfg 64 128 128 6 2 false)"
run 8192x8192x8192 "$(cfg 64 128 256 4 2 false)"
finish
