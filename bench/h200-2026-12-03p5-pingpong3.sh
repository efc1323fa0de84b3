#!/usr/bin/env bash
# Session p, batch p5 (.dev/p5: the CLI at the commit in .dev/p5/COMMIT plus
# pingpong3-all.patch, `baseline`: ping-pong generalised to three consumers, planned on
# the 64-row tiles of at most 64 accumulators a thread, 64x64 and 64x128).
# Hypothesis (batch p1: one warpgroup's stores write 4096x4096x128's output in 12.9-13.0
# us where two write it in 10.8-10.9; ping-pong's epilogue is one warpgroup's): with
# three consumers taking tiles in turn, two store while one computes, so 4096x4096x128
# (15.5-16.0 us, 128x128 ping-pong of two) drops toward 12-13 us if the extra operand
# traffic of 64-row tiles (1.5x the bytes per output) does not bind first; the K = 128
# batches (32x512x512x128, 64x128x4096x128) likewise.
# 1. Correctness: tunes verifying every candidate at odd shapes (the 64-row tiles).
# 2. Every candidate at 4096x4096x128 (none, bias_relu) and at the two batches.
set -u
B=${B:-.dev/p5}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
export CROSSGEMM_IGNORE_TABLES=1
R=$OUT/p5; mkdir -p $R
cp $B/COMMIT $R/commit.txt; cp $B/*.patch $R/
show() { python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d.get("timings", [])
print("  timed", len(t), "failed", len(d.get("failed", [])), "winner", d.get("best"))
for x in t[:4]:
    print("   %8.2f %s" % (x["us"], x["config"]))
for x in [x for x in t if "consumers 3" in x["config"] and "pingpong" in x["config"]][:4]:
    print("   3pp %8.2f %s" % (x["us"], x["config"]))
for f in d.get("failed", []):
    print("   FAILED", f["config"], f["reason"][:200])
PY
}
for x in "200x264x328 f16 bias_relu" "1001x1000x200 bf16 bias_gelu" "4097x136x64 f16 none"; do
  set -- $x
  timeout 60 $B/crossgemm tune --shape $1 --dtype $2 --epilogue $3 --max 400 --thorough --json --cache-dir /tmp/cg-ok > $R/ok-$1-$2-$3.json 2> $R/ok-$1-$2-$3.log; echo "ok $1 $2 $3 rc=$?"
  show $R/ok-$1-$2-$3.json
done
for x in "4096x4096x128 none" "4096x4096x128 bias_relu"; do
  set -- $x
  timeout 100 $B/crossgemm tune --shape $1 --dtype f16 --epilogue $2 --max 400 --json --cache-dir /tmp/cg-t > $R/tune-$1-$2.json 2> $R/tune-$1-$2.log; echo "tune $1 $2 rc=$?"
  show $R/tune-$1-$2.json
done
timeout 120 $B/crossgemm bench --cache-dir /tmp/cg-t --shape 4096x4096x128 --dtypes f16,bf16 --epilogues none,bias_relu --max 400 --out $R --name k128 > $R/k128.log 2>&1; echo "bench k128 rc=$?"
grep -E "^\| [0-9]" $R/k128.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -4
for b in "512x512x128 32" "128x4096x128 64"; do
  set -- $b
  timeout 120 $B/crossgemm bench --cache-dir /tmp/cg-b --shape $1 --batch $2 --dtypes f16 --epilogues none,bias_relu --max 400 --out $R --name b$2 > $R/b$2.log 2>&1; echo "bench b$2 rc=$?"
  grep -E "^\| [0-9]" $R/b$2.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -2
done
CROSSGEMM_CACHE_DIR=/tmp/cg-b $B/crossgemm cache export $R/b-records.json > /dev/null 2>&1
python3 - $R/b-records.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["records"]:
    for b, v in r["buckets"].items():
        t = sorted(v.get("timings", []), key=lambda x: x["us"])
        pp3 = [x for x in t if x["config"].get("consumers") == 3 and x["config"].get("pingpong")]
        print(r["kernel"], b, "timed", len(t), "3pp", len(pp3), "best", t[0]["us"] if t else None, "best 3pp", pp3[0]["us"] if pp3 else None)
    print("  failed:", [(f["stage"], f["reason"][:100]) for f in r.get("failed", [])])
PY
cd $OUT && tar czf p5.tgz p5 && rm -rf p5
