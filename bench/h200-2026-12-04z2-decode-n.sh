#!/usr/bin/env bash
# Session z, batch z2 (.dev/z2: the CLI, tests/kernels.rs and tests/batched.rs of the
# decode_n family's first commit): the first GPU run of decode_n (8-32 rows of X times a
# row-major W on mma.sync, W's rows through a per-warp cp.async ring and ldmatrix.trans).
# Correctness first (every planned config, the same bits twice, a batch of views; memcheck
# and racecheck on a few configs), then the row-major-w rows tuned beside cuBLAS NN, and
# first calls.
# Written before: correct everywhere. Speed: at 8 and 16 rows ~15-17 us at 4096x4096
# (the column-major decode kernel's 15.4-15.7, wgmma's tuned 19.7-19.5: ~1.1-1.2x
# cuBLAS NN where y4 had 0.91-0.96x); 32 rows ~17-19 (wgmma default 21.5 in z1);
# 16x12288x4096 ~40-45 (wgmma 50.8 default); M = 4 stays with gemv_n (~19 us).
B=.dev/z2
source bench/lib.sh z2
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
T="--test-threads 1"
timeout 200 $B/kernels $T decode_n > $R/kernels-decode-n.log 2>&1; echo "kernels rc=$?"; tail -3 $R/kernels-decode-n.log
timeout 100 $B/batched $T decode_n > $R/batched-decode-n.log 2>&1; echo "batched rc=$?"; tail -3 $R/batched-decode-n.log
CS=/usr/local/cuda/bin/compute-sanitizer
CROSSGEMM_TEST_CONFIGS="decode_n rows 16 cols 64 warps 8 stages 4" timeout 120 $CS --tool memcheck $B/kernels $T decode_n_configs_give > $R/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|test result" $R/memcheck.log
CROSSGEMM_TEST_CONFIGS="decode_n rows 8 cols 128" timeout 120 $CS --tool racecheck $B/kernels $T decode_n_configs_give > $R/racecheck.log 2>&1; echo "racecheck rc=$?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|test result" $R/racecheck.log
S="--shape 8x4096x4096 --shape 16x4096x4096 --shape 32x4096x4096 --shape 16x12288x4096 --shape 4x4096x4096"
timeout 240 $B/crossgemm bench $S --w-layout row --cache-dir /tmp/cg-z2 --dtypes f16 --epilogues none,bias_relu --out $R --name wrow --against bench/results/h200-2026-12-04y4/wrow.json > $R/wrow.log 2>&1; echo "wrow rc=$?"
timeout 100 $B/crossgemm bench --shape 8x4096x4096 --shape 16x4096x4096 --shape 32x4096x4096 --w-layout row --first-call --cache-dir /tmp/cg-z2-first --dtypes f16,bf16 --epilogues none --out $R --name wrow-first > $R/wrow-first.log 2>&1; echo "first rc=$?"
python3 -c "
import json
for f in ['wrow','wrow-first']:
  try: rows=json.load(open('$R/'+f+'.json'))['rows']
  except Exception as e: print(f,'missing',e); continue
  for r in rows:
    g=lambda k: round(r[k],2) if r.get(k) else None
    print(f, r['m'],r['n'],r['k'],r['dtype'],r['epilogue'],g('ours_us'),g('cublas_us'),g('speedup_vs_cublas'),g('speedup_vs_cublaslt'),r['wrong'],r['config'])
"
finish
