#!/usr/bin/env bash
# Session t, batch t8: batch t7 found our wgmma winner and cuBLAS's kernel at
# 128x12288x4096 6-8 us longer between CUDA events (after the bench's 120 MiB overwrite)
# than their Nsight Compute duration, the decode kernel 2.4. Hypothesis (written before):
# a kernel asking for most of the shared memory waits after the memset for the SMs to
# change their L1/shared carveout; an empty kernel with 216 KB of dynamic shared memory
# takes several us longer between events than one with none, and not when an untimed
# launch with the same shared memory comes between the memset and the events.
set -u
mkdir -p $OUT/t8
timeout 120 python3 bench/carveout.py > $OUT/t8/carveout.txt 2>&1; echo "carveout rc=$?"
cat $OUT/t8/carveout.txt
cd $OUT && tar czf t8.tgz t8 && rm -rf t8
