#!/usr/bin/env bash
# Session av, batch av2: the first GPU run of `acc = tf32x3` (gemm_core::split3: f32
# operands split into tf32 hi/lo parts, three tf32 products at 3K on any tf32 kernel).
# 1. Correct on CUDA: tests/tf32x3.rs (every layout at f32's tolerance, every planned
#    config, the fused epilogue on a batch of views, and tf32 against tf32x3 at
#    64x64x4096: the split meets f32's tolerance, plain tf32 misses it), the runtime's
#    split-kernel tests (bit-exact against the host twin), compute-sanitizer memcheck on a
#    first call of an odd shape with the fused epilogue; every planned config last (its
#    NVRTC builds take minutes).
# 2. Speed: tf32x3, exact f32 (simt) and plain tf32 tuned (`--max 16`) beside cuBLAS in
#    one process (cuBLAS: exact f32 SGEMM for f32 and tf32x3, FAST_TF32 for tf32).
# Binaries: scripts-style folder B=.dev/NAME with crossgemm, tf32x3 and runtime_tests
# (gzipped). Carry: [B]. ~6 min.
# Written before: tf32x3 at 1.8-2.4x cuBLAS's SGEMM on 2048^3 and larger squares and the
# M = 2048 LLM shape (3x a tf32 GEMM of 0.45-0.5 ms at 4096^3 on wgmma, ~1.3-1.5 ms with
# the split's ~0.15 ms, against SGEMM's ~2.8 ms); about 1.0x at 1000^3; slower than
# SGEMM at 16 and 128 rows (B read three times and split first), where exact f32 wins.
BATCH=${BATCH:-av2}
B=${B:?name the binaries folder}
source bench/lib.sh $BATCH
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
suite tf32x3 120 tf32x3 --skip every_planned_config
suite runtime-split 120 runtime_tests split
timeout 120 compute-sanitizer --tool memcheck --print-limit 5 $B/crossgemm bench --first-call --shape 67x45x77 \
  --dtypes tf32x3 --epilogues bias_relu --runs 10 --warmup 1 --no-vendor --cache-dir /tmp/cg-$BATCH-san \
  --out $R --name sanitizer > $R/sanitizer.log 2>&1; echo "sanitizer rc=$?"; tail -2 $R/sanitizer.log
S=""
for s in ${SPEED_SHAPES:-1024x1024x1024 2048x2048x2048 4096x4096x4096 8192x8192x8192 2048x11008x4096 \
    128x8192x8192 16x4096x4096 1000x1000x1000 3000x5000x700}; do S="$S --shape $s"; done
timeout ${SPEED_S:-330} $B/crossgemm bench $S --dtypes tf32x3,f32,tf32 --epilogues none --max 16 \
  --cache-dir /tmp/cg-$BATCH --out $R --name speed > $R/speed.log 2>&1; echo "speed rc=$?"
python3 bench/rows.py $R/speed.json
timeout 100 $B/crossgemm bench --shape 2048x11008x4096 --dtypes tf32x3 --epilogues bias_gelu --max 16 \
  --cache-dir /tmp/cg-$BATCH --out $R --name fused > $R/fused.log 2>&1; echo "fused rc=$?"
python3 bench/rows.py $R/fused.json
# Every planned config last: NVRTC builds each (minutes at the wgmma tiles' count).
suite tf32x3-configs ${CONFIGS_S:-150} tf32x3 every_planned_config
finish
