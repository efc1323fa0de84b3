#!/usr/bin/env bash
# Session r, batch r3 (.dev/r1: the CLI at 2bc0938). Batch r2: loading rows of an odd
# multiple of 16 bytes with cp.async instead of TMA was slower for every tile (64x128:
# 13.2 -> 13.5 us at 1024x1024x1000, 128x128: 12.0 -> 18.2), so the misaligned rows' cost
# is the L2 sectors themselves. cuBLAS pays half as much there (8.9 -> 10.4 us) with 2x4
# clusters whose multicast reads each operand tile once for several SMs.
# Written before: (1) if L2 work is the cost, our cluster twins (B shared by two blocks
# along M, A by two along N) gain more at K = 1000 than at K = 1024; tiles of 80 and 96
# columns give 104 and 88 blocks at 1000^3. (2) M edges cost the 64x128 tile ~1 us
# whatever the rows left out (1016: +1.1, 984: +1.0, 970: +1.7): `diagnose` of that config
# at 1016x1024x1024 and 1024^3 says whether the stores (no_store) or the loads
# (compute_only) carry it.
set -u
B=.dev/r1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
R=$OUT/r3; mkdir -p $R
cp $B/COMMIT $R/commit.txt
W='"family":"wgmma","bk":64,"group_m":8,"epi_smem":true'
O="$W,\"bm\":64,\"bn\":128,\"stages\":8,\"consumers\":1,\"inflight\":true"
A="$W,\"bm\":128,\"bn\":128,\"stages\":6,\"consumers\":2,\"inflight\":false"
Q="$W,\"bm\":128,\"bn\":64,\"stages\":8,\"consumers\":2,\"inflight\":false"
S="$W,\"bm\":128,\"bn\":96,\"stages\":6,\"consumers\":2,\"inflight\":false"
C=()
for t in "$O" "$A" "$Q" "$S"; do
  C+=(--config "{$t,\"cluster_m\":1}" --config "{$t,\"cluster_m\":2}")
done
C+=(--config "{$O,\"cluster_m\":1,\"cluster_n\":2}" --config "{$Q,\"cluster_m\":1,\"cluster_n\":2}")
for s in 1000x1000x1000 1024x1024x1000 1024x1024x1024 1000x1000x1024; do
  timeout 120 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --json --cache-dir /tmp/cg-r3 "${C[@]}" > $R/tune-$s.json 2> $R/tune-$s.err
  python3 - "$R/tune-$s.json" "$s" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    f = {t['config']: t['us'] for t in d['timings']}
    f.update({t['config']: t['us'] for t in d['final_round']})
    print(sys.argv[2], ' | '.join(f"{c.replace('wgmma ','').replace(' inflight 0 group 8','').replace(' inflight 1 group 8','')} {u:.2f}" for c, u in sorted(f.items(), key=lambda x: x[1])))
except Exception as e:
    print(sys.argv[2], 'failed', e, open(sys.argv[1].replace('.json','.err')).read()[-400:])
PY
done
for s in 1016x1024x1024 1024x1024x1024 1024x970x1024; do
  timeout 120 $B/crossgemm diagnose --shape $s --dtype f16 --epilogue none --cache-dir /tmp/cg-r3 --config "{$O,\"cluster_m\":1}" > $R/diagnose-$s.txt 2>&1; echo "diagnose $s rc=$?"
  sed -n '/variants/,/roof/p' $R/diagnose-$s.txt
done
cd $OUT && tar czf r3.tgz r3 && rm -rf r3
