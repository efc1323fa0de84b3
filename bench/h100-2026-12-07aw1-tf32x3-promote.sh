#!/usr/bin/env bash
# Session aw, batch aw1: `acc = tf32x3` with promoted accumulators (a43ad1c: the wgmma and
# mma_sync kernels add their accumulator into an f32 sum every k-tile, CG_PROMOTE), on
# either card. av2 (5644528, no promotion) had its error grow linearly with K on wgmma
# tiles: 1.2e-5 at 1000^3, 4.8e-5 at 4096^3, 1.0e-4 at 8192^3 (f32's limit, marked wrong).
# 1. Correct on CUDA: tests/tf32x3.rs but every planned config (last, with what time is
#    left), compute-sanitizer memcheck and racecheck on a first call of an odd shape with
#    the fused epilogue.
# 2. Accuracy and speed: tf32x3 tuned (`--max 16`) beside cuBLAS's exact SGEMM.
# Binaries: B=.dev/NAME with crossgemm (baseline,aot) and tf32x3 (gzipped). Carry: [B].
# ~9 min.
# Written before: errors at or below 1.5e-5 on every shape (SGEMM's own 4-10e-6 against
# the host), not growing with K; speed 5-15% below av2's (the sums take the widest
# tiles away: at most 64 accumulators a consumer thread, 128x128 with two consumers
# rather than 64x256 or 128x256), so 4096^3 ~1.8x SGEMM instead of 2.04x.
BATCH=${BATCH:-aw1}
B=${B:?name the binaries folder}
source bench/lib.sh $BATCH
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
suite tf32x3 100 tf32x3 --skip every_planned_config
for tool in memcheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool --print-limit 5 $B/crossgemm bench --first-call --shape 67x45x77 \
    --dtypes tf32x3 --epilogues bias_relu --runs 3 --warmup 1 --no-vendor --cache-dir /tmp/cg-$BATCH-san-$tool \
    --out $R --name sanitizer-$tool > $R/sanitizer-$tool.log 2>&1; echo "sanitizer $tool rc=$?"; tail -2 $R/sanitizer-$tool.log
done
S=""
for s in ${SPEED_SHAPES:-1000x1000x1000 4096x4096x4096 8192x8192x8192 2048x11008x4096 128x8192x8192}; do S="$S --shape $s"; done
timeout ${SPEED_S:-270} $B/crossgemm bench $S --dtypes tf32x3 --epilogues none --max 16 \
  --cache-dir /tmp/cg-$BATCH --out $R --name speed > $R/speed.log 2>&1; echo "speed rc=$?"
python3 bench/rows.py $R/speed.json
suite tf32x3-configs ${CONFIGS_S:-100} tf32x3 every_planned_config
finish
