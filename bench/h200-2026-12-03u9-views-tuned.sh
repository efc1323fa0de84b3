#!/usr/bin/env bash
# Session u, batch u9 (.dev/u9: the CLI at 70af2a0 plus the change under test: the wgmma
# family plans its 2x2 clusters by default and the estimate orders clusters first where
# operand rows start mid-sector, 2x2 last elsewhere).
# u8: on K + 8 views of 2048x11008x4096 a 2x2-cluster 128x256 took 267.5 us against the
# tuned 2-block cluster's 280.7 (4.7% faster, 0.96x cuBLAS on the same views against
# 0.92x); at 4096^3 it lost (221 against 193: five waves of 120 blocks against four).
# Written before: a full tune (48 candidates, `bench --pad 8`) now picks a 2x2 config on
# the K + 8 views of 2048x11008x4096 (views/packed 0.91-0.93 -> ~0.97) and keeps the
# 2-block cluster at 4096^3 (0.94-0.95); the packed operands keep their winners (the 2x2
# configs are ordered last there).
B=.dev/u9
source bench/lib.sh u9
timeout 400 $B/crossgemm bench --shape 2048x11008x4096 --shape 4096x4096x4096 --dtypes f16 --epilogues none --max 48 --pad 8 --cache-dir /tmp/cg-u9 --out $R --name pad8 > $R/pad8.log 2>&1; echo "bench rc=$?"
grep -E "^\| [0-9]" $R/pad8.md | head -2 | cut -d'|' -f2,5,6,7,9,10,17
sed -n '/Views against/,$p' $R/pad8.md | grep -E "^\| [0-9]|rows:" | cut -d'|' -f2,5,6,7,8,9
CROSSGEMM_CACHE_DIR=/tmp/cg-u9 $B/crossgemm cache export $R/records.json 2>&1 | tail -1
finish
