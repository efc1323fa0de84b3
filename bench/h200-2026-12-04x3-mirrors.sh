#!/usr/bin/env bash
# Session x, batch x3 (.dev/x2s: the CLI at bdb430a, whose kernels HEAD still builds): the
# skinny rows of issue 10 and their mirrors, N and M exchanged, in one run: where a
# product with few columns (N = 32..128) is slower than its few-rows mirror, a kernel is
# missing on that side.
# Written before: N <= 32 mirrors within 2% (the decode family turned around, x2);
# N = 64 and 128 on wgmma tiles: 8192x128x8192 and 12288x128x4096 within 5% of
# 128x8192x8192 and 128x12288x4096 (their tiles are 64x128 and 64x192 one-consumer; the
# mirrors have 128x64-class tiles with two consumers), 4096x64x4096 within 5% of
# 64x4096x4096.
B=.dev/x2s
source bench/lib.sh x3
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
S="--shape 32x4096x4096 --shape 4096x32x4096 --shape 64x4096x4096 --shape 4096x64x4096 --shape 128x8192x8192 --shape 8192x128x8192 --shape 128x12288x4096 --shape 12288x128x4096"
timeout 400 $B/crossgemm bench $S --cache-dir /tmp/cg-x3 --max 48 --dtypes f16 --epilogues none,bias_relu --out $R --name mirrors > $R/mirrors.log 2>&1; echo "mirrors rc=$?"
python3 -c "
import json
for r in json.load(open('$R/mirrors.json'))['rows']:
    print(r['m'],r['n'],r['k'],r['dtype'],r['epilogue'],round(r['ours_us'],1),round(r['cublas_us'],1),round(r['cublaslt_us'] or 0,1),round(r['speedup_vs_cublas'],2),r['wrong'],r['config'])
"
finish
