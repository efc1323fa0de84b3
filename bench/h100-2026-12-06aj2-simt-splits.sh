#!/usr/bin/env bash
# Session aj, batch aj2: K split on the simt family's large tiles (f32), which the plan
# splits only at 32 rows or fewer. At 128x8192x8192 the tuned winner, 128x64x16 with K
# whole (aj1: 517-520 us, 0.68x cuBLAS, the lowest f32 row), is 128 blocks that each walk
# 512 k-tiles with one tile of loads in flight: a dependent load round trip per 16 of K,
# ~0.7 us each, is ~360 us by itself. Splitting K in 2 or 4 gives 256-512 blocks of
# 256-128 steps. Also the 16-row and 1000^3 rows, whole against split, for the estimate's
# latency term. Binaries: .dev/aj1s. Carry: [".dev/aj1s"]. ~3 minutes.
# Written before: 128x8192x8192 with 128x64 ksplit 2-4 at 300-400 us (1.3-1.7x faster),
# 1000^3's 128x128 (64 blocks) with ksplit 2 within 10% of its 128x64 winner (71 us),
# 16x4096x4096: 16x32 whole ~175 us, ksplit 8 ~56 us (aj1).
BATCH=${BATCH:-aj2}
B=${B:-.dev/aj1s}
source bench/lib.sh $BATCH
s() { # mwg nwg kwg mdimc ndimc ksplit [vw]
  echo "{\"family\":\"simt\",\"mwg\":$1,\"nwg\":$2,\"kwg\":$3,\"mdimc\":$4,\"ndimc\":$5,\"vw\":${7:-4},\"group_m\":8,\"ksplit\":$6}"
}
tune() { # shape configs...
  local sh=$1; shift; local C=(); for c in "$@"; do C+=(--config "$c"); done
  timeout 150 $B/crossgemm tune --shape $sh --dtype f32 --epilogue none --json --cache-dir /tmp/cg-$BATCH-$sh "${C[@]}" > $R/tune-$sh.json 2> $R/tune-$sh.err
  python3 bench/tune_summary.py "$sh f32" $R/tune-$sh.json
}
tune 128x8192x8192 "$(s 128 64 16 16 16 1)" "$(s 128 64 16 16 16 2)" "$(s 128 64 16 16 16 4)" "$(s 128 128 16 8 32 1)" "$(s 128 128 16 8 32 2)" "$(s 128 128 16 8 32 4)" "$(s 64 64 16 16 16 2)" "$(s 64 64 16 16 16 4)" "$(s 32 64 16 16 8 4)" "$(s 32 64 16 16 8 8)"
tune 1000x1000x1000 "$(s 128 128 16 16 16 1)" "$(s 128 64 16 16 16 1)" "$(s 128 64 16 16 16 2)" "$(s 128 128 16 8 32 1)" "$(s 128 128 16 8 32 2)" "$(s 64 64 16 16 16 1)" "$(s 64 64 16 16 16 2)" "$(s 16 128 16 16 8 1 2)" "$(s 16 128 16 16 8 4 2)" "$(s 32 128 16 16 16 4 2)"
tune 16x4096x4096 "$(s 16 32 16 8 8 1)" "$(s 16 32 16 8 8 4)" "$(s 16 32 16 8 8 8)" "$(s 16 64 16 8 8 8)" "$(s 32 64 16 16 8 8)" "$(s 128 64 16 16 16 4)" "$(s 16 128 16 16 8 8 2)" "$(s 16 64 16 8 8 1)"
tune 4096x4096x4096 "$(s 128 128 16 8 32 1)" "$(s 128 128 16 8 32 2)" "$(s 128 64 16 16 16 1)"
tune 128x4096x11008 "$(s 64 64 16 16 16 1)" "$(s 32 128 16 16 16 4 2)" "$(s 16 64 16 8 8 1)" "$(s 32 32 16 16 8 1)" "$(s 128 64 16 16 16 1)" "$(s 128 64 16 16 16 2)" "$(s 32 64 16 16 8 4)"
finish
