#!/usr/bin/env bash
# Session u, batch u8 (.dev/s1old: the CLI at e461622, kernels as at the head).
# u1/u5: TMA from L2 is capped near 5-6 TB/s (whole chip) on rows an odd multiple of 16
# bytes apart. K + 8 views of 2048x11008x4096 in 128x256 tiles with B shared in 2-block
# clusters (their tuned winner, batch 03c) ask the L2 for ~1.44 GB of boxes: at 281 us
# that is 5.1 TB/s, the cap. 2x2 clusters (A shared as well) ask ~1.08 GB; on packed
# operands they lost 12-17% (30 clusters of 4 leave 12 SMs idle), but on these rows the
# cap may weigh more. Written before: if the cap binds the views, a 2x2 config beats the
# 2-block winner on K + 8 views at 2048x11008x4096 and 4096^3 (toward the packed time)
# while still losing on packed operands in the same rounds; if not, it loses on both.
B=.dev/s1old
source bench/lib.sh u8
S="--shape 2048x11008x4096 --shape 4096x4096x4096"
n=0
for c in "$(cfg 64 128 256 4 2 false 2)" "$(cfg 64 128 256 4 2 false 2 ',"cluster_n":2')" "$(cfg 64 256 128 4 2 false 2 ',"cluster_n":2')" \
  "$(cfg 64 128 128 6 2 false 2 ',"cluster_n":2')" "$(cfg 64 128 256 4 2 false 1)"; do
  n=$((n + 1))
  timeout 100 $B/crossgemm bench $S --dtypes f16 --epilogues none --pad 8 --config "$c" --cache-dir /tmp/cg-u8 --out $R --name c$n > $R/c$n.log 2>&1
  echo "c$n rc=$? $c"
  grep -E "^\| [0-9]" $R/c$n.md | head -2 | cut -d'|' -f2,5,6,9
  sed -n '/Views against/,$p' $R/c$n.md | grep -E "^\| [0-9]" | cut -d'|' -f2,5,6,7
done
finish
