#!/usr/bin/env bash
# Session aa, batch aa6 (.dev/aa6: the CLI, tests/kernels.rs and tests/batched.rs at
# 2e76d47, which plans the 64x64 tile of one consumer with K whole at 13 stages).
# The suites and compute-sanitizer on the deep ring, then full tunes (48 candidates,
# tables ignored) beside cuBLAS and cuBLASLt of the 33-128-row rows of both layouts,
# --against aa1 (row-major W) and aa3 (issue 10's M = 128 rows).
# Written before: correct everywhere. The deep ring wins 128x4096x4096 with a row-major
# W (~19.0 us against aa1's 20.3, ~1.07x cuBLAS) and ties at 48-64 rows (either layout;
# the tune's final round may pick either); 128x12288x4096 and 128x8192x8192 keep their
# 64x192 / 64x128 winners (the deep tile makes 192-384 blocks there, two or three waves).
B=.dev/aa6
source bench/lib.sh aa6
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
T="--test-threads 2"
D="wgmma 64x64x64 stages 13"
CROSSGEMM_TEST_CONFIGS="$D" timeout 150 $B/kernels $T every_planned_config persistent_grids > $R/kernels-deep.log 2>&1; echo "kernels rc=$?"; grep -E "test result|panicked" $R/kernels-deep.log | head -3
CROSSGEMM_TEST_CONFIGS="$D" timeout 90 $B/batched $T every_config_on_a_batch > $R/batched-deep.log 2>&1; echo "batched rc=$?"; grep -E "test result|panicked" $R/batched-deep.log | head -3
CS=/usr/local/cuda/bin/compute-sanitizer
CROSSGEMM_TEST_CONFIGS="$D" timeout 120 $CS --tool memcheck $B/kernels --test-threads 1 every_planned_config_f16 > $R/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|test result" $R/memcheck.log
CROSSGEMM_TEST_CONFIGS="$D" timeout 120 $CS --tool racecheck $B/kernels --test-threads 1 every_planned_config_f16 > $R/racecheck.log 2>&1; echo "racecheck rc=$?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|test result" $R/racecheck.log
S="--shape 48x4096x4096 --shape 64x4096x4096 --shape 96x4096x4096 --shape 128x4096x4096 --shape 64x12288x4096"
timeout 200 $B/crossgemm bench $S --w-layout row --cache-dir /tmp/cg-aa6 --max 48 --dtypes f16 --epilogues none,bias_relu --out $R --name wrow --against bench/results/h200-2026-12-04aa1/wrow.json > $R/wrow.log 2>&1; echo "wrow rc=$?"
S="--shape 64x4096x4096 --shape 128x4096x4096 --shape 128x12288x4096 --shape 128x8192x8192"
timeout 150 $B/crossgemm bench $S --cache-dir /tmp/cg-aa6c --max 48 --dtypes f16 --epilogues none,bias_relu --out $R --name wcol --against bench/results/h200-2026-12-04aa3/issue10.json > $R/wcol.log 2>&1; echo "wcol rc=$?"
python3 -c "
import json
for f in ['wrow','wcol']:
  try: rows=json.load(open('$R/'+f+'.json'))['rows']
  except Exception as e: print(f,'missing',e); continue
  for r in rows:
    g=lambda k: round(r[k],2) if r.get(k) else None
    print(f, r['m'],r['n'],r['k'],r['dtype'],r['epilogue'],g('ours_us'),g('cublas_us'),g('cublaslt_us'),g('speedup_vs_cublas'),g('speedup_vs_cublaslt'),r['wrong'],r['config'])
"
$B/crossgemm --cache-dir /tmp/cg-aa6 cache export $R/records-wrow.json > $R/export.log 2>&1
$B/crossgemm --cache-dir /tmp/cg-aa6c cache export $R/records-wcol.json >> $R/export.log 2>&1; echo "export rc=$?"
finish
