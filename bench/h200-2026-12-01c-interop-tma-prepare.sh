#!/usr/bin/env bash
# H200, 2026-12-01 evening, call 4. Binaries in .dev/t3 (built at .dev/t3/COMMIT, main
# with the CUDA interop merged: `cargo build --release --features baseline --bin
# crossgemm --example interop_cuda`, `cargo test --release --features baseline --no-run
# --test interop_cuda`).
# 1. issue 13: tests/interop_cuda.rs and examples/interop_cuda.rs on the H200.
# 2. issue 9: does TMA round f32 to tf32 when the map's type is TFLOAT32? The same
#    bench rows with crossgemm (maps of type FLOAT32, the committed code) and
#    crossgemm-tfloat32 (a build whose f32 maps are CU_TENSOR_MAP_DATA_TYPE_TFLOAT32, not
#    committed): if it rounds, ours' error against cuBLAS (which rounds) drops from
#    ~3e-3 to ~1e-4.
# 3. issues 12 and 10 (bench/h200-next-prepare-and-opencl-gemv.sh, shortened): first
#    calls after `prepare` over the table in fresh processes; the gemv family's OpenCL
#    form on NVIDIA's OpenCL.
set -u
B=.dev/t3
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(cat $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
mkdir -p $OUT/i
CROSSGEMM_CACHE_DIR=/tmp/cg-int timeout 120 $B/interop_cuda --test-threads 1 > $OUT/i/interop_cuda.log 2>&1; echo "interop_cuda rc=$?"
CROSSGEMM_CACHE_DIR=/tmp/cg-int timeout 60 $B/interop_cuda_example >> $OUT/i/interop_cuda.log 2>&1; echo "interop example rc=$? $(tail -1 $OUT/i/interop_cuda.log)"
grep -E "^test |test result|panicked" $OUT/i/interop_cuda.log | head -12
for v in crossgemm crossgemm-tfloat32; do
  CROSSGEMM_CACHE_DIR=/tmp/cg-$v timeout 100 $B/$v bench --shape 4096x4096x4096 --shape 1000x1000x1000 --shape 16x4096x11008 --dtypes tf32 --epilogues none,bias_relu --out $OUT/i --name tma-$v > $OUT/i/tma-$v.log 2>&1
  echo "$v rc=$?"; grep -oE "ours [0-9.]+ us|err [0-9.e-]+ \(cuBLAS [0-9.e-]+" $OUT/i/tma-$v.log | paste - - | head -6
done
CROSSGEMM_CACHE_DIR=/tmp/cg-p timeout 220 $B/crossgemm bench --first-call --prepare --dtypes f16 --out $OUT/i --name prepared-table --against bench/results/h200-2026-12-01b/full-f16-bf16.json > $OUT/i/prepared-table.log 2>&1; echo "table rc=$?"
grep -h "first calls:" $OUT/i/prepared-table.md; tail -2 $OUT/i/prepared-table.log
CROSSGEMM_CACHE_DIR=/tmp/cg-ocl timeout 130 $B/crossgemm bench --device opencl:1:0 --shape 1x12288x4096 --shape 8x11008x4096 --shape 1x4096x11008 --dtypes f16 --epilogues none,bias_relu --out $OUT/i --name nvidia-opencl-gemv > $OUT/i/nvidia-opencl.log 2>&1; echo "nvidia opencl rc=$?"
grep -E "ours" $OUT/i/nvidia-opencl.log | cut -c1-170
cd $OUT && tar czf i.tgz i && rm -rf i
