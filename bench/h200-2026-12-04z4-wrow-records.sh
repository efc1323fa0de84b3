#!/usr/bin/env bash
# Session z, batch z4 (.dev/z4: the CLI, tests/kernels.rs and tests/batched.rs with
# decode_n's plan after z3: K whole first, decode_n before gemv_n): the suites again, then
# the row-major-w rows of y4 and 32x4096x4096, 16x12288x4096 tuned (48 candidates, tables
# ignored) beside cuBLAS NN and cuBLASLt, f16 and bf16, none and bias_relu, and their
# records exported for records/h200.json.
# Written before: decode_n wins every row of 2-32 rows (8x4096x4096 ~15.6 us, ~1.15-1.2x
# cuBLAS; 32 rows ~18.5, ~1.0x; 16x12288x4096 ~36, ~1.0x), gemv_n keeps M = 1 (y4's
# 35.1 us at 1x12288x4096); no row slower than y4 by more than 5%.
B=.dev/z4
source bench/lib.sh z4
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
T="--test-threads 4"
timeout 200 $B/kernels $T decode_n > $R/kernels-decode-n.log 2>&1; echo "kernels rc=$?"; grep -E "test result|panicked" $R/kernels-decode-n.log | head -3
timeout 100 $B/batched $T decode_n > $R/batched-decode-n.log 2>&1; echo "batched rc=$?"; grep -E "test result|panicked" $R/batched-decode-n.log | head -3
S="--shape 1x12288x4096 --shape 1x4096x11008 --shape 2x4096x4096 --shape 4x4096x4096 --shape 8x4096x4096 --shape 16x4096x4096 --shape 32x4096x4096 --shape 16x12288x4096"
timeout 420 $B/crossgemm bench $S --w-layout row --cache-dir /tmp/cg-z4 --max 48 --dtypes f16,bf16 --epilogues none,bias_relu --out $R --name wrow --against bench/results/h200-2026-12-04y4/wrow.json > $R/wrow.log 2>&1; echo "wrow rc=$?"
python3 -c "
import json
for r in json.load(open('$R/wrow.json'))['rows']:
    g=lambda k: round(r[k],2) if r.get(k) else None
    print('wrow',r['m'],r['n'],r['k'],r['dtype'],r['epilogue'],g('ours_us'),g('cublas_us'),g('cublaslt_us'),g('speedup_vs_cublas'),g('speedup_vs_cublaslt'),r['wrong'],r['config'])
"
$B/crossgemm --cache-dir /tmp/cg-z4 cache export $R/records-z4.json > $R/export.log 2>&1; echo "export rc=$?"
finish
