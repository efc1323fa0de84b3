#!/usr/bin/env bash
# H200, 2026-12-01 afternoon, call 7 (issue 12): NVRTC's --Ofast-compile=max
# (CROSSGEMM_FAST_COMPILE=1) against the default, first call and kernel time, fresh
# processes, empty caches, the shipped tables (the four cases of the first-call runs).
# Result (results/h200-2026-12-01b/fast-compile/): the JIT took 100-232 ms instead of
# 103-1519 ms, and the kernels ran 40-400x slower (78 ms instead of 185 us at 4096^3),
# so the switch was removed again; the binary that ran this had it (built from the
# commit before this script's, plus a one-line option in nvrtc_options).
set -u
B=.dev/s2
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p $OUT/q /tmp/fq
for fast in 0 1; do for s in 4096x4096x4096 16x12288x4096 1x12288x4096 1024x1024x1024 3000x5000x700; do
  CROSSGEMM_FAST_COMPILE=$fast CROSSGEMM_LOG=1 CROSSGEMM_CACHE_DIR=/tmp/cg-q$fast-$s timeout 60 $B/crossgemm bench --first-call --shape $s --dtypes f16 --epilogues bias_gelu --out /tmp/fq --name q$fast-$s > $OUT/q/fast$fast-$s.log 2>&1
  echo "fast=$fast $s rc=$? $(grep -o 'ours [0-9.]* us' $OUT/q/fast$fast-$s.log) $(grep -o 'cuBLAS [0-9.]* us' $OUT/q/fast$fast-$s.log) $(grep -o 'err [0-9.e-]*' $OUT/q/fast$fast-$s.log | head -1) $(grep -o 'first call [0-9]* ms' $OUT/q/fast$fast-$s.log) nvrtc $(grep -o 'cg_gemm_f16_bias_gelu[^]]*\] [0-9.]* ms' $OUT/q/fast$fast-$s.log | grep -o '[0-9.]* ms$')"
done; done
