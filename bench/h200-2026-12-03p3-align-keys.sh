#!/usr/bin/env bash
# Session p, batch p3 (.dev/p3: the CLI at the commit in .dev/p3/COMMIT, `baseline`; .dev/p2
# for the TMA-store check). Tuning keys now tell rows apart by alignment class (`/a16`:
# every row on 16 bytes, some mid-sector; `/u`: below 16; unmarked: sector-aligned rows of
# a shape whose packed rows are too).
# Hypothesis: in one cache, a call on K + 8 views after a packed call of the same shape
# tunes its own bucket and runs its own winner, where before it ran the packed winner
# (batch -03a: 4096x4096x128's K + 8 views 14% slower with it); 1000^3 likewise the
# other way round (packed rows mid-sector, K + 8 rows aligned).
# Also: the TMA-store twins at a batch (rank-3 output maps), which batch p2 could not show.
set -u
B=${B:-.dev/p3}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
export CROSSGEMM_IGNORE_TABLES=1
R=$OUT/p3; mkdir -p $R
cp $B/COMMIT $R/commit.txt
for s in 4096x4096x128 1000x1000x1000; do
  timeout 60 $B/crossgemm bench --cache-dir /tmp/cg-k --shape $s --dtypes f16 --epilogues none --max 48 --out $R --name packed-$s > $R/packed-$s.log 2>&1; echo "packed $s rc=$?"
  grep -E "^\| [0-9]" $R/packed-$s.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -2
  timeout 90 $B/crossgemm bench --cache-dir /tmp/cg-k --shape $s --dtypes f16 --epilogues none --max 48 --pad 8 --out $R --name pad8-$s > $R/pad8-$s.log 2>&1; echo "pad8 $s rc=$?"
  grep -E "^\| [0-9]" $R/pad8-$s.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -2
  sed -n '/Views against/,$p' $R/pad8-$s.md | grep -E "^\| [0-9]" | head -2
done
CROSSGEMM_CACHE_DIR=/tmp/cg-k $B/crossgemm cache ls > $R/cache-ls.txt 2>&1; cat $R/cache-ls.txt | grep -E "pow2|exact" | head -12
P=.dev/p2
CROSSGEMM_COMMIT=$(head -1 $P/COMMIT) timeout 90 $P/crossgemm bench --cache-dir /tmp/cg-b8 --shape 512x512x128 --batch 8 --dtypes f16 --epilogues none,bias_relu --max 96 --out $R --name b8-tma > $R/b8-tma.log 2>&1; echo "b8 tma rc=$?"
CROSSGEMM_CACHE_DIR=/tmp/cg-b8 $P/crossgemm cache export $R/b8-tma-records.json > /dev/null 2>&1
python3 - $R/b8-tma-records.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["records"]:
    for b, v in r["buckets"].items():
        t = v.get("timings", [])
        tma = [x for x in t if x["config"].get("tma_store")]
        print(r["kernel"], b, "timed", len(t), "of which TMA-store", len(tma), "winner", v["config"].get("tma_store", False))
    print("  failed:", [(f["stage"], f["reason"][:120]) for f in r.get("failed", [])])
PY
cd $OUT && tar czf p3.tgz p3 && rm -rf p3
