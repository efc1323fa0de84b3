#!/usr/bin/env bash
# Session y, batch y6 (.dev/y6: the CLI only): the few-columns rows of session x's batch x2
# tuned again for their records (x2 did not export its cache), so that a first call at
# such a shape gets its tuned winner from the config table instead of the plan's first
# turned-around decode config (4 warps, where x2's tunes picked 8).
# Written before: the tuned rows as x2 measured them (12288x1x4096 ~31.5 us, 12288x8x4096
# ~32, 4096x8x4096 ~14.5, 4096x16x4096 ~15.5), their records exported for
# records/h200.json.
B=.dev/y6
source bench/lib.sh y6
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
S="--shape 12288x1x4096 --shape 12288x8x4096 --shape 4096x8x4096 --shape 4096x16x4096"
timeout 200 $B/crossgemm bench $S --cache-dir /tmp/cg-y6 --max 48 --dtypes f16,bf16 --epilogues none,bias_relu --out $R --name narrow --against bench/results/h200-2026-12-04x2/narrow.json > $R/narrow.log 2>&1; echo "narrow rc=$?"
python3 -c "
import json
for r in json.load(open('$R/narrow.json'))['rows']:
    g=lambda k: round(r[k],2) if r.get(k) else None
    print(r['m'],r['n'],r['k'],r['dtype'],r['epilogue'],g('ours_us'),g('cublas_us'),g('speedup_vs_cublas'),r['wrong'],r['config'])
"
$B/crossgemm --cache-dir /tmp/cg-y6 cache export $R/records-y6.json > $R/export.log 2>&1; cat $R/export.log
finish
