#!/usr/bin/env bash
# Session aa, batch aa5 (.dev/aa2: the CLI at the head). Batch aa4 found the 64x32 tile's
# time falling with its ring's depth (10 stages 20.2 us, 18 stages 18.7-18.8 at
# 64x4096x4096, row-major W): the loads there are bound by latency, not by the L2's box
# rows alone. The plan's rings stop at 10 stages (`tiles::space`); the 64-row tiles of
# 16 KB stages fit 13.
# Written before: 64x64 K in 2 with 12-13 stages 3-6% faster than with 8 (18.5 us) at
# 64x4096x4096 row-major; the same tile with K whole gains more (it has twice the k-tiles
# to pipeline); at 128x12288x4096 (64x192 s6, 32 KB stages) no deeper ring fits.
B=.dev/aa2
source bench/lib.sh aa5
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
t() { echo "{\"family\":\"wgmma\",\"epi_smem\":true,\"cluster_m\":1,\"inflight\":true,\"group_m\":8,\"bk\":64,\"bm\":64,\"bn\":$1,\"stages\":$2,\"consumers\":1$3}"; }
run() {
  local label=$1 shape=$2 lay=$3; shift 3
  local C=(); for c in "$@"; do C+=(--config "$c"); done
  for round in 1 2; do
    timeout 100 $B/crossgemm tune --shape $shape --w-layout $lay --dtype f16 --epilogue none --json --cache-dir /tmp/cg-aa5-$label-$round "${C[@]}" > $R/tune-$label-$round.json 2> $R/tune-$label-$round.err
    python3 bench/tune_summary.py "$label round $round" $R/tune-$label-$round.json
  done
}
K2=',"ksplit":2'
run row64 64x4096x4096 row "$(t 64 8 "$K2")" "$(t 64 10 "$K2")" "$(t 64 12 "$K2")" "$(t 64 13 "$K2")" "$(t 64 8 '')" "$(t 64 13 '')" "$(t 128 8 "$K2")"
run col64 64x4096x4096 col "$(t 64 8 "$K2")" "$(t 64 10 "$K2")" "$(t 64 13 "$K2")" "$(t 64 13 '')" '{"family":"wgmma","epi_smem":true,"cluster_m":1,"inflight":false,"group_m":8,"bk":128,"bm":64,"bn":64,"stages":6,"consumers":2,"pingpong":true}'
run row48 48x4096x4096 row "$(t 64 8 "$K2")" "$(t 64 13 "$K2")" "$(t 64 13 '')"
run row128 128x4096x4096 row "$(t 128 8 "$K2")" "$(t 128 6 "$K2")" "$(t 64 8 "$K2")" "$(t 64 13 "$K2")" "$(t 64 13 '')"
finish
