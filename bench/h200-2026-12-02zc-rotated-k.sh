#!/usr/bin/env bash
# Session m, batch zc (the CLI and kernels test of .dev/zc: 471065c plus an experiment
# edit, not committed: `WgmmaTile::rotk`, the producer walking tile (tm, tn)'s k-tiles from
# (tm + tn) % ktiles and wrapping, planned as a twin of every whole-K config).
# Hypothesis (1000^3, issue 10): the diagnose puts load-only, compute-only and the full
# kernel all within 3% of each other, and ncu shows 9.5 cycles per issued instruction at
# 14% occupancy: neither side alone is the time. The 8 tiles of a row (column) request the
# same A (B) k-tile from the same L2 lines at the same moment, all 64 CTAs in step; the
# decode family's rotated walk, the same idea, took 32x4096x4096 from 18.3 to 16.7 us.
# Expected, if same-line requests serialise: the rotated twins ahead at 1000^3 (toward
# 10.5-11 us) and at the short-K shapes; no change where tiles are many (2048x11008x4096).
set -u
B=${B:-.dev/zc}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
R=$OUT/zc; mkdir -p $R
cp $B/COMMIT $R/commit.txt
CROSSGEMM_TEST_CONFIGS="rotk" CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 150 $B/kernels --test-threads 8 every_planned_config persistent_grids split_k > $R/kernels.log 2>&1; echo "kernels rc=$?"
grep -E "test result|FAILED|panicked" $R/kernels.log | head -6
for s in 1000x1000x1000 3000x5000x700 4096x4096x4096 2048x11008x4096; do
  CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-all timeout 110 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --max 400 --json > $R/tune-all-$s.json 2> $R/tune-all-$s.log; echo "tune all $s rc=$?"
  python3 - $R/tune-all-$s.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = sorted(d["timings"], key=lambda t: t["us"])
print("  timed", len(t))
for x in t[:5]:
    print("  %.2f %s" % (x["us"], x["config"]))
by = {x["config"]: x["us"] for x in t}
pairs = sorted((us / by[c[:-5]], c, us, by[c[:-5]]) for c, us in by.items() if c.endswith(" rotk") and c[:-5] in by)
if pairs:
    rs = [p[0] for p in pairs]
    print("  rotk / plain: median %.3f, min %.3f, max %.3f over %d twins" % (sorted(rs)[len(rs)//2], rs[0], rs[-1], len(rs)))
    best_r = min((us, c) for c, us in by.items() if c.endswith(" rotk"))
    best_p = min((us, c) for c, us in by.items() if not c.endswith(" rotk"))
    print("  best rotk %.2f %s | best plain %.2f %s" % (best_r[0], best_r[1], best_p[0], best_p[1]))
PY
done
cd $OUT && tar czf zc.tgz zc && rm -rf zc
