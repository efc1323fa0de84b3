#!/usr/bin/env bash
# Session au, batch au1: full f32 (the simt kernel) tuning records for the H100, the one
# dtype records/h100.json lacks (session at tuned f16, bf16 and tf32 there). First the
# table's f32 rows as a user's first calls on the shipped tables (the H100 has no f32
# record, so each call starts from the nearest H200 record: the "before"), then the same
# rows tuned (`--max 24`, the shipped tables timed as starting points) and the cache
# exported as records, to be merged into records/h100.json.
# Binaries: the CLI of `cargo build --release --features baseline,aot --bin crossgemm`
# (kernels as at the head), B=.dev/NAME. Carry: [B]. ~8 min on an H100.
# Written before: tuned within 1% of the first calls on the large rows (the H200's simt
# winners, 128x128x16 threads 8x32, should suit the H100 too) and 5-20% faster on the
# 128-row and decode rows where the H200 record's split of K was sized for 132 SMs of a
# faster memory; f32 geomean past 0.9x cuBLAS's SGEMM.
BATCH=${BATCH:-au1}
B=${B:?name the binaries folder}
source bench/lib.sh $BATCH
unset CROSSGEMM_IGNORE_TABLES
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
EPIS="--epilogues none,bias_relu,bias_gelu"
timeout ${FIRST_LIMIT:-150} $B/crossgemm bench --first-call --dtypes f32 $EPIS --cache-dir /tmp/cg-$BATCH-first \
  --out $R --name first-f32 > $R/first.log 2>&1; echo "first calls rc=$?"
[ -e $R/first-f32.json ] && python3 bench/rows.py $R/first-f32.json | tail -3
timeout ${LIMIT:-390} $B/crossgemm bench --dtypes f32 $EPIS --max 24 --cache-dir /tmp/cg-$BATCH \
  --out $R --name tuned-f32 > $R/tuned.log 2>&1; echo "tuned rc=$?"
[ -e $R/tuned-f32.json ] && python3 bench/rows.py $R/tuned-f32.json | tail -3
# A bench cut short still leaves its tuned cases in the cache.
$B/crossgemm --cache-dir /tmp/cg-$BATCH cache export $R/records-h100-f32.json > $R/export.log 2>&1; echo "export rc=$?"
gzip -9 -k $R/records-h100-f32.json
finish
