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
t() { # name timeout binary args...
  local n=$1 s=$2 bin=$3; shift 3
  timeout $s $B/$bin --test-threads 8 "$@" > $R/$n.log 2>&1; echo "$n rc=$?"
  grep -E "test result|panicked|FAILED" $R/$n.log | head -4
}
t kernels 240 kernels
t epilogue 60 epilogue_values
finish
cd - > /dev/null
B=$B bash bench/h100-2026-12-06ap1-row-w-f32-epilogues.sh
B=$B bash bench/h100-2026-12-06ao6-one-row.sh
