#!/usr/bin/env bash
# Session ah, batch ah6: CUDA's simt kernel splits K (tiles of at most 32 rows, K over 4
# or 8 blocks; the last block of a tile to arrive adds the slots in split order), against
# ah5's kernel (K whole). Binaries: .dev/ah6s (the CLI of `cargo build --release
# --features baseline,aot --bin crossgemm` at the commit in COMMIT) and .dev/ah5s (715de13).
# Carry: [".dev/ah6s", ".dev/ah5s"]. ~2.5 minutes.
# Why: f32 at 16x4096x4096 ran at 0.38x cuBLAS after ah5 (16x16 tiles, 256 blocks of 64
# threads walking K whole); OpenCL's splits made such rows 2.0-2.3x faster on NVIDIA's
# OpenCL (ag1). Written before: every candidate of a full tune verified at 16x4096x4096,
# the split ones included; 8-32 rows of N = 4096 1.5-2.5x faster than ah5, N = 11008
# (688 tiles of 16x16 whole) less.
BATCH=${BATCH:-ah6}
B=.dev/${BATCH}s
OLD=.dev/ah5s
source bench/lib.sh $BATCH
for f in "$OLD"/*.gz; do [ -e "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
tag=tune-16x4096x4096
timeout 60 $B/crossgemm tune --shape 16x4096x4096 --dtype f32 --epilogue none --json --cache-dir /tmp/cg-$BATCH-t > $R/$tag.json 2> $R/$tag.err; echo "$tag rc=$?"
python3 -c "
import json
d=json.load(open('$R/$tag.json'))
t=sorted(d['timings'], key=lambda x: x['us'])
print('best', d['best'], round(d['best_us'],1), 'timed', len(t), 'failed', len(d.get('failed') or []))
for x in t[:6]: print('  ', round(x['us'],1), x['config'])
"
for bin in $OLD $B; do
  tag=$(basename $bin)-f32
  timeout 100 $bin/crossgemm bench --dtypes f32 --epilogues none --max 24 \
    --shape 8x4096x4096 --shape 16x4096x4096 --shape 32x4096x4096 --shape 16x11008x4096 \
    --cache-dir /tmp/cg-$BATCH-$tag --out $R --name $tag > $R/$tag.log 2>&1; echo "bench $tag rc=$?"
  python3 bench/rows.py $R/$tag.json
done
finish
