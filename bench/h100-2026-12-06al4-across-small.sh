#!/usr/bin/env bash
# Session al, batch al4: where the across decode's time goes at the row-major-W rows of
# batch al3 that stayed under cuBLAS or near it as first calls (4096x8x4096 0.84x,
# 12288x1x4096 1.08x). Full tunes (48 candidates, tables ignored: does another decode
# tile win?), and `diagnose` of each tuned winner (the same cache) (load-only against full: what the across
# loads and movmatrix cost besides the streamed side). Runs on an H100 or an H200.
# Binaries: .dev/al3c (as batch al3). Carry: [".dev/al3c"]. ~3 minutes.
# Written before: 4096x8x4096 is bound by the stream's ramp as the plain decode rows of
# 33.5 MB are (load-only within 10% of full); a tile with 32 rows a block (128 blocks)
# or K split over 4 warps may win by 5-15%. 12288x1x4096: the default wins its tune.
BATCH=${BATCH:-al4}
B=.dev/al3c
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
for s in 4096x8x4096 12288x1x4096; do
  timeout 100 $B/crossgemm bench --cache-dir /tmp/cg-$BATCH-t --shape $s --w-layout row --dtypes f16 --epilogues none --max 48 --out $R --name tune-$s > $R/tune-$s.log 2>&1; echo "tune $s rc=$?"
  grep -E "^\| [0-9]+x" $R/tune-$s.md | head -1 | cut -d'|' -f2-10,17
  timeout 100 $B/crossgemm diagnose --cache-dir /tmp/cg-$BATCH-t --shape $s --w-layout row --dtype f16 --epilogue none > $R/diagnose-$s.txt 2>&1; echo "diagnose $s rc=$?"
  grep -iE "verdict|load.only|compute.only|full" $R/diagnose-$s.txt | head -8
done
finish
