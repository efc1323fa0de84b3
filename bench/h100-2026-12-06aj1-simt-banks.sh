#!/usr/bin/env bash
# Session aj, batch aj1: the simt family's bank rule modelled on CUDA's own layout (a pad
# of 4 floats where a thread owns runs of 4, the N-contiguous operand's 8- or 16-byte
# stores) instead of OpenCL's pad of 1. The CUDA plan for f32 loses the 32-wide k-tiles of
# K-contiguous operands (4-way conflicts) and gains 8-wide ones and vw 4 twins, and its
# first config becomes 128x128x16 threads 16x16 vw 4 (the H100's tuned winner at the large
# cubes in ai1) instead of vw 2. Old: .dev/ai2s (3543aac, the plan before); new: .dev/aj1s
# (the CLI at the commit in COMMIT). Carry: [".dev/ai2s", ".dev/aj1s"]. ~8 minutes.
# Written before: untuned calls (the planner's default, no tables) at the large cubes
# 10-25% faster with the new default (vw 4 against vw 2: ai1's tuned 128x128x16 vw 4 ran
# 4096^3 in 3145 us); tuned (24 candidates) within the spread or better, since the budget
# no longer goes to 32-wide k-tiles that lost every tune; every output within its limit.
BATCH=${BATCH:-aj1}
B=.dev/aj1s
source bench/lib.sh $BATCH
S="--shape 1024x1024x1024 --shape 4096x4096x4096 --shape 1000x1000x1000 --shape 3000x5000x700 --shape 16x4096x4096 --shape 128x8192x8192 --shape 4096x4096x128"
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
for arm in old new; do
  bin=.dev/aj1s; [ $arm = old ] && bin=.dev/ai2s
  # The planner's default of each call (`--first-call` with the tables ignored, lib.sh).
  timeout 120 $bin/crossgemm bench --first-call --dtypes f32 --epilogues none $S \
    --cache-dir /tmp/cg-$BATCH-$arm-off --out $R --name $arm-default > $R/$arm-default.log 2>&1; echo "default $arm rc=$?"
  python3 bench/rows.py $R/$arm-default.json | tail -9
done
for arm in old new; do
  bin=.dev/aj1s; [ $arm = old ] && bin=.dev/ai2s
  timeout 200 $bin/crossgemm bench --dtypes f32 --epilogues none --max 24 $S \
    --cache-dir /tmp/cg-$BATCH-$arm --out $R --name $arm-tuned > $R/$arm-tuned.log 2>&1; echo "tuned $arm rc=$?"
  python3 bench/rows.py $R/$arm-tuned.json | tail -9
done
finish
