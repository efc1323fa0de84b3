#!/usr/bin/env bash
# For the next H200 session's second call (written 2026-12-01 session d, not run yet),
# binaries of .dev/next (see bench/h200-next-e.sh). Issue 10: does the interleaved split-K
# order (CG_KINTERLEAVE) stream B better than contiguous shares? Every planned candidate's
# time (`tune --json`: `timings`) at the decode-size shapes where split-K won, f16 and
# bf16, no epilogue (compare the `timings` of a tile's interleaved and contiguous splits
# here afterwards); then the full-tune bench of those shapes against session d's report.
set -u
B=.dev/next
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(head -1 $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
mkdir -p $OUT/i
cp $B/COMMIT $OUT/i/commit.txt
for s in 16x4096x4096 16x4096x11008 128x4096x11008; do for d in f16 bf16; do
  CROSSGEMM_CACHE_DIR=/tmp/cg-i-$s-$d timeout 60 $B/crossgemm tune --shape $s --dtype $d --epilogue none --max 80 --json > $OUT/i/tune-$s-$d.json 2> $OUT/i/tune-$s-$d.log
  echo "$s $d rc=$? $(grep -o '"best":"[^"]*"' $OUT/i/tune-$s-$d.json) $(grep -o '"best_us":[0-9.]*' $OUT/i/tune-$s-$d.json)"
done; done
S="--shape 16x4096x4096 --shape 16x4096x11008 --shape 128x4096x11008 --shape 16x12288x4096"
CROSSGEMM_CACHE_DIR=/tmp/cg-ib timeout 200 $B/crossgemm bench $S --dtypes f16,bf16 --epilogues none,bias_relu --out $OUT/i --name skinny-interleave --against bench/results/h200-2026-12-01d/skinny-deepk.json > $OUT/i/bench.log 2>&1; echo "bench rc=$?"
grep -A6 "^| dtype | epilogue | rows" $OUT/i/skinny-interleave.md | head -7
cd $OUT && tar czf i.tgz i && rm -rf i
