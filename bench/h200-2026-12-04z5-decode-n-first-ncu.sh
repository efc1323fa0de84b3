#!/usr/bin/env bash
# Session z, batch z5 (.dev/z5: the CLI at f1c4976, records with z4's decode_n winners):
# first calls of the row-major-w rows with the tables on (the records merged after z4),
# then Nsight Compute on decode_n at 8x4096x4096, K whole (64 blocks) against K split in
# 2 (128 blocks), to see what holds the kernel at 15.8 us (W's bare read: ~10 us).
# Written before: first calls run decode_n's table winners within ~5% of z4's tuned times
# (8x4096x4096 ~16 us, not the untabled default's 17.0 of z2). ncu: K whole pulls ~2.1
# TB/s of DRAM with half the SMs idle; K split in 2 no more DRAM throughput despite
# twice the SMs (a latency or DRAM-locality limit, not the SM count).
B=.dev/z5
source bench/lib.sh z5
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
S="--shape 2x4096x4096 --shape 4x4096x4096 --shape 8x4096x4096 --shape 16x4096x4096 --shape 32x4096x4096 --shape 16x12288x4096"
CROSSGEMM_IGNORE_TABLES= timeout 150 $B/crossgemm bench $S --w-layout row --first-call --cache-dir /tmp/cg-z5-first --dtypes f16 --epilogues none --out $R --name wrow-first-tables > $R/wrow-first-tables.log 2>&1; echo "first rc=$?"
python3 -c "
import json
for r in json.load(open('$R/wrow-first-tables.json'))['rows']:
    g=lambda k: round(r[k],2) if r.get(k) else None
    print('first',r['m'],r['n'],r['k'],r['dtype'],r['epilogue'],g('ours_us'),g('cublas_us'),g('speedup_vs_cublas'),r.get('config_source'),r['wrong'],r['config'])
"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"
d() { echo "{\"family\":\"decode_n\",\"mt\":$1,\"nt\":$2,\"warps\":$3,\"stages\":$4,\"ksplit\":$5}"; }
for ks in 1 2; do
  timeout 120 $NCU --clock-control none --set full -k regex:cg_gemm_f16_none_wrow -c 1 $B/crossgemm tune --shape 8x4096x4096 --w-layout row --dtype f16 --epilogue none --cache-dir /tmp/cg-z5-ncu-$ks --config "$(d 1 4 8 4 $ks)" > $R/ncu-ks$ks.txt 2>&1; echo "ncu ks$ks rc=$?"
  grep -E "DRAM Throughput|Memory Throughput|Duration|L2 Cache Throughput|L1/TEX Hit|L2 Hit Rate|Achieved Occupancy|Registers Per|Block Limit|Waves Per SM|One or More Eligible|Issued Warp|No Eligible|Stall|Warp Cycles Per Issued" $R/ncu-ks$ks.txt | head -24
done
finish
