#!/usr/bin/env bash
# Session aq, batch aq5: staging scratch kept by the device between calls (device/spares.rs)
# against the head before it, on the staged 3000x5000x700 f16 row whose first row of a
# process swung (aq2 on an H100: 74-103 µs for the plain row as the pool gave staging's
# freed scratch back, 57-58 µs with CROSSGEMM_POOL_KEEP_MB=all), and the CUDA staged suite.
# Binaries: B=.dev/NAME (`scripts/dev-build.sh` at the change) and OLD=.dev/aq0 (at
# 570cbdb, before it). Carry: both. ~4 min.
# Three arms alternating process by process over three rounds: new (spares, the pool at
# its default 256 MiB), old, old with the pool keeping everything (aq2's steady arm).
# Written before: new as steady as old+keep (every row 56-60 µs on an H100) in every
# process; old swings on its first row as in aq2; the staged suite passes on CUDA.
BATCH=${BATCH:-aq5}
B=${B:?name the binaries folder}
OLD=${OLD:-.dev/aq0}
source bench/lib.sh $BATCH
unset CROSSGEMM_IGNORE_TABLES
for round in 1 2 3; do for arm in new old keep; do
  tag=odd-$arm-$round bin=$B env=()
  case $arm in
    old) bin=$OLD ;;
    keep) bin=$OLD env=(CROSSGEMM_POOL_KEEP_MB=all) ;;
  esac
  env ${env[@]+"${env[@]}"} CROSSGEMM_COMMIT="$(head -1 $bin/COMMIT)" timeout 60 $bin/crossgemm bench --first-call \
    --shape 3000x5000x700 --dtypes f16 --cache-dir /tmp/cg-$BATCH-$tag --out $R --name $tag > $R/$tag.log 2>&1; echo "$tag rc=$?"
  grep -E "^\| 3000x5000x700" $R/$tag.md | head -3 | cut -d'|' -f4-8
done; done
suite staged 120 staged
finish
