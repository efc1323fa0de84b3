#!/usr/bin/env bash
# Session m, batch x (binaries of `scripts/dev-build.sh .dev/x`): the decode family split
# across blocks (`DecodeTile::ks`: grid rows split K, the blocks of a column block fold
# their sums in split order through the workspace).
# Expected: at 16x4096x4096 the winner (16 rows, 16 columns a block, 256 blocks, 0.97
# waves, 23% occupancy, 71% of warp cycles waiting on loads: session l's ncu) leaves
# the chip short of loads in flight and loads A once per 16 columns; 32 columns a warp
# split twice keeps 256 blocks while loading A once per 32 columns, and 4-warp blocks
# split twice give 512 smaller blocks (4 an SM). If that is what the 16-row tiles lose,
# 16x4096x4096 goes from ~15.4 toward ~14.5 us (1.2x cuBLAS is ~15.0); shapes with
# N >= 11008 have blocks enough and should not move.
set -u
B=${B:-.dev/x}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
SAN=/usr/local/cuda/bin/compute-sanitizer
R=$OUT/x; mkdir -p $R
cp $B/COMMIT $R/commit.txt
# 1. Correctness: every planned config with a split (the suite's shapes, every epilogue),
#    every decode config's same-bits check, then memcheck and racecheck on the split ones.
CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-suite CROSSGEMM_TEST_CONFIGS="ks 2" timeout 120 $B/kernels --test-threads 16 > $R/kernels-ks.log 2>&1; echo "kernels (ks 2) rc=$?"
grep -E "test result|FAILED|panicked" $R/kernels-ks.log | head -8
CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 60 $B/kernels --test-threads 16 decode_configs > $R/kernels-decode.log 2>&1; echo "kernels decode rc=$?"
grep -E "test result|FAILED|panicked" $R/kernels-decode.log | head -4
CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-b2 CROSSGEMM_TEST_CONFIGS="ks 2" timeout 60 $B/batched --test-threads 8 > $R/batched-ks.log 2>&1; echo "batched (ks 2) rc=$?"
grep -E "test result|FAILED|panicked" $R/batched-ks.log | head -4
for tool in memcheck racecheck synccheck; do
  CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-san-$tool CROSSGEMM_TEST_CONFIGS="ks 2" timeout 60 $SAN --tool $tool --print-limit 20 $B/kernels --test-threads 1 decode_configs_give_the_same_bits_twice > $R/san-ks-$tool.log 2>&1; echo "decode ks $tool rc=$?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test result" $R/san-ks-$tool.log
done
# 2. Every candidate's time at the decode shapes: split twins beside the unsplit tiles.
for s in 16x4096x4096 1x4096x4096 32x4096x4096 16x12288x4096; do
  CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-t timeout 60 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --max 48 --json > $R/tune-$s.json 2> $R/tune-$s.log; echo "tune $s rc=$?"
  python3 - $R/tune-$s.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = sorted(d["timings"], key=lambda t: t["us"])
for x in t[:6]:
    print("  %.2f %s" % (x["us"], x["config"]))
ks = [x for x in t if " ks " in x["config"]]
one = [x for x in t if "decode" in x["config"] and " ks " not in x["config"]]
if ks and one:
    print("  best split %.2f (%s), best unsplit %.2f" % (ks[0]["us"], ks[0]["config"], one[0]["us"]))
PY
done
# 3. The decode rows, f16, sides timed together, against the session-k report.
S="--shape 16x4096x4096 --shape 1x4096x4096 --shape 32x4096x4096 --shape 1x12288x4096 --shape 16x12288x4096"
CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-b timeout 200 $B/crossgemm bench $S --max 48 --dtypes f16 --epilogues none,bias_relu --out $R --name decode --against bench/results/h200-2026-12-02m/f16.json > $R/decode.log 2>&1; echo "bench rc=$?"
grep -E "^\| [0-9]" $R/decode.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -20
CROSSGEMM_CACHE_DIR=/tmp/cg-b $B/crossgemm cache export $R/records.json 2>&1 | tail -1
cd $OUT && tar czf x.tgz x && rm -rf x
