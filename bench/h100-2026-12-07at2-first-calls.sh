#!/usr/bin/env bash
# Session at, batch at2: the f16 and bf16 tables as first calls on the H100 with
# records/h100.json shipped (at1's tune), against as1 (the same tables as first calls at
# 7e65700, where an H100 ran the nearest H200 record of each bucket).
# Binaries: the CLI of `cargo build --release --features baseline,aot --bin crossgemm`
# with records/h100.json, B=.dev/NAME. Carry: [B]. ~3.5 min.
# Written before: each row within 2% of at1's tuned time (the first call now runs the
# H100's own winner); bf16 2048x11008x4096 none 265.5 -> ~245 µs (0.91x -> ~0.99x
# cuBLAS); geomean from 1.167/1.166x cuBLAS (as1) to about at1's tuned 1.171/1.174x.
BATCH=${BATCH:-at2}
B=${B:?name the binaries folder}
source bench/lib.sh $BATCH
unset CROSSGEMM_IGNORE_TABLES
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 || { echo "not an H100: as1 does not apply"; exit 3; }
for dt in f16 bf16; do
  timeout 200 $B/crossgemm bench --first-call --dtypes $dt --cache-dir /tmp/cg-$BATCH-$dt --out $R --name first-$dt \
    --against bench/results/h100-2026-12-07as1/first-$dt.json > $R/$dt.log 2>&1; echo "bench $dt rc=$?"
  python3 bench/rows.py $R/first-$dt.json | tail -3
  grep -c table_nearest $R/$dt.log
done
finish
