#!/usr/bin/env bash
# Session p, batch p4b (.dev/p2): batch p4's tunes at 1000x1000x512 held no TMA-store twin
# among their first four candidates; its batched bench did (the winner was one). The
# same batched bench under racecheck and synccheck, and a 2-D tune whose first four hold
# twins (256x512x128, the batch's product). Expected: 0 hazards, 0 errors.
set -u
B=${B:-.dev/p2}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
export CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_TUNE_MAX=4
R=$OUT/p4b; mkdir -p $R
cp $B/COMMIT $R/commit.txt
for tool in racecheck synccheck memcheck; do
  timeout 150 compute-sanitizer --tool $tool --print-limit 20 $B/crossgemm bench --shape 256x512x128 --batch 3 --dtypes f16 --epilogues bias_relu --runs 10 --cache-dir /tmp/cg-b-$tool --out $R --name b3-$tool > $R/san-b3-$tool.out 2> $R/san-b3-$tool.log; echo "batch $tool rc=$?"
  grep -E "SUMMARY" $R/san-b3-$tool.out | head -2; grep -E "^    ours" $R/san-b3-$tool.log | grep -o "wgmma.*" | head -1
  timeout 150 compute-sanitizer --tool $tool --print-limit 20 $B/crossgemm tune --shape 256x512x128 --dtype f16 --epilogue bias_relu --json --cache-dir /tmp/cg-t-$tool > $R/san-t-$tool.out 2> $R/san-t-$tool.log; echo "tune $tool rc=$?"
  grep -E "SUMMARY" $R/san-t-$tool.out | head -2; grep -o '"config":"[^"]*"' $R/san-t-$tool.out | sort -u | head -6
done
cd $OUT && tar czf p4b.tgz p4b && rm -rf p4b
