#!/usr/bin/env bash
# Session x, batch x2 (.dev/x2s: the CLI and tests/kernels.rs of scripts/dev-build.sh at
# bdb430a): the decode family turned around (SWAP: C^T = B^T A^T on mma.sync, B's columns
# as the instruction's 8-row side, A's rows streamed), beside the gemv form of x1 and the
# plain decode rows they mirror (1x12288x4096, 16x4096x4096).
# Written before: the turned-around decode tiles run the mirrored shapes as fast as the
# plain ones run theirs (same loads, same MMAs; only the store's place differs):
# 12288x1x4096 ~31-32 us (1.15x cuBLAS; x1's gemv 35.1), 12288x8x4096 ~32-34 (1.1x;
# wgmma 36.7), 4096x8x4096 and 4096x16x4096 ~15-16 (1.15-1.2x; wgmma 19.8 at N = 8), and
# the plain mirrors as in batch v7 (their SASS is unchanged: checked with cuobjdump).
# Correctness first: every planned config (both forms of decode and gemv) on the suite's
# shapes, the same bits twice for every decode and gemv config, memcheck on the decode one.
B=.dev/x2s
source bench/lib.sh x2
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
timeout 200 $B/kernels --test-threads 8 every_planned_config_f16 decode_configs gemv_configs > $R/kernels.log 2>&1; echo "kernels rc=$?"
grep -hE "test result|panicked" $R/kernels.log | head -4
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
timeout 100 $SAN --tool memcheck $B/kernels --test-threads 1 decode_configs > $R/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -hE "ERROR SUMMARY|test result" $R/memcheck.log | head -3
S="--shape 12288x1x4096 --shape 4096x1x11008 --shape 12288x4x4096 --shape 12288x8x4096 --shape 4096x8x4096 --shape 4096x16x4096 --shape 12288x16x4096 --shape 1x12288x4096 --shape 16x4096x4096"
timeout 250 $B/crossgemm bench $S --cache-dir /tmp/cg-x2 --max 48 --dtypes f16,bf16 --epilogues none,bias_relu --out $R --name narrow --against bench/results/h200-2026-12-04x1/narrow.json > $R/narrow.log 2>&1; echo "narrow rc=$?"
python3 -c "
import json
for r in json.load(open('$R/narrow.json'))['rows']:
    print(r['m'],r['n'],r['k'],r['dtype'],r['epilogue'],round(r['ours_us'],1),round(r['cublas_us'],1),round(r['cublaslt_us'] or 0,1),round(r['speedup_vs_cublas'],2),r['wrong'],r['config'])
"
grep -A14 "^## Change against" $R/narrow.md | cut -c1-200
finish
