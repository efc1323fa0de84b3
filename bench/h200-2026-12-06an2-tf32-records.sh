#!/usr/bin/env bash
# Session an, batch an2: tf32 tuned over the table's rows of 1 and 16 rows whose records
# are stale (skinny's 16x4096x4096, the llm rows of 1 and 16), none, bias_relu and
# bias_gelu (12 candidates a case), beside cuBLAS's tf32 GEMM, with the decode family's tf32 tiles (session an)
# among the candidates, and the tuning cache exported as records: records/h200.json's
# tf32 buckets of few rows were tuned before those tiles (gemm-core's estimate test counts
# them apart). Needs an H200 (the records are the H200's). Binaries: .dev/an1c (the CLI
# with tf32 decode). Carry: [".dev/an1c"]. ~4 minutes.
# Written before: 16x4096x4096 from the records' 29.1 µs (wgmma 64x128 split in 2) to
# about 20 (decode, 64 MB at the f16 rows' rate per byte), 1.4x cuBLAS; the M = 1 rows
# tie gemv's (already reading at the f16 decode rows' rate).
BATCH=${BATCH:-an2}
B=${B:-.dev/an1c}
source bench/lib.sh $BATCH
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
# The table's rows whose buckets records/h200.json holds stale (16x16384x4096,
# 16x4096x16384, 16x4096x4096, 1x16384x4096, 1x4096x16384).
S=(--shape 16x4096x4096 --shape 1x12288x4096 --shape 16x12288x4096 --shape 1x4096x11008 --shape 16x4096x11008)
timeout 270 $B/crossgemm bench "${S[@]}" --dtypes tf32 --epilogues none,bias_relu,bias_gelu --max 12 \
  --cache-dir /tmp/cg-$BATCH --out $R --name tf32 > $R/tf32.log 2>&1; echo "bench tf32 rc=$?"
python3 bench/rows.py $R/tf32.json | tail -30
$B/crossgemm --cache-dir /tmp/cg-$BATCH cache export $R/records-tf32.json > $R/export.log 2>&1; echo "export rc=$?"
finish
