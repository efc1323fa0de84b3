#!/usr/bin/env bash
# Session z, batch z7 (.dev/z7: the CLI and the kernels/batched tests with decode_n taking
# up to 64 rows in blocks of its rows along the grid's y, each block of rows reading W
# again, from L2 where they run together): the suites (their every-config shapes now run
# 2-3 blocks of rows), memcheck on them, then which row block serves 16-64 rows best
# (`--config` lists, f16, none) and the 48- and 64-row rows tuned beside cuBLAS.
# Written before: correct. At 32 rows, two blocks of 16 rows ~16.5-17 us (the 16-row
# time: W's second read hits L2) against one of 32 at 18.2; 64 rows with blocks of 16 or
# 32 ~18-19 us against wgmma's ~21 (z1's default) / cuBLAS 17.0; blocks of 8 rows lose
# from 4 blocks on (W read 4+ times through L2).
B=.dev/z7
source bench/lib.sh z7
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
T="--test-threads 4"
timeout 200 $B/kernels $T decode_n > $R/kernels-decode-n.log 2>&1; echo "kernels rc=$?"; grep -E "test result|panicked" $R/kernels-decode-n.log | head -3
timeout 100 $B/batched $T decode_n > $R/batched-decode-n.log 2>&1; echo "batched rc=$?"; grep -E "test result|panicked" $R/batched-decode-n.log | head -3
CS=/usr/local/cuda/bin/compute-sanitizer
CROSSGEMM_TEST_CONFIGS="decode_n rows 8 cols 64 warps 8 stages 4" timeout 150 $CS --tool memcheck $B/kernels --test-threads 1 every_planned_decode_n > $R/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|test result" $R/memcheck.log
d() { echo "{\"family\":\"decode_n\",\"mt\":$1,\"nt\":4,\"warps\":$2,\"stages\":$3,\"ksplit\":1}"; }
W1='{"family":"wgmma","bm":64,"bn":128,"bk":64,"stages":8,"consumers":1,"group_m":8,"cluster_m":1,"inflight":true,"epi_smem":true,"ksplit":2}'
W2='{"family":"wgmma","bm":64,"bn":64,"bk":64,"stages":8,"consumers":1,"group_m":8,"cluster_m":1,"inflight":true,"epi_smem":true}'
tune() { # shape configs...
  local s=$1; shift
  local C=(); for c in "$@"; do C+=(--config "$c"); done
  timeout 90 $B/crossgemm tune --shape $s --w-layout row --dtype f16 --epilogue none --json --cache-dir /tmp/cg-z7-$s "${C[@]}" > $R/tune-$s.json 2> $R/tune-$s.err
  python3 bench/tune_summary.py "$s" $R/tune-$s.json
}
tune 16x4096x4096 "$(d 1 8 4)" "$(d 1 4 8)" "$(d 2 8 4)" "$(d 2 4 8)"
tune 32x4096x4096 "$(d 1 8 4)" "$(d 2 8 4)" "$(d 2 4 8)" "$(d 4 8 4)" "$(d 4 4 8)"
tune 48x4096x4096 "$(d 1 8 4)" "$(d 2 8 4)" "$(d 2 4 8)" "$(d 4 8 4)" "$W1" "$W2"
tune 64x4096x4096 "$(d 2 8 4)" "$(d 2 4 8)" "$(d 4 8 4)" "$(d 4 4 8)" "$W1" "$W2"
tune 32x12288x4096 "$(d 2 8 4)" "$(d 4 8 4)"
timeout 200 $B/crossgemm bench --shape 48x4096x4096 --shape 64x4096x4096 --w-layout row --cache-dir /tmp/cg-z7-bench --max 48 --dtypes f16 --epilogues none,bias_relu --out $R --name wrow64 > $R/wrow64.log 2>&1; echo "wrow64 rc=$?"
python3 -c "
import json
for r in json.load(open('$R/wrow64.json'))['rows']:
    g=lambda k: round(r[k],2) if r.get(k) else None
    print('wrow64',r['m'],r['n'],r['k'],r['dtype'],r['epilogue'],g('ours_us'),g('cublas_us'),g('speedup_vs_cublas'),g('speedup_vs_cublaslt'),r['wrong'],r['config'])
"
finish
