#!/usr/bin/env bash
# Session ax, batch ax2: views with mid-sector rows (K + 8 elements a row) in 2x2
# clusters. aw10 timed the one-block 128x256 tile against its 2-block twin (B multicast
# down a cluster column) at K + 8: 4096³ 282.4 -> 191.5 µs (packed 181.1, 5.7% over),
# 8192³ 2383 -> 1682 (packed 1532), 2048x11008x4096 391 -> 283 (packed 268); the tuned
# 2048x11008x4096 view took a 2x2 cluster (269.0, aw8). A 2x2 cluster reads both A's and
# B's tiles from L2 once for two blocks each, halving the L2 reads the mid-sector rows
# slow down once more. Each config at P = 8 and P = 0 (`--config`, f16, none).
# Binaries: B=.dev/NAME, the CLI (`baseline,aot`). Carry: [B]. ~2 min.
# Written before: 2x2 128x256 at K + 8 within 3% of packed at 4096³ (~186 µs) and 8192³
# (~1580); at P = 0 the 2x2 within 2% of the 2x1 twin.
BATCH=${BATCH:-ax2}
B=${B:?name the binaries folder}
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
for p in 8 0; do
  for c in "2 1 128 256 4" "2 2 128 256 4" "2 2 128 128 6" "2 2 256 128 4"; do
    set -- $c
    C=$(cfg 64 $3 $4 $5 2 false $1 ",\"cluster_n\":$2")
    tag=p$p-c$1x$2-$3x$4
    timeout 100 $B/crossgemm bench --shape 4096x4096x4096 --shape 8192x8192x8192 --shape 2048x11008x4096 \
      --pad $p --config "$C" --dtypes f16 --epilogues none --out $R --name $tag > $R/$tag.log 2>&1; echo "$tag rc=$?"
    grep -E "^    ours" $R/$tag.log | sed -E 's/, err .*//' | cut -c1-120
  done
done
finish
