#!/usr/bin/env bash
# Session ar, batch ar4: what a warm call costs the host, before and after 54d8c3f (the
# kernel arguments in one allocation of their final size; the plan map hashed with Fx
# instead of SipHash). The bench report's header times 1x8x8 f16 warm calls back to back
# against a bare driver launch of an empty kernel (host clock, up to a synchronize); six
# processes alternating OLD (fe6f2ac) and B (the change).
# Binaries: the CLIs, B=.dev/NAME and OLD=.dev/NAME (each `crossgemm.gz` + COMMIT). ~1 min.
# Written before (callgrind over PoCL here: 23.3k -> 20.6k instructions a warm call, ~12.4k
# of them PoCL's): the added cost over a bare launch drops by 0.1-0.4 µs (from ~1.7 µs on
# an H100, aq/ar reports: 1.4-2.3).
BATCH=${BATCH:-ar4}
B=${B:?name the binaries folder}
OLD=${OLD:?name the old binaries folder}
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
for round in 1 2 3; do for bin in $OLD $B; do
  tag=$(basename $bin)-$round
  CROSSGEMM_COMMIT="$(head -1 $bin/COMMIT)" timeout 60 $bin/crossgemm bench --first-call --shape 1x8x8 --dtypes f16 --epilogues none \
    --cache-dir /tmp/cg-$BATCH-$tag --out $R --name $tag > $R/$tag.log 2>&1; echo "$tag rc=$?"
  grep -h "launch overhead" $R/$tag.md | sed 's/.*takes/takes/'
done; done
finish
