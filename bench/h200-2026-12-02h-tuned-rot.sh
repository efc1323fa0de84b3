#!/usr/bin/env bash
# Session j, batch h (binaries of `scripts/dev-build.sh .dev/tuned`, and crossgemm-sk: the
# CLI built with `streamk-candidates`): the decode family with the rotated walk as a tuned
# tile dimension (a rotated twin of each 16/32-row tile of 16-column warps: 15 configs).
# Expected: the best of batches b and g per shape: 32x4096x4096 ~16.5 us, 16x4096x11008
# back to ~31.0, the rest as in -02b. Also: which stream-K configs a tune at
# 2048x11008x4096 times now (the plan makes room for them since f8112ac), and the PTX of
# the gemv kernel through NVIDIA's OpenCL (its 16-byte `vload_half8`: vector loads or
# 2-byte ones?).
set -u
B=${B:-.dev/tuned}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
SAN=/usr/local/cuda/bin/compute-sanitizer
R=$OUT/h; mkdir -p $R
cp $B/COMMIT $R/commit.txt
$B/crossgemm devices > $R/devices.txt 2>&1
CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-san timeout 90 $SAN --tool memcheck $B/kernels --test-threads 1 decode_configs_give_the_same_bits_twice > $R/san-decode-memcheck.log 2>&1; echo "decode memcheck rc=$?"
grep -E "ERROR SUMMARY|test result" $R/san-decode-memcheck.log
S="--shape 16x4096x4096 --shape 16x12288x4096 --shape 16x4096x11008 --shape 16x11008x4096 --shape 1x12288x4096 --shape 1x4096x11008 --shape 1x11008x4096 --shape 8x4096x4096 --shape 32x4096x4096"
CROSSGEMM_CACHE_DIR=/tmp/cg-b timeout 280 $B/crossgemm bench $S --max 48 --dtypes f16,bf16 --epilogues none,bias_relu,bias_gelu --out $R --name decode --against bench/results/h200-2026-12-02b/decode.json > $R/decode.log 2>&1; echo "bench rc=$?"
grep -E "^\| [0-9]" $R/decode.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -54
CROSSGEMM_CACHE_DIR=/tmp/cg-b $B/crossgemm cache export $R/records-decode.json 2>&1 | tail -1
CROSSGEMM_CACHE_DIR=/tmp/cg-sk timeout 90 $B/crossgemm-sk tune --shape 2048x11008x4096 --dtype f16 --epilogue none --max 96 --json > $R/tune-sk-2048x11008x4096.json 2> $R/tune-sk.log; echo "tune sk rc=$?"
python3 -c "
import json
d=json.load(open('$R/tune-sk-2048x11008x4096.json'))
t=sorted(d['timings'], key=lambda t: t['us'])
print('timed', len(t), 'stream-K among them', sum('streamk' in x['config'] or 'stream' in x['config'] for x in t))
for x in t[:6]: print('  %.1f %s' % (x['us'], x['config']))
for x in t:
  if 'stream' in x['config']: print('  sk %.1f %s' % (x['us'], x['config']))
"
OCL=$(grep -iE "opencl:[0-9]+:[0-9]+.*(NVIDIA|H200)" $R/devices.txt | grep -oE "opencl:[0-9]+:[0-9]+" | head -1)
echo "nvidia opencl: $OCL"
CROSSGEMM_CACHE_DIR=/tmp/cg-ocl timeout 100 $B/crossgemm bench --device $OCL --shape 1x12288x4096 --dtypes f16 --epilogues none --out $R --name nvidia-opencl > $R/nvidia-opencl.log 2>&1; echo "opencl bench rc=$?"
grep -E "^\| [0-9]" $R/nvidia-opencl.md | cut -d'|' -f2,4,5,17
mkdir -p $R/opencl-bin && cp -r /tmp/cg-ocl/bin/. $R/opencl-bin/ 2>/dev/null; ls /tmp/cg-ocl/bin | head -3; du -sh $R/opencl-bin
cd $OUT && tar czf h.tgz h && rm -rf h
