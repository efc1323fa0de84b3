#!/usr/bin/env bash
# Session k, batch k (binaries of `scripts/dev-build.sh .dev/k` at the commit in COMMIT):
# (1) the wave-fitting widths 176 and 240. Expected: 2048x11008x4096 f16 none from
# 266.6 us (0.93x cuBLAS, 128x256, 5.2 waves) toward 250 (128x240: 5.6 waves, 6% less
# work each) or below (128x176: 7.6 waves, 31% less); 128x11008x4096 from 34.9 toward
# 33 (64x176: 126 tiles on 132 SMs against 116 of 64x192). Full tunes (tables ignored),
# 48 candidates, beside cuBLAS in the same process, against the 12-01 report.
# (2) every planned config on the H200 (the new widths included) and the batched suite
# with the rotated decode tiles (not run on the GPU before: batch j stopped it at 60 s).
# (3) diagnose 4096x4096x128 (how far is the store-bound shape from the memory roof) and
# 4096^3 with each epilogue (what the fused epilogue costs a tile: bias_relu took 6 us more
# than none at 12-01, bias_gelu 17 us; cuBLASLt's took 2 and 6).
set -u
B=${B:-.dev/k}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
R=$OUT/k; mkdir -p $R
cp $B/COMMIT $R/commit.txt
S="--shape 2048x11008x4096 --shape 128x11008x4096"
CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-wf timeout 200 $B/crossgemm bench $S --max 48 --dtypes f16,bf16 --epilogues none,bias_relu,bias_gelu --out $R --name wavefit --against bench/results/nvidia-h200-2026-12-01.json > $R/wavefit.log 2>&1; echo "bench rc=$?"
grep -E "^\| [0-9]" $R/wavefit.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -14
CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-t timeout 60 $B/crossgemm tune --shape 2048x11008x4096 --dtype f16 --epilogue none --max 48 --json > $R/tune-2048x11008x4096.json 2> $R/tune.log; echo "tune rc=$?"
python3 -c "
import json
t=sorted(json.load(open('$R/tune-2048x11008x4096.json'))['timings'], key=lambda t: t['us'])
for x in t[:8]: print('  %.1f %s' % (x['us'], x['config']))
"
CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-d timeout 60 $B/crossgemm diagnose --shape 4096x4096x128 --dtype f16 --epilogue none > $R/diagnose-4096x4096x128.txt 2>&1; echo "diagnose rc=$?"
sed -n '2p;/^2. variants/,/^3. /p;/^verdict/,$p' $R/diagnose-4096x4096x128.txt | head -20
for e in bias_relu bias_gelu; do
  CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-d timeout 60 $B/crossgemm diagnose --shape 4096x4096x128 --dtype f16 --epilogue $e > $R/diagnose-4096x4096x128-$e.txt 2>&1; echo "diagnose 4096x4096x128 $e rc=$?"
  sed -n '2p;/^2. variants/,/^3. /p' $R/diagnose-4096x4096x128-$e.txt | head -9
done
for e in none bias_relu bias_gelu; do
  CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-d timeout 90 $B/crossgemm diagnose --shape 4096x4096x4096 --dtype f16 --epilogue $e > $R/diagnose-4096-$e.txt 2>&1; echo "diagnose 4096 $e rc=$?"
  sed -n '2p;/^2. variants/,/^3. /p' $R/diagnose-4096-$e.txt | head -9
done
CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 240 $B/kernels every_planned_config --test-threads 16 > $R/kernels.log 2>&1; echo "kernels rc=$?"
grep -hE "test result|panicked" -A3 $R/kernels.log | head -8
CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-batched timeout 150 $B/batched --test-threads 16 > $R/batched.log 2>&1; echo "batched rc=$?"
grep -hE "test result|panicked" -A3 $R/batched.log | head -6
cd $OUT && tar czf k.tgz k && rm -rf k
