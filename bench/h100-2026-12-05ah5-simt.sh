#!/usr/bin/env bash
# Session ah, batch ah5: CUDA's simt kernel (full f32: no tensor-core instruction takes it)
# with its next tile's global loads in flight during the current tile's FMAs (fetched to
# registers a tile ahead) and 16-byte shared loads (a thread owns runs of 4 rows and 4
# columns of C where its share allows), against the kernel before (strided ownership,
# one shared load a row, loads then compute). Binaries: .dev/ah5s (the CLI of
# `cargo build --release --features baseline,aot --bin crossgemm` at the commit in
# COMMIT) and .dev/ah4s (eb8712e, the kernel before). Carry: [".dev/ah5s", ".dev/ah4s"].
# ~6 minutes (ROUNDS=1: ~4).
# Why: f32 ran at 0.67-0.71x cuBLAS's SGEMM at 2048-8192 cubed and 0.19-0.40x on small
# and skinny shapes (bench/results/h200-2026-12-01b/full-f32-tf32.json); the SASS of the
# 128x128x32 tile had 512 scalar shared loads to 2048 FFMA a tile (one LDS to four FFMA,
# shared-memory bound), and its loads waited for the previous tile's FMAs. Now 128
# LDS.128 to 2048 FFMA, 161 registers (was 120: one block of 256 threads an SM, not two).
# Written before: correct everywhere (every candidate of a full tune verified at 1000^3
# and 4096^3; the host-emulated kernel matched at 48 configs x 4 layouts x 8 shapes);
# 1.2-1.4x faster at the large cubes (0.85-0.95x cuBLAS), small and skinny shapes 1.1-1.3x.
BATCH=${BATCH:-ah5}
B=.dev/${BATCH}s
OLD=.dev/ah4s
source bench/lib.sh $BATCH
for f in "$OLD"/*.gz; do [ -e "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
# Every candidate at two shapes, each verified against the host reference first.
for s in 1000x1000x1000 4096x4096x4096; do for bin in $OLD $B; do
  tag=$(basename $bin)-$s
  timeout 120 $bin/crossgemm tune --shape $s --dtype f32 --epilogue none --json --cache-dir /tmp/cg-$BATCH-$tag > $R/tune-$tag.json 2> $R/tune-$tag.err; echo "tune $tag rc=$?"
  python3 -c "
import json
d=json.load(open('$R/tune-$tag.json'))
print('$tag', 'best', d['best'], round(d['best_us'],1), 'timed', len(d['timings']), 'failed', len(d.get('failed') or []))
"
done; done
# The f32 rows, tuned, old and new alternating (ROUNDS=1: one round, for a short call).
for round in $(seq 1 ${ROUNDS:-2}); do for bin in $OLD $B; do
  tag=$(basename $bin)-f32-$round
  timeout 200 $bin/crossgemm bench --dtypes f32 --epilogues none --max 24 \
    --shape 1024x1024x1024 --shape 4096x4096x4096 --shape 1000x1000x1000 --shape 3000x5000x700 \
    --shape 16x4096x4096 --shape 128x8192x8192 --shape 4096x4096x128 \
    --cache-dir /tmp/cg-$BATCH-$tag --out $R --name $tag > $R/$tag.log 2>&1; echo "bench $tag rc=$?"
  python3 bench/rows.py $R/$tag.json
done; done
finish
