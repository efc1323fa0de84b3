#!/usr/bin/env bash
# Session z, batch z1 (.dev/z1: the CLI at d9b5cd2, `cargo build --release --features
# baseline,aot --bin crossgemm`): the config a call with nothing measured runs
# (`estimate::default_pick`) against the planner's first, which it was before (the 128x256
# wgmma tile at every shape below), on the shapes where the two differ: tables ignored,
# an empty cache, `bench --first-call` (the default), then `--config` of the planner's
# first; f16, none. Then gemv_n through NVIDIA's OpenCL (row-major w, never measured).
# Written before: the new default 2-5x faster than the planner's first at 8-64 rows of a
# row-major w (y4: 44.9 us at 8x4096x4096 against 19.7 tuned), and at 256x4096x4096,
# 512^3 and 1000^3; 10-40% faster at 128x8192x8192 and 128x12288x4096; each new default
# within ~25% of the tuned rows of v7/y4 where those exist.
B=.dev/z1
source bench/lib.sh z1
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
PF='{"family":"wgmma","bm":128,"bn":256,"bk":64,"stages":4,"consumers":2,"group_m":8,"cluster_m":1,"inflight":false,"epi_smem":true}'
CR="--shape 64x4096x4096 --shape 128x8192x8192 --shape 128x12288x4096 --shape 256x4096x4096 --shape 1000x1000x1000 --shape 512x512x512"
RR="--shape 8x4096x4096 --shape 16x4096x4096 --shape 32x4096x4096 --shape 64x4096x4096 --shape 16x12288x4096 --shape 1000x1000x1000"
run() { # name args...
  local n=$1; shift
  timeout 170 $B/crossgemm bench "$@" --dtypes f16 --epilogues none --out $R --name $n > $R/$n.log 2>&1; echo "$n rc=$?"
}
run cr-default $CR --first-call --cache-dir /tmp/cg-z1-a
run cr-planfirst $CR --config "$PF" --cache-dir /tmp/cg-z1-b
run rr-default $RR --w-layout row --first-call --cache-dir /tmp/cg-z1-c
run rr-planfirst $RR --w-layout row --config "$PF" --cache-dir /tmp/cg-z1-d
$B/crossgemm devices > $R/devices.txt 2>&1
OCL=$(grep -iE "opencl:[0-9]+:[0-9]+.*(NVIDIA|H200)" $R/devices.txt | grep -oE "opencl:[0-9]+:[0-9]+" | head -1)
echo "nvidia opencl: $OCL"
timeout 150 $B/crossgemm bench --device $OCL --shape 1x12288x4096 --shape 1x4096x11008 --shape 4x4096x4096 --w-layout row --cache-dir /tmp/cg-z1-ocl --max 48 --dtypes f16 --epilogues none,bias_relu --out $R --name opencl-wrow > $R/opencl-wrow.log 2>&1; echo "opencl-wrow rc=$?"
python3 -c "
import json
for f in ['cr-default','cr-planfirst','rr-default','rr-planfirst','opencl-wrow']:
  try: rows=json.load(open('$R/'+f+'.json'))['rows']
  except Exception as e: print(f,'missing',e); continue
  for r in rows:
    g=lambda k: round(r[k],2) if r.get(k) else None
    print(f, r['m'],r['n'],r['k'],r['dtype'],r['epilogue'],g('ours_us'),g('cublas_us'),g('speedup_vs_cublas'),r['wrong'],r['config'])
"
finish
