#!/usr/bin/env bash
# Session j, batch i (.dev/sk: crossgemm and crossgemm-sk, the CLI with `streamk-candidates`,
# both at the head): (1) stream-K beside the data-parallel configs with the default
# 48-candidate budget, now that the estimate ranks them with the tiles that fill the
# machine. Expected: 2048x11008x4096 none ~255 us (was 264-274, 0.92-0.93x cuBLAS) and
# no square slower. (2) gemv through NVIDIA's OpenCL with 16-byte loads. Expected:
# 1x12288x4096 from 72.5 us toward 40 (PTX: ld.global.nc.v4.u32, no .u16).
set -u
D=.dev/sk
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $D/COMMIT)
R=$OUT/i; mkdir -p $R
cp $D/COMMIT $R/commit.txt
S="--shape 2048x11008x4096 --shape 2048x12288x4096 --shape 2048x4096x11008 --shape 4096x4096x4096 --shape 2048x2048x2048 --shape 8192x8192x8192"
CROSSGEMM_CACHE_DIR=/tmp/cg-sk timeout 270 $D/crossgemm-sk bench $S --max 48 --dtypes f16 --epilogues none,bias_relu,bias_gelu --out $R --name streamk --against bench/results/nvidia-h200-2026-12-01.json > $R/streamk.log 2>&1; echo "bench sk rc=$?"
grep -E "^\| [0-9]" $R/streamk.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -18
CROSSGEMM_CACHE_DIR=/tmp/cg-dp timeout 120 $D/crossgemm bench $S --max 48 --dtypes f16 --epilogues none --out $R --name dataparallel > $R/dataparallel.log 2>&1; echo "bench dp rc=$?"
grep -E "^\| [0-9]" $R/dataparallel.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -6
CROSSGEMM_CACHE_DIR=/tmp/cg-sk $D/crossgemm-sk cache export $R/records-streamk.json 2>&1 | tail -1
$D/crossgemm devices > $R/devices.txt 2>&1
OCL=$(grep -iE "opencl:[0-9]+:[0-9]+.*(NVIDIA|H200)" $R/devices.txt | grep -oE "opencl:[0-9]+:[0-9]+" | head -1)
echo "nvidia opencl: $OCL"
CROSSGEMM_CACHE_DIR=/tmp/cg-ocl timeout 150 $D/crossgemm bench --device $OCL --shape 1x12288x4096 --shape 1x4096x11008 --shape 1x11008x4096 --dtypes f16,bf16 --epilogues none,bias_relu --out $R --name nvidia-opencl --against bench/results/h200-2026-12-01c/nvidia-opencl-gemv.json > $R/nvidia-opencl.log 2>&1; echo "opencl bench rc=$?"
grep -E "^\| [0-9]" $R/nvidia-opencl.md | cut -d'|' -f2,4,5,17 | head -12
for f in /tmp/cg-ocl/bin/cg_gemm_*; do grep -aoE "ld\.global[.a-z0-9]*" $f | sort | uniq -c | tr '\n' ' '; echo; done | sort | uniq -c | head -8
cd $OUT && tar czf i.tgz i && rm -rf i
