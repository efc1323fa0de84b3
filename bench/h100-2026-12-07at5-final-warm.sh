#!/usr/bin/env bash
# Session at, batch at5: does the tuner's final round misjudge because each finalist's
# timed run follows another kernel's? In at4 the final round (finalists interleaved run
# by run) read 192x192 and 128x256 5-8% slower than their own first pass (runs back to
# back) and than the bench, 128x128 only 2% slower, so its gaps shrank (f16 3% where the
# bench sees 12-17%) and a full tune's tie band handed at1 and at3 the 128x128 tile.
# CROSSGEMM_FINAL_WARM=1 (an experiment switch) gives every timed run of the final round
# an untimed launch of the same kernel right before it (each after its flush). Each arm
# alternates with the other process by process: the three configs of at4 (f16 and tf32,
# 2048x11008x4096 none), then a full tune of f16 (48 candidates, an empty cache).
# Binaries: the CLI with the switch, B=.dev/NAME. Carry: [B]. ~3 min.
# Written before: with the switch the final round's medians within 2% of the first pass
# and of at4's bench (f16 192x192 ~251, 128x256 ~267, 128x128 ~283-294 µs), so the full
# tune picks 192x192 (or another tile the bench puts within 2% of it), not 128x128.
BATCH=${BATCH:-at5}
B=${B:?name the binaries folder}
source bench/lib.sh $BATCH
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
S=2048x11008x4096
F16="$(cfg 64 128 128 6 2 false) $(cfg 64 192 192 4 3 false) $(cfg 64 128 256 4 2 false)"
TF32="$(cfg 32 128 128 6 2 false) $(cfg 32 128 176 5 2 false) $(cfg 32 128 256 3 2 false)"
# One line a tune: each config's first-pass median, then its final-round one.
show() {
  python3 - "$1" "$2" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[2]))
except Exception as e:
    print(sys.argv[1], "failed", e); sys.exit()
fin = {t["config"]: t["us"] for t in d.get("final_round", [])}
cut = lambda c: c.replace("wgmma ", "").replace(" cluster 1 inflight 0 group 8", "")
rows = sorted(d.get("timings", []), key=lambda t: t["us"])[:6]
print(sys.argv[1], "| best", cut(d["best"]), "|", " | ".join(
    f"{cut(t['config'])} {t['us']:.1f}" + (f" -> {fin[t['config']]:.1f}" if t["config"] in fin else "") for t in rows))
PY
}
for round in 1 2; do
  for warm in 0 1; do
    for dt in f16 tf32; do
      [ $dt = f16 ] && set -- $F16 || set -- $TF32
      C=(); for c in "$@"; do C+=(--config "$c"); done
      CROSSGEMM_FINAL_WARM=$warm timeout 100 $B/crossgemm tune --shape $S --dtype $dt --epilogue none --json \
        --cache-dir /tmp/cg-$BATCH-$warm-$round "${C[@]}" > $R/three-$dt-w$warm-$round.json 2> $R/three-$dt-w$warm-$round.err
      show "$dt three warm=$warm round $round" $R/three-$dt-w$warm-$round.json
    done
  done
done
unset CROSSGEMM_IGNORE_TABLES
for round in 1 2; do
  for warm in 0 1; do
    CROSSGEMM_FINAL_WARM=$warm timeout 100 $B/crossgemm tune --shape $S --dtype f16 --epilogue none --json \
      --cache-dir /tmp/cg-$BATCH-full-$warm-$round > $R/full-f16-w$warm-$round.json 2> $R/full-f16-w$warm-$round.err
    show "f16 full warm=$warm round $round" $R/full-f16-w$warm-$round.json
  done
done
finish
