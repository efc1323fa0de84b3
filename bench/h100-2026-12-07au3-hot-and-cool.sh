#!/usr/bin/env bash
# Session au, batch au3: is the tuner's 128x128 at 2048x11008x4096 wrong, or is the bench
# cool? Sessions at (at4, at5) found that inside a long tune 192x192 runs 279-290 µs and
# 128x128 265-278, while from a cool start (the bench's rows: ~100 runs a row) 192x192 runs
# 252 and 128x128 265-278; the tuner keeps 128x128, and the bench puts it 4-6% behind
# cuBLAS (f16 none 0.96x, bias_relu 0.97x cuBLASLt on the H200 in ap2). Here each config
# is benched beside cuBLAS and cuBLASLt (`bench --config C`, the sides timed together in
# rounds) in two regimes, one config a process, alternating: cool (`--runs 20`, the
# table's) and hot (`--runs 3000 --warmup 300`: ~4 s of back-to-back load a row, so that
# the medians are the power-capped clock's). The SM clock and power are logged every
# 100 ms meanwhile (clocks-*.csv).
# Binaries: the CLI of `cargo build --release --features baseline,aot --bin crossgemm`,
# B=.dev/NAME. Carry: [B]. ~3 min.
# Written before: cool as at4 (192x192 ~5% ahead of 128x128, both behind cuBLAS's ~248);
# hot, the clock drops 10-15% and the compute-bound sides (192x192, cuBLAS) slow by as
# much while 128x128 slows less: 128x128 at or past cuBLAS and ahead of 192x192.
BATCH=${BATCH:-au3}
B=${B:?name the binaries folder}
source bench/lib.sh $BATCH
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
S=${S:-2048x11008x4096}
C1=$(cfg 64 128 128 6 2 false); C2=$(cfg 64 192 192 4 3 false)
for round in 1 2; do
  for regime in cool hot; do
    [ $regime = cool ] && RUNS="--runs 20" || RUNS="--runs ${HOT_RUNS:-3000} --warmup 300"
    for i in 1 2; do
      [ $i = 1 ] && c=$C1 || c=$C2
      tag=$regime-c$i-$round
      nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 100 > $R/clocks-$tag.csv &
      smi=$!
      timeout 120 $B/crossgemm bench --shape $S --dtypes f16 --epilogues none,bias_relu --config "$c" $RUNS \
        --cache-dir /tmp/cg-$BATCH --out $R --name bench-$tag > $R/bench-$tag.log 2>&1; rc=$?
      kill $smi 2>/dev/null; wait $smi 2>/dev/null
      echo "$tag rc=$rc"
      python3 bench/rows.py $R/bench-$tag.json | sed -n 2,3p
      python3 - $R/clocks-$tag.csv <<'PY'
import sys
rows = [l.split(", ") for l in open(sys.argv[1]) if l.count(",") >= 3]
clk = [float(r[1].split()[0]) for r in rows if r[1].split()[0].replace(".", "").isdigit()]
pw = [float(r[2].split()[0]) for r in rows if r[2].split()[0].replace(".", "").isdigit()]
if clk:
    print(f"   SM clock MHz: min {min(clk):.0f} median {sorted(clk)[len(clk)//2]:.0f} max {max(clk):.0f}; power W max {max(pw):.0f} ({len(clk)} samples)")
PY
    done
  done
done
finish
