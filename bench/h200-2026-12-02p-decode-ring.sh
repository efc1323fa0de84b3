#!/usr/bin/env bash
# Session l, batch p (binaries of `scripts/dev-build.sh .dev/p`): the decode family's ring
# (`DecodeTile::ring`: each warp's chunks in flight go through cp.async into a ring of
# shared-memory slots, the next chunk's copy issued before the current chunk's MMAs),
# tuned beside the register walk (a ring twin of every planned tile).
# Expected: the register walk issues `unroll` chunks, waits for all, multiplies, so each
# warp's memory idles for a load latency per super-step (4 of them at K = 4096); the ring
# keeps `unroll` chunks in flight throughout. If those gaps are what the 16-row tiles
# lose, 16x4096x4096 goes from ~15.5 toward ~13 us (B alone is 33.5 MB, 8 us at the copy
# bandwidth) and 1x12288x4096 from 31.4 toward ~28 us. If not, the ring ties.
set -u
B=${B:-.dev/p}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
SAN=/usr/local/cuda/bin/compute-sanitizer
R=$OUT/p; mkdir -p $R
cp $B/COMMIT $R/commit.txt
# 1. Correctness: every planned config (ring tiles among them) on the suite's shapes, the
#    decode configs' same-bits check, then memcheck and racecheck on the latter.
CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 150 $B/kernels --test-threads 16 every_planned_config decode_configs > $R/kernels.log 2>&1; echo "kernels rc=$?"
grep -E "test result|FAILED|panicked" $R/kernels.log | head -8
for tool in memcheck racecheck; do
  CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-san-$tool timeout 100 $SAN --tool $tool --print-limit 20 $B/kernels --test-threads 1 decode_configs_give_the_same_bits_twice > $R/san-decode-$tool.log 2>&1; echo "decode $tool rc=$?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test result" $R/san-decode-$tool.log
done
# 2. Every candidate's time at three decode shapes: ring against register walk, tile by tile.
for s in 16x4096x4096 1x12288x4096 16x12288x4096; do
  CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-t timeout 60 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --max 48 --json > $R/tune-$s.json 2> $R/tune-$s.log; echo "tune $s rc=$?"
  python3 - $R/tune-$s.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = sorted(d["timings"], key=lambda t: t["us"])
for x in t[:8]:
    print("  %.2f %s" % (x["us"], x["config"]))
ring = [x for x in t if "ring" in x["config"]]
reg = [x for x in t if "decode" in x["config"] and "ring" not in x["config"]]
if ring and reg:
    print("  best ring %.2f, best register walk %.2f" % (ring[0]["us"], reg[0]["us"]))
PY
done
# 3. The decode rows of the table, f16, sides timed together, against the session-k report.
S="--shape 16x4096x4096 --shape 1x12288x4096 --shape 16x12288x4096 --shape 1x11008x4096 --shape 16x11008x4096 --shape 1x4096x11008 --shape 16x4096x11008 --shape 32x4096x4096"
CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-b timeout 240 $B/crossgemm bench $S --max 48 --dtypes f16 --epilogues none,bias_relu --out $R --name decode --against bench/results/h200-2026-12-02m/f16.json > $R/decode.log 2>&1; echo "bench rc=$?"
grep -E "^\| [0-9]" $R/decode.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -20
CROSSGEMM_CACHE_DIR=/tmp/cg-b $B/crossgemm cache export $R/records.json 2>&1 | tail -1
cd $OUT && tar czf p.tgz p && rm -rf p
