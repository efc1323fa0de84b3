#!/usr/bin/env bash
# Session p, batch p4 (.dev/p2: ed5955a, `baseline,tma-store-candidates`): compute-sanitizer
# (memcheck, racecheck, synccheck) on tunes whose first four candidates hold TMA-store
# twins (batch p2's sanitizer tunes held none), at a ragged shape (edge tiles that TMA
# clips) and at a batch (rank-3 output maps). Expected: 0 errors, 0 hazards.
set -u
B=${B:-.dev/p2}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
export CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_TUNE_MAX=4
R=$OUT/p4; mkdir -p $R
cp $B/COMMIT $R/commit.txt
for tool in memcheck racecheck synccheck; do
  timeout 150 compute-sanitizer --tool $tool --print-limit 20 $B/crossgemm tune --shape 1000x1000x512 --dtype f16 --epilogue bias_relu --json --cache-dir /tmp/cg-san-$tool > $R/san-$tool.out 2> $R/san-$tool.log; echo "sanitizer $tool rc=$?"
  grep -E "SUMMARY" $R/san-$tool.out $R/san-$tool.log | head -3
  grep -o '"config":"[^"]*"' $R/san-$tool.out | sort -u | head -6
done
timeout 150 compute-sanitizer --tool memcheck --print-limit 20 $B/crossgemm bench --shape 256x512x128 --batch 3 --dtypes f16 --epilogues bias_relu --runs 10 --cache-dir /tmp/cg-san-b > $R/san-batch.out 2> $R/san-batch.log; echo "sanitizer batch rc=$?"
grep -E "SUMMARY" $R/san-batch.out $R/san-batch.log | head -3
CROSSGEMM_CACHE_DIR=/tmp/cg-san-b $B/crossgemm cache ls > $R/san-batch-cache.txt 2>&1; grep -E "pow2" $R/san-batch-cache.txt | head -3
cd $OUT && tar czf p4.tgz p4 && rm -rf p4
