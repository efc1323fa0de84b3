#!/usr/bin/env bash
# Session y, batch y2 (.dev/y2: gemv_n with its K split over blocks): products
# with a row-major w (`x · W`, W stored K×N, N-contiguous, as NumPy and JAX keep it) at
# decode sizes, which had no specialist kernel (decode and gemv stream K-contiguous
# columns), beside cuBLAS and cuBLASLt reading the same buffer ("NN", `bench --w-layout
# row`), and the column-major rows they mirror.
# Batch y1 refuted gemv_n's first form (one block per strip of columns over all of K):
# 37.1 us at 1x12288x4096 (wgmma 38.6, cuBLAS NN 35.9) and 35.2 at 8x4096x4096 (wgmma
# 19.7): at N = 4096 its 128-256 blocks of 8 warps leave the SMs short of loads in
# flight, and strips of 32-64 bytes a row read B's rows in short pieces.
# Written before: with K split over blocks (KSPLIT 4-16; wide strips of 128-512 bytes a
# row, the last block of a strip adding the partials in split order), gemv_n moves B at
# the decode kernel's rate on the column-major mirror: 1x12288x4096 ~31-33 us (1.1x
# cuBLAS NN), 4x and 8x4096x4096 ~14-16 (1.15-1.25x), 8x12288x4096 ~32-35; the wrow rows
# at least 1.0x cuBLAS where M <= 8, and their first calls (the planner's first gemv_n
# config, untuned) within 15% of the tuned winner.
B=.dev/y2
source bench/lib.sh y2
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
timeout 200 $B/kernels --test-threads 8 every_planned_config_f16 gemv_n_configs > $R/kernels.log 2>&1; echo "kernels rc=$?"
grep -hE "test result|panicked" $R/kernels.log | head -4
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
timeout 120 $SAN --tool memcheck $B/kernels --test-threads 1 gemv_n_configs > $R/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -hE "ERROR SUMMARY|test result" $R/memcheck.log | head -3
# Every candidate of two tunes (the general families' best is what these rows ran before).
for s in 1x12288x4096 8x4096x4096; do
  timeout 60 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --w-layout row --max 400 --json --cache-dir /tmp/cg-y2t > $R/tune-row-$s.json 2> $R/tune-row-$s.err
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
timeout 240 $B/crossgemm bench $S --w-layout row --cache-dir /tmp/cg-y2 --max 48 --dtypes f16,bf16 --epilogues none,bias_relu --out $R --name wrow --against bench/results/h200-2026-12-04y1/wrow.json > $R/wrow.log 2>&1; echo "wrow rc=$?"
timeout 100 $B/crossgemm bench --shape 1x12288x4096 --shape 8x4096x4096 --shape 4x4096x4096 --w-layout row --first-call --cache-dir /tmp/cg-y2-first --dtypes f16 --epilogues none --out $R --name wrow-first > $R/wrow-first.log 2>&1; echo "first rc=$?"
for f in wrow wrow-first; do python3 -c "
import json
for r in json.load(open('$R/$f.json'))['rows']:
    g=lambda k: round(r[k],2) if r.get(k) else None
    print('$f',r['m'],r['n'],r['k'],r['dtype'],r['epilogue'],g('ours_us'),g('cublas_us'),g('cublaslt_us'),g('speedup_vs_cublas'),g('speedup_vs_cublaslt'),r['wrong'],r['config'])
"; done
$B/crossgemm --cache-dir /tmp/cg-y2 cache export $R/records-y2.json > $R/export.log 2>&1
finish
