#!/usr/bin/env bash
# Session at, batch at1: tuning records for the H100. No H200 came in sessions aq-as and
# H100s did; on an H100 first calls run the nearest H200 record as a starting point (a
# record is a winner only on the device it was measured on), and as1 showed where that
# costs: bf16 2048x11008x4096 runs the H200's cluster-2 winner at 0.91x cuBLAS, f16 the
# 128x128 tile at 0.96x. This tunes the bench table's f16 and bf16 rows on the H100
# (`crossgemm bench`, every case tuned; the H200 records timed first as starting points)
# and exports the cache as records, for `records/h100.json`.
# Binaries: the CLI of `cargo build --release --features baseline,aot --bin crossgemm` at
# the head, B=.dev/NAME. Carry: [B]. ~9 min.
# Written before: the tuned rows within 1% of as1's first calls but for the rows whose
# H200 winner is a cluster or a 128x128 tile (2048x11008x4096: bf16 0.91x -> >= 0.97x).
BATCH=${BATCH:-at1}
B=${B:?name the binaries folder}
source bench/lib.sh $BATCH
unset CROSSGEMM_IGNORE_TABLES
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
for dt in ${DTYPES:-f16 bf16}; do
  timeout ${LIMIT:-270} $B/crossgemm bench --dtypes $dt --cache-dir /tmp/cg-$BATCH --out $R --name tuned-$dt > $R/$dt.log 2>&1; echo "bench $dt rc=$?"
  [ -e $R/tuned-$dt.json ] && python3 bench/rows.py $R/tuned-$dt.json | tail -3
  # A bench cut short still leaves its tuned cases in the cache.
  $B/crossgemm --cache-dir /tmp/cg-$BATCH cache export $R/records-h100.json > $R/export.log 2>&1; echo "export rc=$?"
done
gzip -9 -k $R/records-h100.json
finish
