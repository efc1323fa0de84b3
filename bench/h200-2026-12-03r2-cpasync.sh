#!/usr/bin/env bash
# Session r, batch r2: .dev/r1 (2bc0938) against .dev/r2p (the same plus tma_ok requiring
# 32-byte rows, so rows of an odd multiple of 16 bytes, K = 1000 or 1016 f16, load with
# the cp.async producer's 16-byte copies instead of TMA; patch in the results folder).
# Batch r1: rows of 2000 or 2032 bytes cost the 64x128 one-consumer tile 4 us (8.7 ->
# 12.8 us at 1024x1024x1000 against 1024^3) and 32-byte rows (1008) 0.5 us; the
# 128x128 tile paid little. Written before: if TMA's handling of half-sector rows is
# the cost (not the extra sectors, which cp.async reads too), the patched binary runs
# 1024x1024x1000 near 9 us with the 64x128 tile and 1000^3 near 10 us (the 1000x1000x1024
# control: 9.8); if the sectors are the cost, no change.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_IGNORE_TABLES=1
R=$OUT/r2; mkdir -p $R
cp .dev/r2p/COMMIT $R/commit.txt; cp .dev/r2p/patch.diff $R/
W='"family":"wgmma","bk":64,"group_m":8,"cluster_m":1,"epi_smem":true'
A="{$W,\"bm\":128,\"bn\":128,\"stages\":6,\"consumers\":2,\"inflight\":false}"
O="{$W,\"bm\":64,\"bn\":128,\"stages\":8,\"consumers\":1,\"inflight\":true}"
P="{$W,\"bm\":128,\"bn\":128,\"stages\":6,\"consumers\":2,\"inflight\":false,\"pingpong\":true}"
Q="{$W,\"bm\":128,\"bn\":64,\"stages\":8,\"consumers\":2,\"inflight\":false}"
S="{$W,\"bm\":64,\"bn\":128,\"stages\":8,\"consumers\":2,\"inflight\":false,\"pingpong\":true}"
T="{$W,\"bm\":64,\"bn\":64,\"stages\":8,\"consumers\":1,\"inflight\":true}"
for s in 1000x1000x1000 1024x1024x1000 1024x1024x1016 1000x1000x1024 1001x1000x1000; do
  for b in r1 r2p; do
    timeout 90 .dev/$b/crossgemm tune --shape $s --dtype f16 --epilogue none --json --cache-dir /tmp/cg-$b --config "$A" --config "$O" --config "$P" --config "$Q" --config "$S" --config "$T" > $R/tune-$b-$s.json 2> $R/tune-$b-$s.err
    python3 - "$R/tune-$b-$s.json" "$b $s" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    f = {t['config']: t['us'] for t in d['timings']}
    f.update({t['config']: t['us'] for t in d['final_round']})
    print(sys.argv[2], ' | '.join(f"{c.split(' cluster')[0].replace('wgmma ','')} {u:.2f}" for c, u in sorted(f.items(), key=lambda x: x[1])))
except Exception as e:
    print(sys.argv[2], 'failed', e, open(sys.argv[1].replace('.json','.err')).read()[-300:])
PY
  done
done
# Batch r1 also had M edges cost the 64x128 tile ~1 us (1000x1024x1024) and N edges 0.4
# (1024x1000x1024). If TMA's zero fill of rows past M or N is the cost, it grows with the
# rows the last boxes leave out: 8 (1016), 40 (984), 54 (970) of 64 or 128.
for s in 1016x1024x1024 984x1024x1024 970x1024x1024 1024x1016x1024 1024x970x1024; do
  timeout 60 .dev/r1/crossgemm tune --shape $s --dtype f16 --epilogue none --json --cache-dir /tmp/cg-r1 --config "$A" --config "$O" > $R/edge-$s.json 2> $R/edge-$s.err
  python3 -c "import json,sys; d=json.load(open('$R/edge-$s.json')); f={t['config']:t['us'] for t in d['timings']}; f.update({t['config']:t['us'] for t in d['final_round']}); print('$s', ' | '.join(f\"{c.split(' cluster')[0]} {u:.2f}\" for c,u in f.items()))" || tail -3 $R/edge-$s.err
done
# The plan's full tune beside cuBLAS, both binaries, 48 candidates.
for b in r1 r2p; do
  CROSSGEMM_COMMIT="$(head -1 .dev/$b/COMMIT)" timeout 200 .dev/$b/crossgemm bench --shape 1000x1000x1000 --shape 1001x1000x1000 --shape 1024x1024x1000 --dtypes f16 --epilogues none,bias_relu --max 48 --cache-dir /tmp/cg-b$b --out $R --name bench-$b > $R/bench-$b.log 2>&1; echo "bench $b rc=$?"
  grep -E "^\| [0-9]" $R/bench-$b.md | cut -d'|' -f2,3,4,5,6,7,9,10,17 | head -8
done
cd $OUT && tar czf r2.tgz r2 && rm -rf r2
