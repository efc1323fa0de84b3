#!/usr/bin/env bash
# Session ap, batch ap5: the head's CUDA kernel suites on a GPU (the tests session ao
# changed: decode_n in tf32, its refusal of one row, wgmma reuse; and every family's
# planned configs, the determinism tests, the epilogue ops), then batch ap1 (a row-major W
# in f32 and tf32 with the fused epilogues) and ao6 (one row: gemv_n against decode_n's
# old default) on the same binaries. Any GPU. Binaries: `scripts/dev-build.sh .dev/ap5` at
# the commit in COMMIT, and .dev/ao2c (6696118). Carry: [".dev/ap5", ".dev/ao2c"].
# ~8 minutes.
# Written before: every test passes; ap1 and ao6 as their scripts say.
BATCH=${BATCH:-ap5}
B=${B:-.dev/ap5}
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
suite kernels 240 kernels
suite epilogue 60 epilogue_values
finish
cd - > /dev/null
B=$B bash bench/h100-2026-12-06ap1-row-w-f32-epilogues.sh
B=$B bash bench/h100-2026-12-06ao6-one-row.sh
