#!/usr/bin/env bash
# Session s, batch s1 (.dev/s1old: the CLI at 6c82d37; .dev/s1new: the same plus the
# cluster load split, and its kernels and batched test binaries).
# Until now the first block of each cluster column issued the whole shared B tile (and
# of each row the whole A tile) with multicast, so one block's TMA unit carried all of
# the cluster's shared loads; fast.cu and CUTLASS have every block fetch its slice for
# all. The cluster twins have lost to plain tiles at every shape (batches y, z: 1x2 4%
# behind at 4096^3, cluster 2 189.9 against 182.5; 2x2 64x176 only tied 128x128 at 1000^3).
# Written before: if the issuing block's TMA unit bounds the shared loads, the split
# makes the cluster twins faster (relative to the same tile without a cluster, timed in
# the same process) in s1new than in s1old, most where the shared tile is large
# (B of 128x256 with cluster 2, 2x2 at 1000^3); if the L2 traffic or the cluster-wide
# barrier binds, no change. Each shape is tuned old, new, old, new.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_IGNORE_TABLES=1
R=$OUT/s1; mkdir -p $R
cp .dev/s1old/COMMIT $R/commit-old.txt; cp .dev/s1new/COMMIT $R/commit-new.txt
W='"family":"wgmma","bk":64,"group_m":8,"epi_smem":true'
cfg() { echo "{$W,\"bm\":$1,\"bn\":$2,\"stages\":$3,\"consumers\":$4,\"inflight\":$5,\"cluster_m\":$6,\"cluster_n\":$7}"; }
# (tile) x (none, B shared, A shared[, both])
twins() { local c; for c in 1:1 2:1 1:2 ${6:-}; do echo "$(cfg $1 $2 $3 $4 $5 ${c%:*} ${c#*:})"; done; }
big=( $(twins 128 256 4 2 false) $(twins 256 128 4 2 false) )
llm=( "${big[@]}" $(twins 192 192 4 3 false) )
small=( $(twins 128 128 6 2 false 2:2) $(twins 64 128 8 1 true 2:2) $(twins 64 176 6 1 true 2:2) $(twins 128 64 8 2 false) )
run() { # shape label configs...
  local s=$1 l=$2; shift 2
  local C=(); for c in "$@"; do C+=(--config "$c"); done
  for round in 1 2; do for b in old new; do
    timeout 150 .dev/s1$b/crossgemm tune --shape $s --dtype f16 --epilogue none --json --cache-dir /tmp/cg-s1$b "${C[@]}" > $R/tune-$s-$b$round.json 2> $R/tune-$s-$b$round.err
    python3 bench/tune_summary.py "$s $b$round" $R/tune-$s-$b$round.json
  done; done
}
run 1000x1000x1000 small "${small[@]}"
run 4096x4096x4096 big "${big[@]}"
run 8192x8192x8192 big "${big[@]}"
run 2048x2048x2048 big "${big[@]}"
run 2048x11008x4096 llm "${llm[@]}"
# Correctness of the split loads on every layout (M-major A and N-major B share boxes
# box by box): the every-config tests and persistent loops narrowed to the cluster
# configs, the batches, and memcheck on a 2x2 and a 1x2 config at an odd shape.
CROSSGEMM_TEST_CONFIGS="cluster 2" timeout 300 .dev/s1new/kernels --test-threads 16 every_planned persistent > $R/kernels-cluster2.log 2>&1; echo "kernels rc=$?"; grep -E "test result|FAILED|panicked" $R/kernels-cluster2.log | head
timeout 120 .dev/s1new/batched --test-threads 16 > $R/batched.log 2>&1; echo "batched rc=$?"; grep -E "test result|FAILED" $R/batched.log | head -3
timeout 200 /usr/local/cuda/bin/compute-sanitizer --tool memcheck .dev/s1new/crossgemm tune --shape 1000x1000x1000 --dtype f16 --epilogue bias_relu --cache-dir /tmp/cg-s1san --config "$(cfg 64 128 8 1 true 2 2)" --config "$(cfg 128 64 8 2 false 1 2)" > $R/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY" $R/memcheck.log
cd $OUT && tar czf s1.tgz s1 && rm -rf s1
