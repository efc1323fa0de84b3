#!/usr/bin/env bash
# Session l, batch u (the CLI in .dev/u: batch t's 2x2 clusters with the persistent grid
# capped at 32 clusters of 4; an experiment, not committed as such). Batch t's 2x2 configs
# took 464 us at 2048x11008x4096 against 275 for the others: their grid was 33 clusters
# of 4 (132 blocks), and if only 32 clusters of 4 fit the H200's GPCs at once (cuBLAS's
# clusters of 8: 15 at once, by ncu in batch q), the 33rd runs after the rest, doubling
# its share. Expected with the cap: the 2x2 configs back near the others; faster only if
# sharing both operands saves the power-limited chip enough energy (issue 9).
set -u
B=${B:-.dev/u}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -c 7 $B/COMMIT)
R=$OUT/u; mkdir -p $R
cp $B/COMMIT $R/commit.txt
for s in 2048x11008x4096 4096x4096x4096; do
  CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-all timeout 150 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --max 400 --json > $R/tune-all-$s.json 2> $R/tune-all-$s.log; echo "tune all $s rc=$?"
  python3 - $R/tune-all-$s.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = sorted(d["timings"], key=lambda t: t["us"])
print("  timed", len(t), "winner", d.get("best"))
for x in t[:6]:
    print("  %.2f %s" % (x["us"], x["config"]))
print("  final round:", [(f.get("config"), round(f.get("us", 0), 2)) for f in d.get("final_round", [])])
print("  best 2x2:")
for x in [x for x in t if "cluster 2x2" in x["config"]][:4]:
    print("    %.2f %s" % (x["us"], x["config"]))
PY
done
cd $OUT && tar czf u.tgz u && rm -rf u
