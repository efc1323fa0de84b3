#!/usr/bin/env bash
# Session x, batch x5 (.dev/x2s: the CLI at bdb430a; .dev/w1c: the CLI at bf92432, before
# the turned-around forms): products with N <= 8 through NVIDIA's OpenCL on the H200, where
# the gemv family's turned-around form is the only new kernel (decode is CUDA only), beside
# the plain mirror 1x12288x4096. cuBLAS beside it as every bench row has it.
# Written before: before, these rows ran on the simt tiles (64x64-class work-groups, N <= 8
# pads most of each); the gemv form streams A as the plain form streams B at
# 1x12288x4096, so the narrow rows should land within ~10% of that mirror and several
# times faster than before.
B=.dev/x2s
source bench/lib.sh x5
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
$B/crossgemm devices > $R/devices.txt 2>&1
OCL=$(grep -iE "opencl:[0-9]+:[0-9]+.*(NVIDIA|H200)" $R/devices.txt | grep -oE "opencl:[0-9]+:[0-9]+" | head -1)
echo "nvidia opencl: $OCL"
S="--shape 12288x1x4096 --shape 4096x1x11008 --shape 12288x4x4096 --shape 1x12288x4096"
timeout 200 .dev/w1c/crossgemm bench --device $OCL $S --cache-dir /tmp/cg-x5-before --max 48 --dtypes f16 --epilogues none,bias_relu --out $R --name before > $R/before.log 2>&1; echo "before rc=$?"
timeout 200 $B/crossgemm bench --device $OCL $S --cache-dir /tmp/cg-x5 --max 48 --dtypes f16 --epilogues none,bias_relu --out $R --name opencl --against $R/before.json > $R/opencl.log 2>&1; echo "opencl rc=$?"
python3 -c "
import json
for f in ['before','opencl']:
  for r in json.load(open('$R/'+f+'.json'))['rows']:
    print(f, r['m'],r['n'],r['k'],r['dtype'],r['epilogue'],round(r['ours_us'],1),round(r['cublas_us'] or 0,1),round(r['speedup_vs_cublas'] or 0,2),r['wrong'],r['config'])
"
finish
