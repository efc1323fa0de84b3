#!/usr/bin/env bash
# Session ay, batch ay2: first calls on K + 8 views after `for_rows` takes the cluster of
# the pick's block tile with the least estimate, or the nearest tile's where its own has
# none planned (aw12 on an H100: 2048x11008x4096 unchanged at 572 µs f16, 403 bf16, since
# the table's picks there, 128x128 and 192x192 with three consumers, have no 2-block twin
# planned). Against the CLI before the change in the same lease, f16 and bf16.
# Binaries: B=.dev/NAME at the change, OLD=.dev/NAME before it. Carry: [B, OLD]. ~1.5 min.
# Written before (ax2's --config times on the H100): 2048x11008x4096 f16 ~289 µs (the
# 2x2 of 128x128), bf16 ~269 (the 2x2 of 128x256); 4096³ and 8192³ the pair, as before.
BATCH=${BATCH:-ay2}
B=${B:?name the binaries folder}
OLD=${OLD:?name the binaries before the change}
source bench/lib.sh $BATCH
unset CROSSGEMM_IGNORE_TABLES
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
S="--shape 2048x11008x4096 --shape 4096x4096x4096 --shape 8192x8192x8192"
for round in $(seq ${ROUNDS:-2}); do for bin in $B $OLD; do
  tag=$(basename $bin)-$round
  CROSSGEMM_COMMIT="$(head -1 $bin/COMMIT)" timeout 100 $bin/crossgemm bench --first-call $S --pad 8 --dtypes f16,bf16 --epilogues none \
    --cache-dir /tmp/cg-$BATCH-$tag --out $R --name $tag > $R/$tag.log 2>&1; echo "$tag rc=$?"
  grep -E "^    ours" $R/$tag.log | sed -E 's/, err .*wgmma/ wgmma/; s/, first call.*//' | cut -c1-170
done; done
finish
