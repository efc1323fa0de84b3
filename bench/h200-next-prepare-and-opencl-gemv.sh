#!/usr/bin/env bash
# Not run yet (written at the end of 2026-12-01, device time spent). For the next H200
# session, after bench/h200-2026-12-01b-suite-head.sh, from release binaries in .dev/next
# (`cargo build --release --features baseline --bin crossgemm`):
# - issue 12: first calls after `prepare`, in fresh processes and over the table;
# - issue 10: the gemv family's OpenCL form on NVIDIA's OpenCL against the simt kernel
#   it replaces for M <= 8 (the same shapes, CROSSGEMM_DEVICE=opencl:1:0).
set -u
B=.dev/next
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(cat $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1
mkdir -p $OUT/n
for s in 4096x4096x4096 16x12288x4096 1x12288x4096; do
  CROSSGEMM_CACHE_DIR=/tmp/cg-p-$s timeout 90 $B/crossgemm bench --first-call --prepare --shape $s --dtypes f16 --epilogues bias_gelu --no-vendor --out $OUT/n --name prepared-$s > $OUT/n/prepared-$s.log 2>&1
  echo "prepared $s rc=$? $(grep -o 'prepare .*ms' $OUT/n/prepared-$s.log | head -1) $(grep -o 'first call [0-9]* ms ([a-z_]*)' $OUT/n/prepared-$s.log)"
done
CROSSGEMM_CACHE_DIR=/tmp/cg-p timeout 300 $B/crossgemm bench --first-call --prepare --dtypes f16 --out $OUT/n --name prepared-table --against bench/results/h200-2026-12-01b/full-f16-bf16.json > $OUT/n/prepared-table.log 2>&1; echo "table rc=$?"
grep "first calls:" $OUT/n/prepared-table.md
CROSSGEMM_CACHE_DIR=/tmp/cg-ocl timeout 200 $B/crossgemm bench --device opencl:1:0 --shape 1x12288x4096 --shape 8x11008x4096 --shape 1x4096x11008 --dtypes f16 --epilogues none,bias_relu --out $OUT/n --name nvidia-opencl-gemv > $OUT/n/nvidia-opencl.log 2>&1; echo "nvidia opencl rc=$?"
grep -E "ours" $OUT/n/nvidia-opencl.log | cut -c1-160
