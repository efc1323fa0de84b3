#!/usr/bin/env bash
# Session v, batch v3 (.dev/v3: the CLI and tests/kernels.rs with CROSSGEMM_EXP_DEFINES
# and the decode kernel's CG_ROT_BY_SM switch).
# At M = 16 every decode block reads all of A (16 x K) from L2: at 16x4096x4096 256 blocks
# read 32 MB of A beside B's 32 MB from DRAM. The rotated walk (`rot`, the winner there)
# starts each block at a chunk keyed by its index, so the two (or four) blocks sharing a
# multiprocessor read different chunks of A at any moment and none hits the L1.
# Keyed by the multiprocessor (1: %smid; 2: the index modulo 132, deterministic), the
# blocks of one multiprocessor walk A in step and the second reads it from L1.
# Written before: if A's L2 reads cost the M = 16 rows their ~8% over M = 1 (s6: 33.9
# against 31.4 us at N = 12288), keys 1 and 2 take 0.5-1 us off 16x4096x4096 (15.4-15.7)
# and 1-2 us off 16x12288x4096; the unrotated twins (unaffected) stay put.
B=.dev/v3
source bench/lib.sh v3
for k in 1 2; do
  CROSSGEMM_EXP_DEFINES=CG_ROT_BY_SM=$k CROSSGEMM_CACHE_DIR=/tmp/cg-v3k$k timeout 150 $B/kernels decode_configs --test-threads 4 > $R/kernels-decode-key$k.log 2>&1; echo "kernels decode key $k rc=$?"
  grep -hE "test result|panicked" $R/kernels-decode-key$k.log | head -3
done
D() { echo "{\"family\":\"decode\",\"mt\":$1,\"nt\":1,\"warps\":$2,\"kw\":$2,\"unroll\":4,\"rot\":$3}"; }
V="CG_ROT_BY_SM=0 CG_ROT_BY_SM=1 CG_ROT_BY_SM=2"
alternate CROSSGEMM_EXP_DEFINES "$V" key 16x4096x4096 "$(D 2 8 true)" "$(D 2 8 false)" "$(D 2 4 true)"
alternate CROSSGEMM_EXP_DEFINES "$V" key 16x12288x4096 "$(D 2 4 true)" "$(D 2 8 true)" "$(D 2 4 false)"
alternate CROSSGEMM_EXP_DEFINES "$V" key 32x4096x4096 "$(D 4 8 true)" "$(D 4 4 true)" "$(D 4 8 false)"
finish
