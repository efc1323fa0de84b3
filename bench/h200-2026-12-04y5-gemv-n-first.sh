#!/usr/bin/env bash
# Session y, batch y5 (.dev/y5: the CLI only, `cargo build --release --features
# baseline,aot --bin crossgemm`): first calls of the row-major-w kernels after gemv_n's
# default config per MR became 8 chunks with K split in 4 (y4's first calls ran K whole:
# 46.9 us at 1x4096x11008 and 22.4 at 2x4096x4096, where the tuned winners, K split in 4,
# took 33.4 and 17.0).
# Written before: first calls at 1x4096x11008 ~33-34 us, 2x4096x4096 ~17, 4x4096x4096 ~19
# (as y4), 1x12288x4096 ~37 (6% behind y4's 35.7: K split in 4 is that much slower there).
B=.dev/y5
source bench/lib.sh y5
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
S="--shape 1x12288x4096 --shape 1x4096x11008 --shape 2x4096x4096 --shape 4x4096x4096"
timeout 100 $B/crossgemm bench $S --w-layout row --first-call --cache-dir /tmp/cg-y5-first --dtypes f16,bf16 --epilogues none --out $R --name wrow-first --against bench/results/h200-2026-12-04y4/wrow-first.json > $R/wrow-first.log 2>&1; echo "first rc=$?"
python3 -c "
import json
for r in json.load(open('$R/wrow-first.json'))['rows']:
    g=lambda k: round(r[k],2) if r.get(k) else None
    print(r['m'],r['n'],r['k'],r['dtype'],r['epilogue'],g('ours_us'),g('cublas_us'),g('speedup_vs_cublas'),r['wrong'],r['config'])
"
finish
