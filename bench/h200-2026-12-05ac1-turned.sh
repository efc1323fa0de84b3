#!/usr/bin/env bash
# Session ac, batch ac1: the wgmma family's turned-around tiles (`tune(turned = 1)`,
# `WgmmaTile::turned`: Cᵀ = Bᵀ·Aᵀ on the same buffers), first run on a GPU.
# Written in session ac, which was lent no device: not run yet. Binaries: .dev/ac1, built at
# e2a8e08 by `scripts/dev-build.sh .dev/ac1 turned-candidates` (the CLI with the `baseline`
# and `turned-candidates` features, whose f16 and bf16 kernels plan the turned tiles, and
# the test binaries). Replaces session ab's ab4 probe (an example with hand-transposed kernels):
# the form is the library's now, so the tests and `crossgemm bench` measure it directly.
# Why: 64 rows of a row-major W are our weakest row-major-W row (0.90-0.92x cuBLAS NN,
# aa6-aa8: the 64-row tiles make 64 blocks at N = 4096, 128 with K split in 2 whose fold
# stalls; 64x32 tiles read W in 64-byte box rows at half TMA's L2 rate, aa1). Turned
# around, the 64 rows are the tile's 32-column side and W an M-major A read in 64-column
# boxes of 128-byte rows: 128 blocks of 64x32 (C's 32x64) with K whole, 18 stages.
# Written before: correct everywhere (the every-config test and compute-sanitizer on the
# turned configs); at 48-64 rows of a row-major W a turned tile wins the tune at ~15.5-
# 16.5 us against the plain 18.1-18.8 (aa6), >= 1.0x cuBLAS NN; a tie or a loss at
# 96-128 rows (the deep ring reads W once per block row as well) and on a column-major W
# at 32 rows (decode wins there). If it wins, it goes into every plan (not only where
# asked) and the records get the buckets it wins.
B=.dev/ac1s  # ac1 with only the CLI and kernels, gzipped to fit the carry
# Two device calls (10 minutes each): PART=1 the checks and the head-to-head tunes, PART=2
# the full benches.
PART=${PART:-1}
source bench/lib.sh ac1-part$PART
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
T="--test-threads 2"
if [ "$PART" = 1 ]; then
# 1. Correct: every turned config of an f16 row-major-B and a bf16 column-major-B kernel
# on the every-config shapes, then compute-sanitizer on them.
timeout 120 $B/kernels $T every_turned_wgmma_config > $R/kernels-turned.log 2>&1; echo "kernels rc=$?"; grep -E "test result|panicked" $R/kernels-turned.log | head -3
CS=/usr/local/cuda/bin/compute-sanitizer
for tool in memcheck racecheck synccheck; do
  timeout 100 $CS --tool $tool $B/kernels --test-threads 1 every_turned_wgmma_config > $R/$tool.log 2>&1; echo "$tool rc=$?"; grep -E "SUMMARY|test result" $R/$tool.log | head -3
done
# 2. The four turned tiles against the tune winners of aa6 at 64 rows (row-major W), two
# processes alternating the order, f16, none and bias+ReLU.
W='"epi_smem":true,"cluster_m":1,"group_m":8,"bk":64'
TURNED=(
  "{\"family\":\"wgmma\",$W,\"bm\":64,\"bn\":32,\"stages\":18,\"consumers\":1,\"inflight\":true,\"turned\":true}"
  "{\"family\":\"wgmma\",$W,\"bm\":64,\"bn\":64,\"stages\":13,\"consumers\":1,\"inflight\":true,\"turned\":true}"
  "{\"family\":\"wgmma\",$W,\"bm\":128,\"bn\":32,\"stages\":10,\"consumers\":2,\"inflight\":false,\"turned\":true}"
  "{\"family\":\"wgmma\",$W,\"bm\":128,\"bn\":64,\"stages\":8,\"consumers\":2,\"inflight\":false,\"turned\":true}"
)
PLAIN=(
  "{\"family\":\"wgmma\",$W,\"bm\":64,\"bn\":64,\"stages\":8,\"consumers\":1,\"inflight\":true,\"ksplit\":2}"
  "{\"family\":\"wgmma\",$W,\"bm\":64,\"bn\":64,\"stages\":13,\"consumers\":1,\"inflight\":true}"
)
C=(); for c in "${TURNED[@]}" "${PLAIN[@]}"; do C+=(--config "$c"); done
for round in 1 2; do for epi in none bias_relu; do for s in 48x4096x4096 64x4096x4096 128x4096x4096; do
  timeout 60 $B/crossgemm tune --shape $s --w-layout row --dtype f16 --epilogue $epi --json --cache-dir /tmp/cg-ac1-$round "${C[@]}" > $R/tune-$s-$epi-$round.json 2> $R/tune-$s-$epi-$round.err
  python3 bench/tune_summary.py "$s row-major W $epi round $round" $R/tune-$s-$epi-$round.json
done; done; done
fi
if [ "$PART" = 2 ]; then
# 3. Full tunes (48 candidates, as aa6: the turned tiles rank among them at 32-128 rows,
# gemm-core/tests/wgmma_turned.rs; tables ignored) beside
# cuBLAS and cuBLASLt, --against aa6 (the same rows' report of record).
S="--shape 32x4096x4096 --shape 48x4096x4096 --shape 64x4096x4096 --shape 96x4096x4096 --shape 128x4096x4096 --shape 64x12288x4096"
timeout 220 $B/crossgemm bench $S --w-layout row --cache-dir /tmp/cg-ac1-wrow --max 48 --dtypes f16 --epilogues none,bias_relu --out $R --name wrow --against bench/results/h200-2026-12-04aa6/wrow.json > $R/wrow.log 2>&1; echo "wrow rc=$?"
S="--shape 32x4096x4096 --shape 64x4096x4096 --shape 128x4096x4096 --shape 128x12288x4096"
timeout 150 $B/crossgemm bench $S --cache-dir /tmp/cg-ac1-wcol --max 48 --dtypes f16 --epilogues none,bias_relu --out $R --name wcol --against bench/results/h200-2026-12-04aa6/wcol.json > $R/wcol.log 2>&1; echo "wcol rc=$?"
for f in wrow wcol; do [ -f $R/$f.json ] && python3 bench/rows.py $R/$f.json; done
$B/crossgemm --cache-dir /tmp/cg-ac1-wrow cache export $R/records-wrow.json > $R/export.log 2>&1
$B/crossgemm --cache-dir /tmp/cg-ac1-wcol cache export $R/records-wcol.json >> $R/export.log 2>&1; echo "export rc=$?"
fi
finish
