#!/usr/bin/env bash
# Session u, batch u7 (.dev/u7: the CLI and tests/kernels.rs at 60d55f3 with
# exp-producers4.patch: CG_PRODUCERS = 4 makes lane 0 of producer warps 0-3 each issue
# one half of A's or of B's K-major tile (the host's boxes are BM / 2 and BN / 2 rows),
# each arriving on the stage's full barrier with its bytes; CROSSGEMM_EXP_PRODUCERS=4
# turns it on where it applies: the TMA path, K-major operands, no cluster).
# u5: four and eight issuing threads took TMA's rate from L2 from 6.9 to 10.4 and 12.4
# TB/s where two changed nothing (u6 then found two producer threads changing nothing in
# the GEMMs). 1000^3's 128x128 tile pulls ~58 GB/s a multiprocessor from 64 of them, the
# one-thread ring's rate in u2/u3. Written before: if the GEMMs' intake is the issuing
# rate, four producers take 1000^3's 128x128 from ~12.0 toward ~10 us and the load-bound
# M = 128 and K = 128 rows a few %; the large squares within 1%. If not, no change.
# Also: the CuPy probes on cuda_probe.py (carveout, tma_pitch ceiling) run as before.
B=.dev/u7
source bench/lib.sh u7
python3 bench/carveout.py > $R/carveout.txt 2>&1; echo "carveout rc=$? $(head -2 $R/carveout.txt | tr '\n' ' ')"
python3 bench/tma_pitch.py ceiling > $R/ceiling.txt 2>&1; echo "ceiling rc=$? $(grep -m2 'box 128x64 stages  8' $R/ceiling.txt | tr '\n' ' ')"
CROSSGEMM_EXP_PRODUCERS=4 CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-u7t timeout 150 $B/kernels cluster_blocks every_planned_config_f16 persistent --test-threads 8 > $R/kernels-p4.log 2>&1; echo "kernels (4 producers) rc=$?"
grep -hE "test result|panicked" $R/kernels-p4.log | head -5
PP=',"pingpong":true'
run() { alternate CROSSGEMM_EXP_PRODUCERS "1 4" producers "$@"; }
run 1000x1000x1000 "$(cfg 64 128 128 6 2 false)" "$(cfg 64 64 128 8 1 true)"
run 1000x1000x1024 "$(cfg 64 128 128 6 2 false)" "$(cfg 64 64 128 8 1 true)"
run 4096x4096x128 "$(cfg 64 128 128 6 2 false 1 $PP)" "$(cfg 64 128 128 6 2 false)"
run 128x12288x4096 "$(cfg 64 128 128 6 2 false)" "$(cfg 64 64 192 6 1 true)"
run 4096x4096x4096 "$(cfg 64 128 256 4 2 false)" "$(cfg 64 128 128 6 2 false)"
run 8192x8192x8192 "$(cfg 64 128 256 4 2 false)"
finish
