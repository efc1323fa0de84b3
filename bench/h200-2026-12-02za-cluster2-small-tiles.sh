#!/usr/bin/env bash
# Session m, batch za (the CLI and kernels test of .dev/za: the committed tree plus an
# experiment edit of the wgmma plan, not committed, that makes CLUSTER_M 2 a plan class
# of its own, so that every block tile gets its cluster-2 twin, not only 128x256 and
# 256x128).
# Hypothesis (1000^3, issue 10: 0.80x cuBLAS): every tile size timed there takes 12.5-14 us
# and the smaller ones lose (128x64: 128 CTAs, 13.8-14.1 against 128x128's 12.5 with 64):
# the operands' traffic from L2 (A and B re-read by every tile of a row and column: 34 MB
# for 128x128, 49 MB for 128x64 within ~8 us) is what binds. cuBLAS's kernel shares loads
# in clusters of 8. A pair of blocks sharing B (cluster 2) cuts 128x64's traffic to 41 MB
# and 128x128's to 25 MB. Expected, if so: a cluster-2 twin ahead of 12.5 at 1000^3 (toward
# 10-11 us), and likewise at 3000x5000x700 and 4096x4096x128; none of it where B is large.
set -u
B=${B:-.dev/za}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
R=$OUT/za; mkdir -p $R
cp $B/COMMIT $R/commit.txt
for s in 1000x1000x1000 3000x5000x700 2048x2048x2048 4096x4096x128; do
  CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-all timeout 100 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --max 400 --json > $R/tune-all-$s.json 2> $R/tune-all-$s.log; echo "tune all $s rc=$?"
  python3 - $R/tune-all-$s.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = sorted(d["timings"], key=lambda t: t["us"])
print("  timed", len(t))
for x in t[:5]:
    print("  %.2f %s" % (x["us"], x["config"]))
by = {x["config"]: x["us"] for x in t}
pairs = []
for c, us in by.items():
    if " cluster 2 " in c:
        one = by.get(c.replace(" cluster 2 ", " cluster 1 "))
        if one:
            pairs.append((us / one, c, us, one))
for r, c, us, one in sorted(pairs)[:8]:
    print("  cluster 2 / 1 = %.3f  %.2f vs %.2f  %s" % (r, us, one, c))
PY
done
# Correctness of the cluster-2 twins: every-config tests and persistent loops narrowed.
export CROSSGEMM_TEST_CONFIGS="cluster 2 " CROSSGEMM_TEST_DEVICES=cuda:0
CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 150 $B/kernels --test-threads 8 every_planned_config persistent_grids > $R/kernels.log 2>&1; echo "kernels rc=$?"
grep -E "test result|FAILED|panicked" $R/kernels.log | head -6
cd $OUT && tar czf za.tgz za && rm -rf za
