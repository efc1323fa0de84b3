#!/usr/bin/env bash
# Session ai, batch ai3: full f32 (the simt kernel since session ah) over the whole bench
# table, tuned (24 candidates a case, the shipped tables ignored), beside cuBLAS's SGEMM,
# and the tuning cache exported as records for records/h200.json, whose f32 simt winners
# (timed on the kernel before session ah) were removed in 05f8cea. Needs an H200 (the
# records are the H200's). Binaries: .dev/ai2s (the CLI at 3543aac; the simt kernel of
# the head). Carry: [".dev/ai2s"]. ~6 minutes. B and BATCH name other binaries and
# another batch (session al: `B=.dev/al1s BATCH=al1`, the CLI at 6b865b1, for the tall
# simt splits of e2bc4fa and the padding-aware default of 8eb3e6e).
# Written before: every output within its limit; the large cubes 0.85-0.9x cuBLAS (H100,
# ai1: 0.86x at 4096^3), the skinny rows with K split at or past 1.0x, the f32 geomean
# well past 01b's (0.5-0.7x) and past the stale records' first calls (ai2, H100: 0.68x).
BATCH=${BATCH:-ai3}
B=${B:-.dev/ai2s}
source bench/lib.sh $BATCH
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
timeout 480 $B/crossgemm bench --dtypes f32 --epilogues none,bias_relu,bias_gelu --max 24 \
  --cache-dir /tmp/cg-$BATCH --out $R --name f32 > $R/f32.log 2>&1; echo "bench f32 rc=$?"
python3 bench/rows.py $R/f32.json | tail -30
$B/crossgemm --cache-dir /tmp/cg-$BATCH cache export $R/records-f32.json > $R/export.log 2>&1; echo "export rc=$?"
finish
