#!/usr/bin/env bash
# Session m, batch y (binaries of `scripts/dev-build.sh .dev/y`: the runtime lowers a
# clustered persistent grid to the clusters the driver says run at once,
# cuOccupancyMaxActiveClusters; this build also plans the 2x2 clusters by default, an
# experiment edit of wgmma/tiles.rs not committed).
# Question left by session l (batches t, u): the 2x2 configs took 1.7-1.9x the time of
# the others, also with the grid capped at 32 clusters of 4. If fewer clusters of 4 than
# 32 fit at once (they must fit whole into a GPC; one block an SM at ~200 KB of shared
# memory), the clusters past them run after the others' whole walk: ~2x. Expected, if so:
# the log names a count under 33 and the 2x2 configs come back near the others (at 1000^3
# maybe ahead: 12.48 us unclustered, 13.46 2x2 in batch t); the cluster-2 configs move
# too where 66 pairs do not all fit. If the count is 33, the cause is elsewhere (the four
# blocks' lockstep).
set -u
B=${B:-.dev/y}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
SAN=/usr/local/cuda/bin/compute-sanitizer
R=$OUT/y; mkdir -p $R
cp $B/COMMIT $R/commit.txt
# 1. Every planned candidate (2x2 among them), with the log of the lowered grids.
for s in 1000x1000x1000 4096x4096x4096 2048x11008x4096; do
  CROSSGEMM_LOG=1 CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-all timeout 120 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --max 400 --json > $R/tune-all-$s.json 2> $R/tune-all-$s.log; echo "tune all $s rc=$?"
  grep -E "runs [0-9]+ clusters" $R/tune-all-$s.log | sed -E 's/`cg_[^`]*`/K/' | sort | uniq -c | head -8
  python3 - $R/tune-all-$s.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = sorted(d["timings"], key=lambda t: t["us"])
print("  timed", len(t))
for x in t[:4]:
    print("  %.2f %s" % (x["us"], x["config"]))
for tag in ("cluster 1 ", "cluster 2 ", "cluster 2x2"):
    b = [x for x in t if tag in x["config"]][:2]
    for x in b:
        print("  best %s: %.2f %s" % (tag.strip(), x["us"], x["config"]))
PY
done
# 2. Correctness of the clustered configs on the lowered grids: every-config tests and
#    persistent loops narrowed to them, batches, and the sanitizers on f16.
export CROSSGEMM_TEST_CONFIGS="cluster 2" CROSSGEMM_TEST_DEVICES=cuda:0
CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 100 $B/kernels --test-threads 8 every_planned_config persistent_grids > $R/kernels.log 2>&1; echo "kernels rc=$?"
grep -E "test result|FAILED|panicked" $R/kernels.log | head -6
CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 60 $B/batched --test-threads 4 > $R/batched.log 2>&1; echo "batched rc=$?"
grep -E "test result|FAILED|panicked" $R/batched.log | head -4
export CROSSGEMM_TEST_CONFIGS="cluster 2x2"
for tool in memcheck; do
  CROSSGEMM_CACHE_DIR=/tmp/cg-san-$tool timeout 60 $SAN --tool $tool --print-limit 20 $B/kernels --test-threads 1 persistent_grids > $R/san-$tool.log 2>&1; echo "$tool rc=$?"
  grep -E "ERROR SUMMARY|test result" $R/san-$tool.log | head -3
done
cd $OUT && tar czf y.tgz y && rm -rf y
