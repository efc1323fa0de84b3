#!/usr/bin/env bash
# H200 machine, 2026-12-01 evening, call 6 (issue 14, noticed-not-fixed): the runtime unit
# test opencl_generated_gemm fails on this machine's PoCL 5.0 (zeros from the hand-built
# f32 simt kernel, 32x16x8 tile) and passes on PoCL 3.1 here: dump the OpenCL sources it
# builds on each device (CROSSGEMM_DUMP names carry the device now) to compare.
# Binary: .dev/t2/runtime_tests (see bench/h200-2026-12-01c-suite-tf32-2.sh).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p $OUT/p/dump
clinfo -l > $OUT/p/clinfo.txt 2>&1
CROSSGEMM_DUMP=$OUT/p/dump timeout 60 .dev/t2/runtime_tests opencl_generated_gemm --nocapture > $OUT/p/test.log 2>&1; echo "rc=$?"
grep -E "wrong|panicked|test result|got" $OUT/p/test.log | head -20
ls $OUT/p/dump | head -20
cd $OUT && tar czf p.tgz p && rm -rf p
