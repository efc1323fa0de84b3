#!/usr/bin/env bash
# Session ab, batch ab4: products with few rows turned around on the wgmma family.
# Written in session ab, which was lent no device: not run yet. Binary: .dev/ab4/swap_ab_probe,
# the example of `bench/h200-2026-12-04ab4-swap-ab.patch` (`git apply` it, then
# `cargo build --release --example swap_ab_probe` and copy the binary; session ab built it
# at 114b1a9 + the patch).
# Why: 64 rows of a row-major W are our weakest row-major-W row (0.90-0.92x cuBLAS NN,
# aa6-aa8): the 64-row tiles make 64 blocks at N = 4096 (128 with K split in 2, whose fold
# costs), and 64x32 tiles, which make 128, read W in 64-byte box rows at half TMA's L2 rate
# (aa1). Computed turned around, Cᵀ = Wᵀ·Xᵀ on the same buffers (the family's M-major A and
# column-major output paths), the 64 rows become the tile's 32-column side and W is read
# in 64-column boxes of 128-byte rows: 128 blocks of 64x32 with K whole, 96 full-width box
# rows a k-step. The probe tunes both forms for M = 32-128 at N = K = 4096 with a row-major
# and a column-major W (every candidate checked against the reference; 32-column wgmma
# tiles are in the turned kernels' plans, `tune(block_n = [32, 64, 128])`) and checks that
# the two winners' outputs agree.
# Written before: turned faster at 48-64 rows of a row-major W (64x4096x4096: ~16.5 us
# against the plain form's 18.0-18.5 in the tune), a tie or worse at 96-128 rows (the plain
# deep ring reads W once a block row as well) and on a column-major W at 32 rows (decode).
# If it wins, the wgmma family gets a turned-around form as decode and gemv have.
B=.dev/ab4
source bench/lib.sh ab4
export CROSSGEMM_TUNE_MAX=400
# Round 1 every M; round 2 (another process, its own cache) the rows that decide it.
for round in 1 2; do
  rows=""; [ $round = 2 ] && rows="48 64"
  CROSSGEMM_CACHE_DIR=/tmp/cg-ab4-$round timeout 280 $B/swap_ab_probe $rows > $R/probe-$round.log 2>&1; echo "probe round $round rc=$?"
  grep -E "x4096x4096|h200" $R/probe-$round.log | cut -c1-400
done
finish
