#!/usr/bin/env bash
# Session al, batch al5: which across decode tile a default should be, and what failed in
# al4's tune at 4096x8x4096 ("3 tuning candidates failed"). Runs on an H100 or an H200.
# Binaries: .dev/al3c (the across decode), .dev/al1c (before it). Carry: [".dev/al3c",
# ".dev/al1c"]. ~3 minutes.
# 1. `tune --json` at 4096x8x4096 (W row-major) with each binary: the failed candidates
#    and why (do they predate the across decode?).
# 2. The turned across tiles of 8 and 16 rows (8 warps over K, unroll 4), each with its
#    walk rotated and not, timed together (`tune --config`, two processes) at
#    4096x8x4096, 12288x1x4096 and 12288x16x4096.
# Written before (al4: 8 rows unrotated 25.0 us as a first call, 16 rows rotated 18.9
# tuned, 16 rows unrotated 20.2 in diagnose's neighbours): rotation pays where the grid
# is one wave (256 blocks at 4096 rows) and not at 12288 rows (768 blocks; the 8-row
# unrotated tile won there), and 8 rows rotated ties 16 rows rotated at N <= 8.
BATCH=${BATCH:-al5}
B=.dev/al3c
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
for b in .dev/al1c $B; do
  n=$(basename $b)
  timeout 90 $b/crossgemm tune --shape 4096x8x4096 --w-layout row --dtype f16 --epilogue none --json --cache-dir /tmp/cg-$BATCH-$n > $R/tune-n8-$n.json 2> $R/tune-n8-$n.err; echo "tune $n rc=$?"
  python3 -c "import json,sys; d=json.load(open('$R/tune-n8-$n.json')); print('$n', d.get('best'), d.get('best_us')); [print('  failed:', str(f)[:400]) for f in d.get('failed', [])]"
done
dc() { echo "{\"family\":\"decode\",\"mt\":$1,\"nt\":1,\"warps\":8,\"kw\":8,\"unroll\":4,\"rot\":$2,\"swap\":true}"; }
C=(--config "$(dc 1 false)" --config "$(dc 1 true)" --config "$(dc 2 false)" --config "$(dc 2 true)")
for s in 4096x8x4096 12288x1x4096 12288x16x4096; do for round in 1 2; do
  timeout 90 $B/crossgemm tune --shape $s --w-layout row --dtype f16 --epilogue none --json --cache-dir /tmp/cg-$BATCH-c-$s-$round "${C[@]}" > $R/cfg-$s-$round.json 2> $R/cfg-$s-$round.err
  python3 bench/tune_summary.py "$s round $round" $R/cfg-$s-$round.json
done; done
finish
