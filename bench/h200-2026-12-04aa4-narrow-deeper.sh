#!/usr/bin/env bash
# Session aa, batch aa4 (.dev/aa1: the CLI at 3be08c2, with aa1's 64x32 tiles, since
# reverted). cuBLAS's 64x32 kernel at 64 rows of a row-major W (z8) holds 213 KB of shared
# memory, about 17 stages of 12 KB where the plan's deepest narrow ring was 10; if the
# narrow tile is bound by the latency of its TMA boxes rather than their rate, a deeper
# ring takes it past the 64x64 K-in-2 winner.
# Written before: 16-18 stages at most 5% faster than 10 (the L2 box-row rate, not
# latency, holding it: aa1), still behind 64x64 K in 2 (~19.6 us); the 1x2 cluster no
# better at any depth.
B=.dev/aa1
source bench/lib.sh aa4
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
n() { echo "{\"family\":\"wgmma\",\"epi_smem\":true,\"cluster_m\":1,\"cluster_n\":$2,\"inflight\":true,\"group_m\":8,\"bk\":64,\"bm\":64,\"bn\":32,\"stages\":$1,\"consumers\":1}"; }
W='{"family":"wgmma","epi_smem":true,"cluster_m":1,"inflight":true,"group_m":8,"bk":64,"bm":64,"bn":64,"stages":8,"consumers":1,"ksplit":2}'
C=(--config "$W")
for s in 10 12 16 18; do for c in 1 2; do C+=(--config "$(n $s $c)"); done; done
for round in 1 2; do
  timeout 120 $B/crossgemm tune --shape 64x4096x4096 --w-layout row --dtype f16 --epilogue none --json --cache-dir /tmp/cg-aa4-$round "${C[@]}" > $R/tune-$round.json 2> $R/tune-$round.err; echo "tune $round rc=$?"
  python3 bench/tune_summary.py "64x4096x4096 row round $round" $R/tune-$round.json
done
finish
