#!/usr/bin/env bash
# Session au, batch au2: full f32 (simt) at its weak rows tuned over more candidates than
# the records' `--max 24` (au1 on the H100, ap3 on the H200): 128x8192x8192 (0.81x cuBLAS's
# SGEMM), 128x11008x4096 (0.69x) and 1024x1024x2048 (0.80x), f32 none, `tune --max 200`
# (every candidate the plan keeps, up to 200), the shipped tables ignored. Whether a
# config past the first 24 of the plan's order wins, and by how much.
# Binaries: the CLI of `cargo build --release --features baseline,aot --bin crossgemm`,
# B=.dev/NAME. Carry: [B]. ~4 min on an H100.
# Written before: at 128 rows a config past the first 24 (threads 8x32 or a split of K in 4
# on 64-wide tiles) 5-15% faster than au1's winners; at 1024x1024x2048 within 3%.
BATCH=${BATCH:-au2}
B=${B:?name the binaries folder}
source bench/lib.sh $BATCH
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
for s in ${SHAPES:-128x8192x8192 128x11008x4096 1024x1024x2048}; do
  start=$(date +%s)
  timeout ${LIMIT:-150} $B/crossgemm tune --shape $s --dtype f32 --epilogue none --max ${MAX:-200} --json \
    --cache-dir /tmp/cg-$BATCH > $R/tune-$s.json 2> $R/tune-$s.err; echo "tune $s rc=$? $(( $(date +%s) - start )) s"
  python3 - $R/tune-$s.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = sorted(d.get("timings", []), key=lambda t: t["us"])
print("  timed", len(t), "best", d.get("best_config"), "candidates", d.get("candidates"))
for x in t[:8]:
    print("   %.1f %s" % (x["us"], x["config"]))
PY
done
finish
