#!/usr/bin/env bash
# Session y, batch y7 (.dev/y7: the CLI of the final head, `aot`): first calls of the
# row-major-w kernels WITH the config tables (CROSSGEMM_IGNORE_TABLES unset), now that
# records/h200.json holds batch y4's rows, and of the few-columns rows with y6's.
# Written before: each first call runs its bucket's table winner: 8x4096x4096 and
# 16x4096x4096 (row-major w) ~19.5-20 us (y4 without tables: 44.9, the plan's first wgmma
# tile), 1x12288x4096 ~35 (gemv_n 8 chunks, K whole), 4096x8x4096 ~14.7 (decode swap, 8
# warps).
B=.dev/y7
source bench/lib.sh y7
unset CROSSGEMM_IGNORE_TABLES
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
timeout 60 $B/crossgemm bench --shape 8x4096x4096 --shape 16x4096x4096 --shape 1x12288x4096 --w-layout row --first-call --cache-dir /tmp/cg-y7a --dtypes f16 --epilogues none --out $R --name wrow-first > $R/wrow-first.log 2>&1; echo "wrow rc=$?"
timeout 40 $B/crossgemm bench --shape 4096x8x4096 --shape 12288x1x4096 --first-call --cache-dir /tmp/cg-y7b --dtypes f16 --epilogues none --out $R --name narrow-first > $R/narrow-first.log 2>&1; echo "narrow rc=$?"
for f in wrow-first narrow-first; do python3 -c "
import json
for r in json.load(open('$R/$f.json'))['rows']:
    g=lambda k: round(r[k],2) if r.get(k) else None
    print('$f',r['m'],r['n'],r['k'],g('ours_us'),g('cublas_us'),g('speedup_vs_cublas'),r.get('config_source'),r['config'])
"; done
finish
