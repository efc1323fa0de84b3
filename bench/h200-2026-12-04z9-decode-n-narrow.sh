#!/usr/bin/env bash
# Session z, batch z9 (.dev/z9: the CLI at 5cb09ea with decode_n taking 32-column tiles,
# rows of 64 bytes in its ring (nt 2), and 64 rows of X (mt 8, with nt 2 only: 64
# accumulators)): cuBLAS runs 64x32 tiles at 64 rows (z8); here 32-column strips give
# N = 4096 128 blocks over all of K. `--config` lists (each candidate checked against the
# reference by the tune), f16, none.
# Written before: 64 rows on 64x32 decode_n tiles ~17-18 us (wgmma 64x64 K in 2: 18.0);
# 8-32 rows with 32-column strips within 5% of the 64-column ones (K split, which also
# doubles the blocks, did not help: z3).
B=.dev/z9
source bench/lib.sh z9
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
d() { echo "{\"family\":\"decode_n\",\"mt\":$1,\"nt\":$2,\"warps\":$3,\"stages\":$4,\"ksplit\":1}"; }
W='{"family":"wgmma","bm":64,"bn":64,"bk":64,"stages":8,"consumers":1,"group_m":8,"cluster_m":1,"inflight":true,"epi_smem":true,"ksplit":2}'
tune() { # shape configs...
  local s=$1; shift
  local C=(); for c in "$@"; do C+=(--config "$c"); done
  timeout 90 $B/crossgemm tune --shape $s --w-layout row --dtype f16 --epilogue none --json --cache-dir /tmp/cg-z9-$s "${C[@]}" > $R/tune-$s.json 2> $R/tune-$s.err
  python3 bench/tune_summary.py "$s" $R/tune-$s.json
}
tune 8x4096x4096 "$(d 1 4 8 4)" "$(d 1 2 8 4)" "$(d 1 2 4 8)" "$(d 1 2 16 4)"
tune 16x4096x4096 "$(d 2 4 8 4)" "$(d 2 2 8 4)" "$(d 2 2 4 8)"
tune 32x4096x4096 "$(d 4 4 8 4)" "$(d 4 2 8 4)" "$(d 4 2 4 8)"
tune 48x4096x4096 "$(d 8 2 8 4)" "$(d 8 2 4 8)" "$W"
tune 64x4096x4096 "$(d 8 2 8 4)" "$(d 8 2 4 8)" "$W"
tune 64x12288x4096 "$(d 8 2 8 4)" "$W"
finish
