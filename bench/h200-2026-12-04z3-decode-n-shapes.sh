#!/usr/bin/env bash
# Session z, batch z3 (.dev/z2, the CLI of z2): decode_n's ring and split around z2's
# winner (64 columns, 8 warps, 4 slots, K whole: 64 blocks at N = 4096), tuned with
# `--config` lists at 8 and 32 rows, and against gemv_n at 1 and 2 rows (gemv_n's y4
# winners beside), f16, none.
# Written before: deeper rings (5-6 slots) 0-5% faster at 8 rows; K split in 2 ~8% slower
# (z2's first calls); 16 warps (a ring of 3) about the same; at 1-2 rows decode_n within
# ~10% of gemv_n (z2 took 4 rows 16% faster than gemv_n's y4 time).
B=.dev/z2
source bench/lib.sh z3
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
d() { echo "{\"family\":\"decode_n\",\"mt\":$1,\"nt\":$2,\"warps\":$3,\"stages\":$4,\"ksplit\":$5}"; }
tune() { # label shape configs...
  local l=$1 s=$2; shift 2
  local C=(); for c in "$@"; do C+=(--config "$c"); done
  timeout 120 $B/crossgemm tune --shape $s --w-layout row --dtype f16 --epilogue none --json --cache-dir /tmp/cg-z3-$l "${C[@]}" > $R/tune-$l.json 2> $R/tune-$l.err
  python3 bench/tune_summary.py "$l $s" $R/tune-$l.json
}
M1=("$(d 1 4 8 4 1)" "$(d 1 4 8 6 1)" "$(d 1 4 8 3 1)" "$(d 1 4 8 2 1)" "$(d 1 4 4 8 1)" "$(d 1 4 16 3 1)" "$(d 1 8 8 3 1)" "$(d 1 8 4 6 1)" "$(d 1 4 8 4 2)" "$(d 1 4 8 6 2)" "$(d 1 4 4 6 2)")
tune m8 8x4096x4096 "${M1[@]}"
tune m8b 8x4096x4096 "${M1[@]}"
tune m32 32x4096x4096 "$(d 4 4 8 4 1)" "$(d 4 4 8 3 1)" "$(d 4 4 16 2 1)" "$(d 4 4 4 8 1)" "$(d 4 8 4 4 1)" "$(d 4 4 8 4 2)"
GN='{"family":"gemv_n","mr":1,"warps":8,"chunks":8}'
GN4='{"family":"gemv_n","mr":2,"warps":8,"chunks":8,"ksplit":4}'
tune m1 1x12288x4096 "$GN" "$(d 1 4 8 4 1)" "$(d 1 4 8 6 1)" "$(d 1 8 8 3 1)" "$(d 1 4 4 8 1)"
tune m1b 1x4096x11008 '{"family":"gemv_n","mr":1,"warps":8,"chunks":8,"ksplit":4}' "$(d 1 4 8 4 1)" "$(d 1 4 8 6 1)" "$(d 1 4 8 4 2)" "$(d 1 4 4 8 1)"
tune m2 2x4096x4096 "$GN4" "$(d 1 4 8 4 1)" "$(d 1 4 8 6 1)" "$(d 1 4 8 4 2)" "$(d 1 4 4 8 1)"
finish
