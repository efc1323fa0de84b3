#!/usr/bin/env bash
# Session y, batch y1 (.dev/y1: scripts/dev-build.sh with the gemv_n family): products
# with a row-major w (`x · W`, W stored K×N, N-contiguous, as NumPy and JAX keep it) at
# decode sizes, which had no specialist kernel (decode and gemv stream K-contiguous
# columns), beside cuBLAS and cuBLASLt reading the same buffer ("NN", `bench --w-layout
# row`), and the column-major rows they mirror.
# Written before: gemv_n streams W's rows in 16-byte chunks, a warp's loads whole sectors,
# so it moves B near the copy bandwidth like gemv does: 1x12288x4096 and 1x4096x11008
# ~32-36 us (the col-major decode row takes 31.5), 8x12288x4096 ~35-40 (more FMA per byte),
# 4x4096x4096 and 8x4096x4096 ~13-16; at least 1.0x cuBLAS (NN) at M <= 8, and 1.5-2x
# faster than the best general-family candidate of the same tune (wgmma 64-row tiles,
# whose waste at M = 1 is 63 of 64 rows); M = 16 (no gemv_n) is the reference point.
# Correctness first: every planned config of the f16 kernels (f16_cr plans both gemv_n
# forms) on the suite's shapes, the same bits twice for every gemv_n config (f16, bf16),
# memcheck on the latter.
B=.dev/y1
source bench/lib.sh y1
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
timeout 200 $B/kernels --test-threads 8 every_planned_config_f16 gemv_n_configs > $R/kernels.log 2>&1; echo "kernels rc=$?"
grep -hE "test result|panicked" $R/kernels.log | head -4
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
timeout 120 $SAN --tool memcheck $B/kernels --test-threads 1 gemv_n_configs > $R/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -hE "ERROR SUMMARY|test result" $R/memcheck.log | head -3
# Every candidate of two tunes (the general families' best is what these rows ran before).
for s in 1x12288x4096 8x4096x4096; do
  timeout 60 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --w-layout row --max 400 --json --cache-dir /tmp/cg-y1t > $R/tune-row-$s.json 2> $R/tune-row-$s.err
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
timeout 240 $B/crossgemm bench $S --w-layout row --cache-dir /tmp/cg-y1 --max 48 --dtypes f16,bf16 --epilogues none,bias_relu --out $R --name wrow > $R/wrow.log 2>&1; echo "wrow rc=$?"
timeout 100 $B/crossgemm bench $S --cache-dir /tmp/cg-y1 --max 48 --dtypes f16 --epilogues none --out $R --name wcol > $R/wcol.log 2>&1; echo "wcol rc=$?"
for f in wrow wcol; do python3 -c "
import json
for r in json.load(open('$R/$f.json'))['rows']:
    g=lambda k: round(r[k],2) if r.get(k) else None
    print('$f',r['m'],r['n'],r['k'],r['dtype'],r['epilogue'],g('ours_us'),g('cublas_us'),g('cublaslt_us'),g('speedup_vs_cublas'),g('speedup_vs_cublaslt'),r['wrong'],r['config'])
"; done
$B/crossgemm --cache-dir /tmp/cg-y1 cache export $R/records-y1.json > $R/export.log 2>&1  # (as run: inside `cd /tmp`, which broke the relative $B: no records came back)
finish
