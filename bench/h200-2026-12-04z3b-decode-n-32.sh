#!/usr/bin/env bash
# Session z, batch z3b (.dev/z2): z3's 32-row tune again with valid configs (z3 listed a
# 32x128 tile, which the accumulators rule refuses), and 16 rows likewise; f16, none.
# Written before: K whole, 4-8 slots ahead of K split in 2 (as at 8 rows), ~17.5-18.5 us
# at 32 rows.
B=.dev/z2
source bench/lib.sh z3b
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
d() { echo "{\"family\":\"decode_n\",\"mt\":$1,\"nt\":$2,\"warps\":$3,\"stages\":$4,\"ksplit\":$5}"; }
tune() { # label shape configs...
  local l=$1 s=$2; shift 2
  local C=(); for c in "$@"; do C+=(--config "$c"); done
  timeout 120 $B/crossgemm tune --shape $s --w-layout row --dtype f16 --epilogue none --json --cache-dir /tmp/cg-z3b-$l "${C[@]}" > $R/tune-$l.json 2> $R/tune-$l.err
  python3 bench/tune_summary.py "$l $s" $R/tune-$l.json
}
tune m32 32x4096x4096 "$(d 4 4 8 4 1)" "$(d 4 4 4 8 1)" "$(d 4 4 16 2 1)" "$(d 4 4 8 3 1)" "$(d 4 4 8 4 2)" "$(d 4 4 4 6 1)" "$(d 4 4 4 4 1)"
tune m16 16x4096x4096 "$(d 2 4 8 4 1)" "$(d 2 4 4 8 1)" "$(d 2 4 16 3 1)" "$(d 2 4 8 6 1)" "$(d 2 4 8 4 2)" "$(d 2 4 4 6 1)"
tune m16w 16x12288x4096 "$(d 2 4 8 4 1)" "$(d 2 4 4 8 1)" "$(d 2 4 16 3 1)" "$(d 2 4 8 6 1)"
finish
