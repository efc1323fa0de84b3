#!/usr/bin/env bash
# H200, 2026-12-01 afternoon, call 5 (issue 12): first calls in fresh processes again,
# after the variant check learned to compile while it makes its operands and to make
# them on every core (same four cases as h200-2026-12-01b-first-call-log.sh). Then the
# runtime's OpenCL unit test on the GPU machine's PoCL 5.0 with the generated sources
# dumped (call 2: zeros for f32 there, not on PoCL 3.1 here).
set -u
B=.dev/s2
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(cat $B/COMMIT)
mkdir -p $OUT/h /tmp/fc
for s in 4096x4096x4096 16x12288x4096 1x12288x4096 1024x1024x1024; do
  CROSSGEMM_LOG=1 CROSSGEMM_CACHE_DIR=/tmp/cg-log2-$s timeout 60 $B/crossgemm bench --first-call --shape $s --dtypes f16 --epilogues bias_gelu --no-vendor --runs 10 --out /tmp/fc --name fresh-$s > $OUT/h/fresh-$s.log 2>&1
  echo "fresh $s rc=$?"; grep -E "nvrtc sm_90a? cg_gemm_f16_bias_gelu|first call" $OUT/h/fresh-$s.log | cut -c1-100,200-330
done
CROSSGEMM_DUMP=$OUT/h/dump CROSSGEMM_TEST_DEVICES=opencl:0:0 timeout 60 $B/runtime_tests opencl_generated_gemm --nocapture > $OUT/h/pocl-unit.log 2>&1; echo "pocl unit rc=$?"
grep -E "test result|wrong" $OUT/h/pocl-unit.log | cut -c1-300 | head -5; ls $OUT/h/dump | head
