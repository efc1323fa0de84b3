#!/usr/bin/env bash
# Session m, batch zd (the CLI of .dev/zd: 0ac5454 with gemm_f16_none declared
# `tune(block_n = [64, 80, 96, 112, 128, 256])`, an experiment edit of src/main.rs, not
# committed). cuBLAS's 1000^3 kernel (session l's ncu) runs 112 CTAs of 72x128 in one wave;
# ours runs 64 of 128x128. Block widths that are multiples of 16 but not of 64 are legal
# for a K-major B and never planned: 128x80 makes 8 x 13 = 104 CTAs, 128x96 88, 128x112
# 72, each doing less of K's work per CTA than 128x128 for a little more L2 traffic.
# Batches za-zc: tiles in step are good, the 64-wide tiles lose on traffic.
# Expected: 128x80 or 128x96 ahead of 128x128 at 1000^3 if per-CTA work binds (toward
# 10 us), behind if the operands' traffic does.
set -u
B=${B:-.dev/zd}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
R=$OUT/zd; mkdir -p $R
cp $B/COMMIT $R/commit.txt
for s in 1000x1000x1000 3000x5000x700 1024x1024x1024 2048x2048x2048; do
  CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-all timeout 100 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --max 400 --json > $R/tune-all-$s.json 2> $R/tune-all-$s.log; echo "tune all $s rc=$?"
  python3 - $R/tune-all-$s.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = sorted(d["timings"], key=lambda t: t["us"])
print("  timed", len(t), "failed", len(d.get("failed", [])))
for x in t[:6]:
    print("  %.2f %s" % (x["us"], x["config"]))
for bn in (80, 96, 112):
    b = [x for x in t if "x%dx" % bn in x["config"]][:2]
    for x in b:
        print("  bn %d: %.2f %s" % (bn, x["us"], x["config"]))
PY
done
# The bench row of 1000^3 with the tuned winner, sides timed together.
CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-all timeout 120 $B/crossgemm bench --shape 1000x1000x1000 --shape 1024x1024x1024 --max 400 --dtypes f16 --epilogues none --out $R --name narrow > $R/narrow.log 2>&1; echo "bench rc=$?"
grep -E "ours" $R/narrow.log | head -4
cd $OUT && tar czf zd.tgz zd && rm -rf zd
