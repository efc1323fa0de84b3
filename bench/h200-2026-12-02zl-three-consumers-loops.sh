#!/usr/bin/env bash
# Session n, batch zl (.dev/n4 with the kernels test rebuilt): batch zk's persistent-loop
# test stopped at its own precondition (192x192 tiles make 289 of 3112x3112, fewer than
# two a block), so the three-consumer tiles never looped over tiles there. The test's
# shape is now 3304x3304x136 (324 such tiles). Expected: passes, memcheck clean (racecheck
# was clean on the every-config tests in zk; the device time left holds one tool), for the three-consumer configs of its three kernels.
# Then an experiment (.dev/n5: bb36c5b plus `cluster2-192.patch`, which plans the
# cluster-2 twins of the 192-row tiles as a class of their own): cuBLAS runs its 192x192
# in clusters of 2 (batch zj). Expected: 192x192 cluster 2 a few % faster than alone at
# 2048x11008x4096 (B multicast halves its L2 reads), perhaps past 128x256 (266 us).
set -u
B=${B:-.dev/n4}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
SAN=/usr/local/cuda/bin/compute-sanitizer
R=$OUT/zl; mkdir -p $R
cp $B/COMMIT $R/commit.txt
export CROSSGEMM_TEST_CONFIGS="consumers 3" CROSSGEMM_TEST_DEVICES=cuda:0
CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 90 $B/kernels --test-threads 4 persistent_grids > $R/kernels.log 2>&1; echo "kernels rc=$?"
grep -E "test result|FAILED|panicked" -A2 $R/kernels.log | head -8
for tool in memcheck; do
  CROSSGEMM_CACHE_DIR=/tmp/cg-san-$tool timeout 90 $SAN --tool $tool --print-limit 20 $B/kernels --test-threads 1 persistent_grids > $R/san-$tool.log 2>&1; echo "$tool rc=$?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test result" $R/san-$tool.log | head -3
done
unset CROSSGEMM_TEST_CONFIGS CROSSGEMM_TEST_DEVICES
for e in none bias_gelu; do
  CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-x-$e timeout 70 .dev/n5/crossgemm tune --shape 2048x11008x4096 --dtype f16 --epilogue $e --max 400 --json > $R/tune-all-c2-$e.json 2> $R/tune-all-c2-$e.log; echo "tune all $e rc=$?"
  python3 - $R/tune-all-c2-$e.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = sorted(d["timings"], key=lambda t: t["us"])
print("  timed", len(t), "winner", d.get("best"))
for x in t[:6]:
    print("  %.1f %s" % (x["us"], x["config"]))
for x in t:
    if "consumers 3" in x["config"]:
        print("  192: %.1f %s" % (x["us"], x["config"]))
for x in d.get("final_round", []):
    print("  final %.1f %s" % (x["us"], x["config"]))
PY
done
cd $OUT && tar czf zl.tgz zl && rm -rf zl
