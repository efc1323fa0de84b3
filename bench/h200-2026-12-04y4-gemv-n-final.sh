#!/usr/bin/env bash
# Session y, batch y4 (.dev/y4): gemv_n as it lands: the FMA form with K split over
# blocks, MR 1, 2 and 4 (batch y2 measured 8 rows at 60-106 us where wgmma takes 20-38),
# the plan's first config per MR the y2 winner (8 chunks; K split in 4 at MR 4), and the
# tensor-core form of y3 taken out again.
# Written before: tuned rows as in y2/y3 (1x12288x4096 ~35 us, 1.03x cuBLAS NN;
# 1x4096x11008 ~33, 1.05x; 4x4096x4096 ~19-20, 0.95-1.0x), 2x4096x4096 ~17-19; M = 8 and
# 16 on wgmma as before. First calls (untuned, the planner's first config that takes the
# call): within 5% of the tuned rows at M = 1, 2 and 4 (y3's first calls ran the
# tensor-core form: 50.9 us at 1x12288x4096), and 8x4096x4096 no longer on gemv_n.
# Correctness: every planned config of the f16 kernels on the suite's shapes, the same
# bits twice for every gemv_n config (f16 and bf16; M now one short of MR, not 0 for
# MR 1), memcheck on the latter.
B=.dev/y4
source bench/lib.sh y4
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
timeout 220 $B/kernels --test-threads 8 every_planned_config_f16 gemv_n_configs > $R/kernels.log 2>&1; echo "kernels rc=$?"
grep -hE "test result|panicked" $R/kernels.log | head -4
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
timeout 120 $SAN --tool memcheck $B/kernels --test-threads 1 gemv_n_configs > $R/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -hE "ERROR SUMMARY|test result" $R/memcheck.log | head -3
S="--shape 1x12288x4096 --shape 1x4096x11008 --shape 2x4096x4096 --shape 4x4096x4096 --shape 8x4096x4096 --shape 16x4096x4096"
timeout 200 $B/crossgemm bench $S --w-layout row --cache-dir /tmp/cg-y4 --max 48 --dtypes f16,bf16 --epilogues none,bias_relu --out $R --name wrow --against bench/results/h200-2026-12-04y3/wrow.json > $R/wrow.log 2>&1; echo "wrow rc=$?"
timeout 100 $B/crossgemm bench $S --w-layout row --first-call --cache-dir /tmp/cg-y4-first --dtypes f16 --epilogues none --out $R --name wrow-first --against bench/results/h200-2026-12-04y3/wrow-first.json > $R/wrow-first.log 2>&1; echo "first rc=$?"
for f in wrow wrow-first; do python3 -c "
import json
for r in json.load(open('$R/$f.json'))['rows']:
    g=lambda k: round(r[k],2) if r.get(k) else None
    print('$f',r['m'],r['n'],r['k'],r['dtype'],r['epilogue'],g('ours_us'),g('cublas_us'),g('cublaslt_us'),g('speedup_vs_cublas'),g('speedup_vs_cublaslt'),r['wrong'],r['config'])
"; done
$B/crossgemm --cache-dir /tmp/cg-y4 cache export $R/records-y4.json > $R/export.log 2>&1
finish
