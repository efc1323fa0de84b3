#!/usr/bin/env bash
# Session aa, batch aa9 (.dev/aa9: the CLI, tests/kernels.rs and tests/batched.rs at
# 97ede24: split-K whose splits meet in a cluster, `kcluster`, planned beside the
# workspace split for 64x64 and 64x128 with K in 2 and 4).
# First GPU run: the every-config tests, the persistent loops (several tiles a cluster:
# the split barriers' phases turn), the same bits twice, a batch (refused, as split-K
# is), compute-sanitizer (memcheck, racecheck, synccheck); then the rows where the split
# wins, tuned (48 candidates, tables ignored) beside cuBLAS, --against aa6.
# Written before: correct everywhere. At 64x4096x4096 with a row-major W the pair in a
# cluster ~1 us faster than the workspace split (aa8: the fold's global round trip),
# ~16.8 us in the bench (~0.97x cuBLAS, from 0.91x); the same ~5% at 64 rows of a
# column-major W and wherever else a split wins (128x4096x4096 column-major, 16 rows
# of wgmma-served shapes).
B=.dev/aa9
source bench/lib.sh aa9
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
T="--test-threads 2"
D="in a cluster"
CROSSGEMM_TEST_CONFIGS="$D" timeout 200 $B/kernels $T every_planned_config persistent_grids split_k_configs_give > $R/kernels-kc.log 2>&1; echo "kernels rc=$?"; grep -E "test result|panicked" $R/kernels-kc.log | head -5
CROSSGEMM_TEST_CONFIGS="$D" timeout 90 $B/batched $T every_config_on_a_batch > $R/batched-kc.log 2>&1; echo "batched rc=$?"; grep -E "test result|panicked" $R/batched-kc.log | head -3
CS=/usr/local/cuda/bin/compute-sanitizer
for tool in memcheck racecheck synccheck; do
  CROSSGEMM_TEST_CONFIGS="wgmma 64x64x64 stages 8 consumers 1 cluster 1 inflight 1 group 8 ksplit 2 in a cluster" timeout 150 $CS --tool $tool $B/kernels --test-threads 1 every_planned_config_f16 > $R/$tool.log 2>&1; echo "$tool rc=$?"; grep -E "SUMMARY|test result" $R/$tool.log | head -3
done
S="--shape 64x4096x4096 --shape 128x4096x4096 --shape 48x4096x4096"
timeout 150 $B/crossgemm bench $S --w-layout row --cache-dir /tmp/cg-aa9 --max 48 --dtypes f16 --epilogues none,bias_relu --out $R --name wrow --against bench/results/h200-2026-12-04aa6/wrow.json > $R/wrow.log 2>&1; echo "wrow rc=$?"
S="--shape 64x4096x4096 --shape 128x4096x4096 --shape 128x8192x8192 --shape 16x4096x4096"
timeout 150 $B/crossgemm bench $S --cache-dir /tmp/cg-aa9c --max 48 --dtypes f16 --epilogues none,bias_relu --out $R --name wcol --against bench/results/h200-2026-12-04aa6/wcol.json > $R/wcol.log 2>&1; echo "wcol rc=$?"
python3 -c "
import json
for f in ['wrow','wcol']:
  try: rows=json.load(open('$R/'+f+'.json'))['rows']
  except Exception as e: print(f,'missing',e); continue
  for r in rows:
    g=lambda k: round(r[k],2) if r.get(k) else None
    print(f, r['m'],r['n'],r['k'],r['dtype'],r['epilogue'],g('ours_us'),g('cublas_us'),g('cublaslt_us'),g('speedup_vs_cublas'),g('speedup_vs_cublaslt'),r['wrong'],r['config'])
"
$B/crossgemm --cache-dir /tmp/cg-aa9 cache export $R/records-wrow.json > $R/export.log 2>&1
$B/crossgemm --cache-dir /tmp/cg-aa9c cache export $R/records-wcol.json >> $R/export.log 2>&1; echo "export rc=$?"
finish
