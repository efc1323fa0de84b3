#!/usr/bin/env bash
# Session p, batch p2 (.dev/p2: the CLI at the commit in .dev/p2/COMMIT, features
# baseline,tma-store-candidates: the f16 and bf16 kernels plan each wgmma tile's
# TMA-store twin beside it).
# Hypothesis (batch p1: one warpgroup's 16-byte stores write 4096x4096x128's output in
# 12.9-13.0 us where two write it in 10.8-10.9; in ping-pong only one consumer stores at a
# time): with the epilogue's stores handed to TMA, 4096x4096x128 drops from ~15.7 toward
# 12-13 us (1.2x cuBLAS needs ~13.8); the short-mainloop shapes (1000^3, 3000x5000x700,
# 128x8192x8192) gain a little; the K = 4096 shapes within +-1% (the epilogue is 1-3% there).
# 1. Correctness: tunes that verify every candidate against the host reference at odd
#    shapes (edge tiles that TMA clips, a batch: rank-3 output maps), and compute-sanitizer
#    (memcheck, racecheck, synccheck) on tunes whose first candidates include twins.
# 2. Timings: tunes of ~96 candidates (twins adjacent to their tiles) at issue 9/10 shapes,
#    every tile against its twin in the same process; then bench rows from those caches.
set -u
B=${B:-.dev/p2}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
export CROSSGEMM_IGNORE_TABLES=1
R=$OUT/p2; mkdir -p $R
cp $B/COMMIT $R/commit.txt
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $R/smi-start.csv 2>&1
for x in "1000x1000x1000 f16 bias_relu" "1001x1000x200 bf16 bias_gelu" "200x264x328 f16 none" "4097x136x64 f16 bias_relu"; do
  set -- $x
  timeout 60 $B/crossgemm tune --shape $1 --dtype $2 --epilogue $3 --max 60 --thorough --json --cache-dir /tmp/cg-ok > $R/ok-$1-$2-$3.json 2> $R/ok-$1-$2-$3.log; echo "ok $1 $2 $3 rc=$?"
  python3 bench/tma_pairs.py $R/ok-$1-$2-$3.json | head -4; python3 bench/tma_pairs.py $R/ok-$1-$2-$3.json | grep -c FAILED
done
timeout 90 $B/crossgemm bench --shape 512x512x128 --batch 8 --dtypes f16 --epilogues bias_relu --max 96 --cache-dir /tmp/cg-b8 --out $R --name b8 > $R/b8.log 2>&1; echo "bench b8 rc=$?"
grep -E "^\| [0-9]" $R/b8.md | cut -d'|' -f2,4,5,6,7,9,10,15,17 | head -3
for x in "4096x4096x128 none" "4096x4096x128 bias_relu" "1000x1000x1000 none" "4096x4096x4096 none"; do
  set -- $x
  timeout 100 $B/crossgemm tune --shape $1 --dtype f16 --epilogue $2 --max 96 --json --cache-dir /tmp/cg-t > $R/tune-$1-$2.json 2> $R/tune-$1-$2.log; echo "tune $1 $2 rc=$?"
  python3 bench/tma_pairs.py $R/tune-$1-$2.json | head -9
done
for tool in memcheck racecheck synccheck; do
  CROSSGEMM_TUNE_MAX=6 timeout 90 compute-sanitizer --tool $tool --print-limit 20 $B/crossgemm tune --shape 200x264x328 --dtype f16 --epilogue bias_relu --json --cache-dir /tmp/cg-san-$tool > $R/san-$tool.json 2> $R/san-$tool.log; echo "sanitizer $tool rc=$?"
  tail -2 $R/san-$tool.log; python3 -c "import json;d=json.load(open('$R/san-$tool.json'));print(' ', [x['config'] for x in d['timings']])" 2>&1 | head -3
done
for x in "128x8192x8192 none" "3000x5000x700 none" "2048x11008x4096 bias_gelu"; do
  set -- $x
  timeout 100 $B/crossgemm tune --shape $1 --dtype f16 --epilogue $2 --max 96 --json --cache-dir /tmp/cg-t > $R/tune-$1-$2.json 2> $R/tune-$1-$2.log; echo "tune $1 $2 rc=$?"
  python3 bench/tma_pairs.py $R/tune-$1-$2.json | head -9
done
timeout 150 $B/crossgemm bench --cache-dir /tmp/cg-t --shape 4096x4096x128 --shape 1000x1000x1000 --shape 128x8192x8192 --shape 3000x5000x700 --shape 4096x4096x4096 --dtypes f16 --epilogues none,bias_relu --max 96 --out $R --name f16 > $R/f16.log 2>&1; echo "bench f16 rc=$?"
grep -E "^\| [0-9]" $R/f16.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -12
cd $OUT && tar czf p2.tgz p2 && rm -rf p2
