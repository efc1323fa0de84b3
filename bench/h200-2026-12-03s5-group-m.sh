#!/usr/bin/env bash
# Session s, batch s5 (.dev/s1old: the CLI at 6c82d37, the kernels as committed).
# Batches s2-s4: at K = 128 the ping-pong winners wait on their stores (33.5 MB written
# at ~2.0 TB/s where a bare write reaches 3.25), not on A. The tiles' order decides which
# output rows the 132 blocks write at once: GROUP_M 8 (the only one planned) has them
# write a band 8 tiles high and ~17 wide, so each 8 KB output row is written in 256-byte
# pieces by blocks that are far apart in time; GROUP_M 1 has ~4 tile rows written across
# their whole width at once.
# Written before: if the DRAM's write efficiency (open pages) binds, a smaller GROUP_M
# is faster at K = 128 (a few %, toward the bare write); if not, all within +-1%
# (at K = 128 A and B are 2 MB and sit in L2 in any order).
set -u
B=.dev/s1old
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
R=$OUT/s5; mkdir -p $R
cp $B/COMMIT $R/commit.txt
cfg() { echo "{\"family\":\"wgmma\",\"epi_smem\":true,\"cluster_m\":1,\"pingpong\":true,\"inflight\":false,\"group_m\":$1,\"bk\":$2,\"bm\":$3,\"bn\":$4,\"stages\":$5,\"consumers\":$6}"; }
for s in 4096x4096x128:none:"64 128 128 6 2" 4096x4096x128:bias_relu:"128 64 128 4 3" 8192x8192x128:none:"64 128 128 6 2" 2048x2048x128:none:"64 64 256 5 2"; do
  shape=${s%%:*}; rest=${s#*:}; e=${rest%%:*}; t=${rest#*:}
  C=(); for g in 1 2 4 8 16 32; do C+=(--config "$(cfg $g $t)"); done
  for round in 1 2; do
    timeout 100 $B/crossgemm tune --shape $shape --dtype f16 --epilogue $e --json --cache-dir /tmp/cg-s5 "${C[@]}" > $R/tune-$shape-$e-$round.json 2> $R/tune-$shape-$e-$round.err
    python3 bench/tune_summary.py "$shape $e $round" $R/tune-$shape-$e-$round.json
  done
done
cd $OUT && tar czf s5.tgz s5 && rm -rf s5
