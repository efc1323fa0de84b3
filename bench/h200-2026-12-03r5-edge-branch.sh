#!/usr/bin/env bash
# Session r, batch r5: .dev/r5 (the edge chunks' staged path as a branch of its own, the
# interior chunks' code as at 2bc0938) against .dev/r1 (2bc0938). Batch r4: one staged
# path with a branch on the edge inside its loops made every chunk slower (64x128 tile
# 9.1 -> 11.6 us at 1024^3). Written before: 1024^3 as r1 (within noise), the edge shapes
# 0.5-1 us faster with the 64x128 tile. Then tests/views.rs through CUDA (edge tiles at
# odd shapes and views).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_IGNORE_TABLES=1
R=$OUT/r5; mkdir -p $R
cp .dev/r5/COMMIT $R/commit.txt
W='"family":"wgmma","bk":64,"group_m":8,"epi_smem":true,"cluster_m":1'
O="{$W,\"bm\":64,\"bn\":128,\"stages\":8,\"consumers\":1,\"inflight\":true}"
A="{$W,\"bm\":128,\"bn\":128,\"stages\":6,\"consumers\":2,\"inflight\":false}"
Q="{$W,\"bm\":128,\"bn\":64,\"stages\":8,\"consumers\":2,\"inflight\":false}"
for s in 1024x1024x1024 1016x1024x1024 1024x1016x1024 1000x1000x1024 1000x1000x1000; do
  for b in r1 r5 r1 r5; do
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
CROSSGEMM_TEST_DEVICES=cuda:0 timeout 100 .dev/r5/views --test-threads 16 > $R/suite-views.log 2>&1; echo "views rc=$?"; grep -E "test result" $R/suite-views.log
cd $OUT && tar czf r5.tgz r5 && rm -rf r5
