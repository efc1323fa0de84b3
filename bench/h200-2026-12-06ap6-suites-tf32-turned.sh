#!/usr/bin/env bash
# Session ap, batch ap6: the head's CUDA kernel suites on the H200 (every family's planned
# configs, session ao's tf32 decode_n and wgmma reuse, the determinism tests, the epilogue
# values), then tf32 tuned at the table's turned rows (12288x1x4096, 4096x8x4096: 12
# candidates a case, every epilogue) with the tuning cache exported as records for
# records/h200.json, whose tf32 buckets there are empty. Binaries: `scripts/dev-build.sh
# .dev/ap5` at the commit in COMMIT. Carry: [".dev/ap5"]. ~6 minutes.
# Written before: every test passes; tf32 at the turned rows on the decode/gemv turned
# forms, at or past 1.0x cuBLAS's tf32 GEMM.
BATCH=${BATCH:-ap6}
B=${B:-.dev/ap5}
source bench/lib.sh $BATCH
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
suite kernels 200 kernels
suite epilogue 50 epilogue_values
timeout 120 $B/crossgemm bench --shape 12288x1x4096 --shape 4096x8x4096 --dtypes tf32 --epilogues none,bias_relu,bias_gelu --max 12 \
  --cache-dir /tmp/cg-$BATCH --out $R --name tf32-turned > $R/tf32-turned.log 2>&1; echo "bench tf32 rc=$?"
python3 bench/rows.py $R/tf32-turned.json | tail -9
$B/crossgemm --cache-dir /tmp/cg-$BATCH cache export $R/records-tf32-turned.json > $R/export.log 2>&1; echo "export rc=$?"
finish
