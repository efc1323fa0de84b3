#!/usr/bin/env bash
# Session q, batch q4. Binary .dev/q4n: f599a8b plus the `no_store` diagnosis variant
# (committed right after as 1fd4534) and an experiment-only hook, CG_X_ONE="bm,bn,stages,
# consumers,pingpong[,cluster_m,cluster_n]", which plans that one wgmma tile (the patch is
# in the results folder).
# 1. 1000^3 (0.79x cuBLAS, whose kernel is 72x128 tiles in 2x4 clusters): smaller tiles
#    on every SM lose to 128x128 on 64 SMs (13.6 against 11.9 us), as if the L2's reads
#    were the limit; clusters that share both operands cut those reads in half (2x2) or
#    by a quarter (2x1). Expected: a small tile in a 2x2 cluster under 11.9 us if the L2's
#    reads limit; no better if latency does.
# 2. `diagnose` with the no_store variant at 4096x4096x128 (store-bound by batch p1's
#    reading: expected no_store at 60-70% of the full time) and 1000^3.
# (A third part, Nsight Compute on a storers twin, was cut before the run: the device
# refused several starts and the session's device time ran low.)
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_IGNORE_TABLES=1
R=$OUT/q4; mkdir -p $R
cp .dev/q4n/COMMIT $R/commit-q4n.txt
one() { # binary name tile shape [prepend]
  local b=$1 n=$2; export CG_X_ONE=$3 CG_X_PREPEND="${5:-}"
  CROSSGEMM_COMMIT="$(head -1 $b/COMMIT)-x" timeout 60 $b/crossgemm tune --shape $4 --dtype f16 --epilogue none --max 1 --thorough --json --cache-dir /tmp/cg-$n > $R/tune-$n.json 2> $R/tune-$n.log
  python3 -c "import json;d=json.load(open('$R/tune-$n.json'));print('$n', ['%.2f %s'%(x['us'],x['config']) for x in d['timings']], d.get('failed'))" 2>&1 | tail -1
}
K=1000x1000x1000
for x in "k128 128,128,6,2,0" "k128q 128,128,6,2,0,2,2" "k12864 128,64,8,2,0" "k12864c 128,64,8,2,0,2,1" "k12864q 128,64,8,2,0,2,2" \
         "k64128 64,128,8,1,0" "k64128c 64,128,8,1,0,2,1" "k64128q 64,128,8,1,0,2,2" "k64128q2 64,128,8,2,1,2,2" "k6464q 64,64,8,1,0,2,2"; do
  set -- $x; one .dev/q4n $1 $2 $K
done
unset CG_X_ONE CG_X_PREPEND
export CROSSGEMM_COMMIT="$(head -1 .dev/q4n/COMMIT)-nostore"
for x in "4096x4096x128 none" "1000x1000x1000 none"; do
  set -- $x
  timeout 100 .dev/q4n/crossgemm tune --shape $1 --dtype f16 --epilogue $2 --max 24 --cache-dir /tmp/cg-d > /dev/null 2>&1
  timeout 100 .dev/q4n/crossgemm diagnose --shape $1 --dtype f16 --epilogue $2 --cache-dir /tmp/cg-d > $R/diagnose-$1-$2.txt 2>&1; echo "diagnose $1 $2 rc=$?"
  grep -E "full|load_only|no_epilogue|compute_only|no_store|verdict|costs|bound" $R/diagnose-$1-$2.txt | head -12
done
cd $OUT && tar czf q4.tgz q4 && rm -rf q4
