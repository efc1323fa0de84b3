#!/usr/bin/env bash
# Session av, batch av1: does a rested final round pick the tile that wins in both
# regimes? Batch au3 found, at 2048x11008x4096 f16 on an H100, 192x192 ahead of the
# tuner's 128x128 when benched cool (255 vs 266 µs) and still ahead hot (293-294 vs
# 297-298, the SM clock at ~1545 of 1980 MHz under the power cap); the clock drops within
# 100 ms of load and is back at 1980 within ~200 ms of rest (clocks-*.csv there). A full
# tune's final round runs after seconds of load, hot, where the two lie within the 1%
# tie band and the tie goes to the planner's first, 128x128. CROSSGEMM_FINAL_REST_MS=200
# (an experiment switch, results/h100-2026-12-07av1/exp-final-rest.patch) makes the final round rest 200 ms (device
# idle) before each burst of CROSSGEMM_FINAL_BURST=8 rounds (6 finalists: ~15 ms of load
# a burst), so that it times the finalists at the boost clock, as the bench and a first
# call do. Full f16 tunes (none; the shipped tables as seeds, an empty cache), the arms
# alternating process by process, at three shapes; then each distinct pick benched cool
# beside cuBLAS (`--runs 20`). Binaries: B=.dev/NAME (the CLI with the switch). Carry:
# [B]. ~6 min.
# Written before: rest 0 picks 128x128 at 2048x11008x4096 as at1/at3/at5 did; rest 200
# picks 192x192 (its final-round median within 2% of au3's cool 255 µs); at 4096^3 and
# 1000^3 both arms pick the same tile or tiles the bench puts within 1%.
BATCH=${BATCH:-av1}
B=${B:?name the binaries folder}
source bench/lib.sh $BATCH
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
unset CROSSGEMM_IGNORE_TABLES
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
for S in ${SHAPES:-2048x11008x4096 4096x4096x4096 1000x1000x1000}; do
  for round in 1 2; do for rest in 0 200; do
    tag=$S-r$rest-$round
    nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv,noheader -lms 100 > $R/clocks-$tag.csv &
    smi=$!
    CROSSGEMM_FINAL_REST_MS=$rest timeout 150 $B/crossgemm tune --shape $S --dtype f16 --epilogue none --json \
      --cache-dir /tmp/cg-$BATCH-$tag > $R/tune-$tag.json 2> $R/tune-$tag.err
    kill $smi 2>/dev/null; wait $smi 2>/dev/null
    python3 bench/tune_summary.py "$S rest $rest round $round" $R/tune-$tag.json | cut -c1-400
  done; done
  # Each distinct pick, benched cool beside cuBLAS and cuBLASLt.
  python3 -c "
import json, glob, sys
seen = []
for f in sorted(glob.glob('$R/tune-$S-r*.json')):
    try: c = json.load(open(f))['best_config']
    except Exception: continue
    if c not in seen: seen.append(c)
print('\n'.join(json.dumps(c) for c in seen))" > $R/picks-$S.txt
  i=0
  while read -r c; do
    i=$((i+1))
    timeout 90 $B/crossgemm bench --shape $S --dtypes f16 --epilogues none --config "$c" --runs 20 \
      --cache-dir /tmp/cg-$BATCH-bench --out $R --name bench-$S-$i > $R/bench-$S-$i.log 2>&1
    python3 bench/rows.py $R/bench-$S-$i.json | sed -n 2p
  done < $R/picks-$S.txt
done
finish
