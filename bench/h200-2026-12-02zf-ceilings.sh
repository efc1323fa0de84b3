#!/usr/bin/env bash
# Session n, batch zf (binaries of .dev/n1: the CLI at the commit in .dev/n1/COMMIT, built
# with `baseline`). Two questions before building anything:
# 1. Ceilings (bench/ceilings.py): are issue 10's 1.2x targets at 4096x4096x128 (a 33.5 MB
#    f16 output: 16.4 us against cuBLAS 16.7 needs <= 13.9) and 128x8192x8192 (B is 134
#    MB: 45.2 against 45.8 needs <= 38.2) inside what the memory moves at all? Expected: a
#    bare read of 134 MB near 37-38 us (batch s: 100.7 MB in 29.9, 512 MB in 129.1), so
#    128x8192x8192's target sits at the read ceiling; the write of 33.5 MB unknown (if
#    ~11 us, a TMA-store epilogue has room at 4096x4096x128). And does a bulk-copy
#    (TMA-style) read of the decode pattern beat batch s's 13.18 us for 33.5 MB by loads?
#    If it reaches ~11.5, a TMA-fed decode kernel could take 16x4096x4096 to the 1.2x
#    target (14.7 us); if not, the decode ring stays rejected (batches p, r).
# 2. Issue 9's worst row, 2048x11008x4096 f16 none at 0.94x (128x256 picked), while bf16 ran
#    at 0.97x with 128x128 s6 (-02m): the same kernels at the same tensor rate. Expected: the
#    f16 and bf16 tunes time 128x128 s6 within ~1% of each other; if f16 then picks it,
#    f16 reaches ~0.97x. Two processes each, to see the spread.
set -u
B=${B:-.dev/n1}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
R=$OUT/zf; mkdir -p $R
cp $B/COMMIT $R/commit.txt
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $R/smi-start.csv 2>&1
timeout 200 python3 bench/ceilings.py > $R/ceilings.txt 2>&1; echo "ceilings rc=$?"
cat $R/ceilings.txt
for d in f16 bf16; do
  CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-t-$d timeout 100 $B/crossgemm tune --shape 2048x11008x4096 --dtype $d --epilogue none --json > $R/tune-$d.json 2> $R/tune-$d.log; echo "tune $d rc=$?"
  python3 - $R/tune-$d.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = sorted(d["timings"], key=lambda t: t["us"])
print("  timed", len(t), "winner", d.get("best"))
for x in t[:6]:
    print("  %.1f %s" % (x["us"], x["config"]))
PY
done
for run in 1 2; do
  CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-b$run timeout 150 $B/crossgemm bench --shape 2048x11008x4096 --dtypes f16,bf16 --epilogues none --max 48 --out $R --name llm$run > $R/llm$run.log 2>&1; echo "bench $run rc=$?"
  grep -E "^\| 2048" $R/llm$run.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -4
done
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $R/smi-end.csv 2>&1
