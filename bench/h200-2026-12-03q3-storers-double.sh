#!/usr/bin/env bash
# Session q, batch q3 (.dev/q3: batch q2 plus two staged tiles a consumer, test_wait spins for
# the hand-offs, and a check-free 16-byte copy of whole tiles, four loads ahead).
# Batch q2: no change from q1 (the twins 0.57-0.79x at 4096x4096x128), so the per-thread
# arrivals were not it. SASS of q2's storer loop: ~45 instructions a 16-byte unit, one
# unit in flight a thread. Hypothesis: a tile's store waits twice on a hand-off
# (consumer -> storers -> consumer) with one staged tile, so the stores stop while a
# consumer stages; with two staged tiles, non-suspending waits and 4 units in flight,
# the twins match or beat their tiles at 4096x4096x128 (where plain 1-consumer 64x128
# takes 22.6 us, its twin 37.7).
set -u
B=${B:-.dev/q3}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)-storers"
export CROSSGEMM_IGNORE_TABLES=1
R=$OUT/q3; mkdir -p $R
cp $B/COMMIT $R/commit.txt
P="python3 bench/tma_pairs.py --mark storers"
for x in "4096x4096x128 none" "4096x4096x128 bias_relu" "1000x1000x1000 none" "128x8192x8192 none"; do
  set -- $x
  timeout 100 $B/crossgemm tune --shape $1 --dtype f16 --epilogue $2 --max 96 --json --cache-dir /tmp/cg-t > $R/tune-$1-$2.json 2> $R/tune-$1-$2.log; echo "tune $1 $2 rc=$?"
  $P $R/tune-$1-$2.json > $R/pairs-$1-$2.txt; head -9 $R/pairs-$1-$2.txt
done
for x in "1001x1000x200 bf16 bias_gelu" "4097x136x64 f16 bias_relu"; do
  set -- $x
  timeout 60 $B/crossgemm tune --shape $1 --dtype $2 --epilogue $3 --max 60 --thorough --json --cache-dir /tmp/cg-ok > $R/ok-$1-$2-$3.json 2> $R/ok-$1-$2-$3.log; echo "ok $1 $2 $3 rc=$?"
  $P $R/ok-$1-$2-$3.json > $R/pairs-ok-$1.txt; head -3 $R/pairs-ok-$1.txt; grep -c FAILED $R/pairs-ok-$1.txt
done
cd $OUT && tar czf q3.tgz q3 && rm -rf q3
