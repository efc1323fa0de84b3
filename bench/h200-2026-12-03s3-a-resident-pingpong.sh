#!/usr/bin/env bash
# Session s, batch s3 (.dev/s3: the CLI and kernels test at f1c0663 plus the A-resident
# tiles, now with ping-pong too; uncommitted).
# Batch s2b: an A-resident cooperative 128x128 took 17.4-17.5 us at 4096x4096x128 against
# 18.5 for the same tile loading A per tile (5.5% less), but the ping-pong 128x128 that
# loads A per tile stayed ahead at 15.7 (its epilogue overlaps the other consumer's
# mainloop). Now ping-pong consumers share the block's row buffers (each gives every row
# load back once, passing the other's rows).
# Written before: A-resident ping-pong 128x128 about 5% under the ping-pong winner
# (~14.9 us, 1.2x cuBLAS's 17.6 of batch p6), and the fused row's 64x128x128 ping-pong of
# three likewise (17.4 -> ~16.5); if the ping-pong schedule already hides the A loads,
# a tie.
set -u
B=.dev/s3
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
R=$OUT/s3; mkdir -p $R
cp $B/COMMIT $R/commit.txt
W='"family":"wgmma","group_m":8,"epi_smem":true,"cluster_m":1'
cfg() { echo "{$W,\"bk\":$1,\"bm\":$2,\"bn\":$3,\"stages\":$4,\"consumers\":$5,\"inflight\":$6${7:-}}"; }
PP=',"pingpong":true'
A=',"a_resident":2'
A1=',"a_resident":1'
# 1. Speed first (the tests take minutes): chosen configs at 4096x4096x128, each epilogue
#    in two processes.
C=()
for c in "$(cfg 64 128 128 6 2 false $PP)" "$(cfg 64 128 128 6 2 false $PP$A)" "$(cfg 64 128 128 4 2 false $PP$A)" \
  "$(cfg 128 64 128 4 3 false $PP)" "$(cfg 128 64 128 4 3 false $PP$A1)" "$(cfg 64 64 128 8 3 false $PP$A)" \
  "$(cfg 64 64 256 5 2 false $PP$A)" "$(cfg 64 64 128 8 2 false $PP$A)" "$(cfg 64 128 64 8 2 false $PP$A)" \
  "$(cfg 64 128 128 6 2 false $A)" "$(cfg 64 256 128 4 2 false $A)"; do
  C+=(--config "$c")
done
for e in none bias_relu; do for round in 1 2; do
  timeout 120 $B/crossgemm tune --shape 4096x4096x128 --dtype f16 --epilogue $e --json --cache-dir /tmp/cg-s3 "${C[@]}" > $R/tune-$e-$round.json 2> $R/tune-$e-$round.err
  python3 bench/tune_summary.py "4096x4096x128 $e $round" $R/tune-$e-$round.json
done; done
# 2. The bench rows with full tunes (48 candidates by the estimate).
timeout 200 $B/crossgemm bench --shape 4096x4096x128 --shape 2048x2048x128 --shape 8192x8192x128 --dtypes f16 --epilogues none,bias_relu --cache-dir /tmp/cg-s3b --out $R --name k128 > $R/k128.log 2>&1; echo "bench k128 rc=$?"
grep -E "^\| [0-9]" $R/k128.md | head -8
timeout 150 $B/crossgemm bench --shape 512x512x128 --batch 32 --dtypes f16 --epilogues none,bias_relu --cache-dir /tmp/cg-s3c --out $R --name batch32 > $R/batch32.log 2>&1; echo "bench batch32 rc=$?"
grep -E "^\| [0-9]" $R/batch32.md | head -4
# 3. Correctness: every planned A-resident config (every layout, dtype, schedule) on the
#    aligned and odd shapes, the persistent loops at 3304x3304x120 and 80000x104x120
#    (ping-pong consumers passing each other's rows), and the sanitizers on two
#    A-resident ping-pong configs where every block takes several rows.
CROSSGEMM_TEST_CONFIGS="ares" timeout 240 $B/kernels --test-threads 16 every_planned persistent > $R/kernels-ares.log 2>&1; echo "kernels rc=$?"; grep -E "test result|FAILED|panicked" $R/kernels-ares.log | head -5
for tool in memcheck racecheck synccheck; do
  timeout 100 /usr/local/cuda/bin/compute-sanitizer --tool $tool $B/crossgemm tune --shape 20000x136x120 --dtype f16 --epilogue bias_relu --cache-dir /tmp/cg-s3san --config "$(cfg 64 128 128 6 2 false $PP$A)" --config "$(cfg 128 64 128 4 3 false $PP$A1)" > $R/$tool.log 2>&1; echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $R/$tool.log
done
cd $OUT && tar czf s3.tgz s3 && rm -rf s3
