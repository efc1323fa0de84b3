#!/usr/bin/env bash
# Session aa, batch aa7 (.dev/aa7: the CLI at 219c2e2, with aa6's f16 row-major-W buckets
# of 48-128 rows in its tables). The same rows tuned in bf16 (48 candidates, tables
# ignored) for the records, then first calls on the tables (nothing tuned: each case's
# config from a `cached` lookup) of the f16 rows aa6 merged.
# Written before: bf16 picks as f16 did (the deep ring at 96-128 rows, 64x64 K in 2 at
# 48-64, 64x192 at 64x12288x4096), ratios within 3% of aa6's f16; the first calls run
# the merged winners (the deep ring at 96 and 128 rows) within 3% of aa6's tuned times.
B=.dev/aa7
source bench/lib.sh aa7
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
S="--shape 48x4096x4096 --shape 64x4096x4096 --shape 96x4096x4096 --shape 128x4096x4096 --shape 64x12288x4096"
timeout 200 $B/crossgemm bench $S --w-layout row --cache-dir /tmp/cg-aa7 --max 48 --dtypes bf16 --epilogues none,bias_relu --out $R --name wrow-bf16 > $R/wrow-bf16.log 2>&1; echo "bf16 rc=$?"
CROSSGEMM_IGNORE_TABLES= timeout 150 $B/crossgemm bench $S --w-layout row --first-call --cache-dir /tmp/cg-aa7-first --dtypes f16 --epilogues none,bias_relu --out $R --name wrow-first-tables > $R/wrow-first-tables.log 2>&1; echo "first rc=$?"
python3 -c "
import json
for f in ['wrow-bf16','wrow-first-tables']:
  try: rows=json.load(open('$R/'+f+'.json'))['rows']
  except Exception as e: print(f,'missing',e); continue
  for r in rows:
    g=lambda k: round(r[k],2) if r.get(k) else None
    print(f, r['m'],r['n'],r['k'],r['dtype'],r['epilogue'],g('ours_us'),g('cublas_us'),g('cublaslt_us'),g('speedup_vs_cublas'),g('speedup_vs_cublaslt'),r['wrong'],r['config'])
"
$B/crossgemm --cache-dir /tmp/cg-aa7 cache export $R/records-wrow-bf16.json > $R/export.log 2>&1; echo "export rc=$?"
finish
