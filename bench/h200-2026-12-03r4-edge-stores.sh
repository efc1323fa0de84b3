#!/usr/bin/env bash
# Session r, batch r4: .dev/r4 (scripts/dev-build.sh at the edge-staged epilogue commit)
# against .dev/r1 (2bc0938). The wgmma epilogue now sends chunks on the M or N edge
# through the staged 16-byte-store path, leaving out the elements past the output.
# 1. Correctness on the H200: the kernel suite through CUDA (every planned config at
#    ragged shapes), views and batches (staged operands: checked by the bench rows against cuBLAS); memcheck and racecheck on a tune at
#    an edge shape.
# 2. Written before: batch r3 put an M edge's cost at ~1 us and an N edge's at ~0.5 us
#    (64x128 tile, the stores); expected 1016x1024x1024 and 1024x1016x1024 within 0.3 us
#    of 1024^3, 1000x1000x1024 near 9 us (9.8 before), 1000^3 0.3-0.5 us faster with the
#    128x128 tile (its edges), and the full tunes of the odd rows a few % faster.
set -u
B=.dev/r4
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_IGNORE_TABLES=1
R=$OUT/r4; mkdir -p $R
cp $B/COMMIT $R/commit.txt
for t in kernels views batched; do
  CROSSGEMM_TEST_DEVICES=cuda:0 timeout 240 $B/$t --test-threads 16 > $R/suite-$t.log 2>&1; echo "$t rc=$?"; grep -E "test result" $R/suite-$t.log
done
for tool in memcheck racecheck; do
  CROSSGEMM_TUNE_MAX=6 timeout 120 compute-sanitizer --tool $tool --print-limit 20 $B/crossgemm tune --shape 1016x1000x328 --dtype f16 --epilogue bias_relu --json --cache-dir /tmp/cg-san-$tool > $R/san-$tool.json 2> $R/san-$tool.log; echo "sanitizer $tool rc=$?"
  tail -2 $R/san-$tool.log
done
W='"family":"wgmma","bk":64,"group_m":8,"epi_smem":true,"cluster_m":1'
O="{$W,\"bm\":64,\"bn\":128,\"stages\":8,\"consumers\":1,\"inflight\":true}"
A="{$W,\"bm\":128,\"bn\":128,\"stages\":6,\"consumers\":2,\"inflight\":false}"
Q="{$W,\"bm\":128,\"bn\":64,\"stages\":8,\"consumers\":2,\"inflight\":false}"
for s in 1024x1024x1024 1016x1024x1024 1024x1016x1024 1000x1000x1024 1000x1000x1000; do
  for b in r1 r4; do
    timeout 60 .dev/$b/crossgemm tune --shape $s --dtype f16 --epilogue none --json --cache-dir /tmp/cg-t$b --config "$O" --config "$A" --config "$Q" > $R/tune-$b-$s.json 2> $R/tune-$b-$s.err
    python3 - "$R/tune-$b-$s.json" "$b $s" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    f = {t['config']: t['us'] for t in d['timings']}
    f.update({t['config']: t['us'] for t in d['final_round']})
    print(sys.argv[2], ' | '.join(f"{c.replace('wgmma ','').split(' cluster')[0]} {u:.2f}" for c, u in sorted(f.items())))
except Exception as e:
    print(sys.argv[2], 'failed', e)
PY
  done
done
for b in r1 r4; do
  CROSSGEMM_COMMIT="$(head -1 .dev/$b/COMMIT)" timeout 200 .dev/$b/crossgemm bench --shape 1000x1000x1000 --shape 1001x1000x1000 --shape 1000x1000x1024 --shape 3000x5000x700 --dtypes f16 --epilogues none,bias_relu --max 48 --cache-dir /tmp/cg-b$b --out $R --name bench-$b > $R/bench-$b.log 2>&1; echo "bench $b rc=$?"
  grep -E "^\| [0-9]" $R/bench-$b.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -8
done
cd $OUT && tar czf r4.tgz r4 && rm -rf r4
