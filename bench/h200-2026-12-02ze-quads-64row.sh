#!/usr/bin/env bash
# Session m, batch ze (the CLI and kernels test of .dev/ze: 2x2 clusters planned by
# default and also for the 64-row tiles (one consumer, or two in ping-pong), an
# experiment edit of the wgmma plan, not committed).
# Batches zb-zd: at 1000^3 the operands' L2 traffic binds, and clusters of 4 help where
# the work fits one round of 30 (64x192 in fours along M: 13.63 against 15.31 alone). A
# 2x2 cluster of 64x192 tiles shares A and B (10 KB of traffic per MFLOP against 15 for
# 128x128 alone) in 24 clusters. Expected: a 64-row 2x2 config at 1000^3 ahead of
# 128x128 (11.9 us) if the traffic is what binds and the multicast's lockstep costs less.
set -u
B=${B:-.dev/ze}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
R=$OUT/ze; mkdir -p $R
cp $B/COMMIT $R/commit.txt
CROSSGEMM_TEST_CONFIGS="cluster 2x2" CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 150 $B/kernels --test-threads 8 every_planned_config persistent_grids > $R/kernels.log 2>&1; echo "kernels rc=$?"
grep -E "test result|FAILED|panicked" $R/kernels.log | head -6
for s in 1000x1000x1000 3000x5000x700; do
  CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-all timeout 120 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --max 400 --json > $R/tune-all-$s.json 2> $R/tune-all-$s.log; echo "tune all $s rc=$?"
  python3 - $R/tune-all-$s.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = sorted(d["timings"], key=lambda t: t["us"])
print("  timed", len(t), "failed", len(d.get("failed", [])))
for x in t[:5]:
    print("  %.2f %s" % (x["us"], x["config"]))
by = {x["config"]: x["us"] for x in t}
for c, us in sorted(by.items(), key=lambda kv: kv[1]):
    if c.startswith("wgmma 64x") and "2x2" in c:
        print("  %.2f %s | alone: %s" % (us, c, by.get(c.replace(" cluster 2x2 ", " cluster 1 "))))
PY
done
cd $OUT && tar czf ze.tgz ze && rm -rf ze
