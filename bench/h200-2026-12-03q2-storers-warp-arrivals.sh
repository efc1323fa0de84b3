#!/usr/bin/env bash
# Session q, batch q2 (.dev/q2: batch q1's patch with one barrier arrival a warp instead
# of one a thread, and plain shared loads the compiler may batch).
# Batch q1 measured the storers twins 0.58-0.80x of their tiles at 4096x4096x128 (1-consumer
# 64x128: 22.7 -> 37.3 us, +15 us over ~16 tiles a block, ~1 us a tile). Hypothesis: the
# 224 + 128 per-thread arrivals on one mbarrier a tile serialise (~1 us a tile); with one
# arrival a warp (7 + 4) the twins run at or under their tiles at 4096x4096x128.
set -u
B=${B:-.dev/q2}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)-storers"
export CROSSGEMM_IGNORE_TABLES=1
R=$OUT/q2; mkdir -p $R
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
cd $OUT && tar czf q2.tgz q2 && rm -rf q2
