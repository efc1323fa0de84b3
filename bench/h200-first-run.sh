#!/usr/bin/env bash
# What made bench/results/h200-2026-11-29/*.log (the first two device calls), run from
# the repo root on the GPU machine with the release binaries copied into .dev/:
#   cargo test --release --workspace --no-run; cargo build --release --examples
#   cp target/release/deps/kernels-* .dev/kernels; cp target/release/deps/gemm_runtime-* .dev/runtime_tests
#   cp target/release/examples/{quickstart,throughput} .dev/
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-${1:-bench-out}}; mkdir -p "$OUT"
cd .dev
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv | tee $OUT/gpu.txt
./quickstart 2>&1 | tee $OUT/quickstart.log
timeout 60 compute-sanitizer --tool memcheck ./quickstart 67 45 77 2>&1 | tail -5 | tee $OUT/sanitizer.log
CROSSGEMM_TEST_DEVICES=cuda:0 timeout 200 ./kernels --test-threads 3 2>&1 | tee $OUT/kernels-cuda.log
CROSSGEMM_LOG=1 timeout 120 ./throughput --configs 6 --reps 10 2>$OUT/throughput-log.txt | tee $OUT/throughput.log
./runtime_tests cuda 2>&1 | tail -3 | tee $OUT/runtime-cuda.log
# NVIDIA's OpenCL device, then every planned CUDA config timed.
clinfo -l 2>&1 | tee $OUT/clinfo.txt
NV=$(CROSSGEMM_DEVICE=opencl-gpu ./quickstart 8 8 8 2>&1 | sed -n 's/.*(\(opencl:[0-9]*:[0-9]*\),.*/\1/p' | head -1)
CROSSGEMM_DEVICE=$NV ./quickstart 2>&1 | tee $OUT/quickstart-nvidia-opencl.log
CROSSGEMM_TEST_DEVICES=$NV timeout 200 ./kernels --test-threads 3 2>&1 | tee $OUT/kernels-nvidia-opencl.log
CROSSGEMM_DEVICE=$NV timeout 60 ./throughput --configs 4 --reps 5 4096x4096x4096 1024x1024x2048 2>&1 | tee $OUT/throughput-nvidia-opencl.log
timeout 240 ./throughput --configs 48 --reps 10 --verbose 4096x4096x4096 128x12288x4096 16x4096x4096 2>&1 | tee $OUT/throughput-all-configs.log
