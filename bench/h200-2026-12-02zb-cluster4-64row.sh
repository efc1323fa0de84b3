#!/usr/bin/env bash
# Session m, batch zb (the CLI and kernels test of .dev/zb: 70f6cdc plus an experiment
# edit, not committed: CLUSTER_M 4 allowed without CLUSTER_N, and the 64-row tiles
# planned with clusters of 1, 2 and 4 along M, each a plan class of its own).
# Batch za: sharing B in pairs took 9-12% off the 64-row tiles at 1000^3 (64x128
# ping-pong 13.70 -> 12.22 us) but none passed 128x128 without a cluster (11.95). In
# fours, a 64x128 block fetches 8 KB of A and 4 KB of B a k-step, not 8 + 16: 128 CTAs
# moving ~25 MB from L2 against 128x128's 64 CTAs moving ~34 MB. Expected, if L2 traffic
# binds: a 64-row cluster-4 config at 1000^3 toward 10.5-11 us, ahead of 128x128.
set -u
B=${B:-.dev/zb}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
R=$OUT/zb; mkdir -p $R
cp $B/COMMIT $R/commit.txt
# Correctness first: the every-config tests and persistent loops on the cluster-4 configs.
CROSSGEMM_TEST_CONFIGS="cluster 4 " CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 120 $B/kernels --test-threads 8 every_planned_config persistent_grids > $R/kernels.log 2>&1; echo "kernels rc=$?"
grep -E "test result|FAILED|panicked" $R/kernels.log | head -6
for s in 1000x1000x1000 3000x5000x700 4096x4096x128; do
  CROSSGEMM_LOG=1 CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-all timeout 100 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --max 400 --json > $R/tune-all-$s.json 2> $R/tune-all-$s.log; echo "tune all $s rc=$?"
  grep -E "runs [0-9]+ clusters" $R/tune-all-$s.log | sed -E 's/`cg_[^`]*`/K/' | sort | uniq -c | head -4
  python3 - $R/tune-all-$s.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = sorted(d["timings"], key=lambda t: t["us"])
print("  timed", len(t))
for x in t[:5]:
    print("  %.2f %s" % (x["us"], x["config"]))
by = {x["config"]: x["us"] for x in t}
for c, us in sorted(by.items(), key=lambda kv: kv[1]):
    if " cluster 4 " in c:
        print("  %.2f %s | cluster 2: %s | none: %s" % (us, c, by.get(c.replace(" cluster 4 ", " cluster 2 ")), by.get(c.replace(" cluster 4 ", " cluster 1 "))))
PY
done
cd $OUT && tar czf zb.tgz zb && rm -rf zb
