#!/usr/bin/env bash
# Session y, batch y3 (.dev/y3: gemv_n on tensor cores, CG_MMA): products
# with a row-major w (`x · W`, W stored K×N, N-contiguous, as NumPy and JAX keep it) at
# decode sizes, which had no specialist kernel (decode and gemv stream K-contiguous
# columns), beside cuBLAS and cuBLASLt reading the same buffer ("NN", `bench --w-layout
# row`), and the column-major rows they mirror.
# Batch y2 (K split over blocks) brought gemv_n to 35.1 us at 1x12288x4096 (1.03x cuBLAS
# NN) and 33.3 at 1x4096x11008 (1.05x), but at 4 and 8 rows the FMA form stays slow
# (8x4096x4096: 25.2 against wgmma's 19.8; MR = 8 configs 60-106 us at 1x12288x4096:
# 140-165 registers, one block of 8 warps per SM, few loads in flight).
# Written before: the tensor-core form (a warp's 16-byte loads of W's rows transposed in
# registers by movmatrix into mma.m16n8k16's A operand, X's <= 8 rows the B operand; 56
# registers, K split over warps and blocks) takes any M <= 8 at the cost of M = 1 and
# streams W as the column-major decode kernel does: 1x12288x4096 and 8x12288x4096 ~31-33
# us, 4x and 8x4096x4096 ~14-16 (1.1-1.25x cuBLAS NN); first calls get it by default.
B=.dev/y3
source bench/lib.sh y3
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
timeout 200 $B/kernels --test-threads 8 every_planned_config_f16 gemv_n_configs > $R/kernels.log 2>&1; echo "kernels rc=$?"
grep -hE "test result|panicked" $R/kernels.log | head -4
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
timeout 120 $SAN --tool memcheck $B/kernels --test-threads 1 gemv_n_configs > $R/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -hE "ERROR SUMMARY|test result" $R/memcheck.log | head -3
# Every candidate of two tunes (the general families' best is what these rows ran before).
for s in 1x12288x4096 8x4096x4096; do
  timeout 60 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --w-layout row --max 400 --json --cache-dir /tmp/cg-y3t > $R/tune-row-$s.json 2> $R/tune-row-$s.err
  python3 - "$R/tune-row-$s.json" "$s" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d = d[0] if isinstance(d, list) else d
t = d.get("timings") or []
best = {}
for x in t:
    fam = x["config"].split()[0]
    if fam not in best or x["us"] < best[fam][0]:
        best[fam] = (x["us"], x["config"])
print(sys.argv[2], {f: (round(u, 1), c) for f, (u, c) in sorted(best.items(), key=lambda kv: kv[1][0])})
PY
done
S="--shape 1x12288x4096 --shape 1x4096x11008 --shape 4x4096x4096 --shape 8x4096x4096 --shape 8x12288x4096 --shape 16x4096x4096"
timeout 240 $B/crossgemm bench $S --w-layout row --cache-dir /tmp/cg-y3 --max 48 --dtypes f16,bf16 --epilogues none,bias_relu --out $R --name wrow --against bench/results/h200-2026-12-04y2/wrow.json > $R/wrow.log 2>&1; echo "wrow rc=$?"
timeout 100 $B/crossgemm bench --shape 1x12288x4096 --shape 8x4096x4096 --shape 4x4096x4096 --w-layout row --first-call --cache-dir /tmp/cg-y3-first --dtypes f16 --epilogues none --out $R --name wrow-first > $R/wrow-first.log 2>&1; echo "first rc=$?"
for f in wrow wrow-first; do python3 -c "
import json
for r in json.load(open('$R/$f.json'))['rows']:
    g=lambda k: round(r[k],2) if r.get(k) else None
    print('$f',r['m'],r['n'],r['k'],r['dtype'],r['epilogue'],g('ours_us'),g('cublas_us'),g('cublaslt_us'),g('speedup_vs_cublas'),g('speedup_vs_cublaslt'),r['wrong'],r['config'])
"; done
$B/crossgemm --cache-dir /tmp/cg-y3 cache export $R/records-y3.json > $R/export.log 2>&1
finish
