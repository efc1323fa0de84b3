#!/usr/bin/env bash
# Session x, batch x1 (.dev/x1s: the CLI and tests/kernels.rs of scripts/dev-build.sh at 564d43a; .dev/w1c: the CLI of .dev/w1, at bf92432, for the
# "before" rows: its kernels for these shapes are those of 404e949, CG_OVERLAP being off).
# The gemv family's turned-around form (SWAP: C^T = B^T A^T) for products with N <= 8:
# W x with the weight on the left (12288x1x4096), a few output features (12288x4x4096,
# 12288x8x4096, 4096x8x4096) and a long K (4096x1x11008).
# Written before: these rows ran on wgmma/mma.sync tiles of at least 64 columns (N <= 8
# pads 88-98% of each tile, and M/64..128 blocks share the streaming of A); the gemv
# form reads A once at the decode kernels' rate, as the plain form does B at
# 1x12288x4096 (31.3 us, 1.17x cuBLAS in batch v7): expected ~31-33 us at 12288x1x4096
# and 12288x8x4096 (>= 1.1x cuBLAS), each row at least 1.5x faster than before.
# Correctness first: every planned config (both gemv forms) on the suite's shapes, the
# same bits twice for every gemv config, and memcheck on the latter.
B=.dev/x1s
source bench/lib.sh x1
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
timeout 240 $B/kernels --test-threads 8 every_planned gemv_configs > $R/kernels.log 2>&1; echo "kernels rc=$?"
grep -hE "test result|panicked" $R/kernels.log | head -4
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
timeout 150 $SAN --tool memcheck $B/kernels --test-threads 1 gemv_configs > $R/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -hE "ERROR SUMMARY|test result" $R/memcheck.log | head -3
S="--shape 12288x1x4096 --shape 4096x1x11008 --shape 12288x4x4096 --shape 12288x8x4096 --shape 4096x8x4096"
timeout 150 .dev/w1c/crossgemm bench $S --cache-dir /tmp/cg-x1-before --max 48 --dtypes f16 --epilogues none,bias_relu --out $R --name before > $R/before.log 2>&1; echo "before rc=$?"
timeout 240 $B/crossgemm bench $S --cache-dir /tmp/cg-x1 --max 48 --dtypes f16,bf16 --epilogues none,bias_relu --out $R --name narrow --against $R/before.json > $R/narrow.log 2>&1; echo "narrow rc=$?"
grep -E "^\| [0-9]" $R/before.md | cut -d'|' -f2,4,5,6,7,9,10 | head -12
grep -E "^\| [0-9]" $R/narrow.md | cut -d'|' -f2,4,5,6,7,9,10 | head -24
python3 -c "
import json
for f in ['before','narrow']:
  for r in json.load(open('$R/'+f+'.json'))['rows']:
    print(f, r['m'],r['n'],r['k'],r['dtype'],r['epilogue'],round(r['ours_us'],1),round(r['cublas_us'],1),round(r['speedup_vs_cublas'],2),r['wrong'],r['config'])
"
finish
