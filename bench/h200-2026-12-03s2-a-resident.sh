#!/usr/bin/env bash
# Session s, batch s2 (.dev/s2: the CLI, kernels and batched tests at f1c0663 plus the
# A-resident tiles, `a_resident` / CG_ARES, uncommitted).
# At 4096x4096x128 the 128x128 ping-pong winner takes 16.5 us (1.07x cuBLAS): without its
# stores 12.3 (batch q4), and its loads (L2 to SM, 64 MB for 1024 tiles: each tile reads
# as many A as B bytes) are what that time follows (batch o/c). An A-resident block keeps
# its row's A tile (all of K) in shared memory while it walks a contiguous run of tiles,
# so it reads A about once per block and row: 36 MB for 128x128 tiles, 22 MB for 256x128.
# Written before: if the loads bind, A-resident twins come in 10-20% under their
# per-tile twins and under the ping-pong winner (target 14.8 us = 1.2x cuBLAS); if the
# stores bind (33.5 MB: a bare write takes 10.3 us), the cooperative twins tie, and the
# ping-pong winner (whose epilogue overlaps the other consumer's mainloop) stays ahead.
set -u
B=.dev/s2
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
R=$OUT/s2; mkdir -p $R
cp $B/COMMIT $R/commit.txt
# 1. Correctness of every planned A-resident config: every layout and dtype on the
#    aligned and odd shapes, and the persistent loops at 3304x3304x120 (blocks walking
#    several rows: both A buffers in turn).
CROSSGEMM_TEST_CONFIGS="ares" timeout 300 $B/kernels --test-threads 16 every_planned persistent > $R/kernels-ares.log 2>&1; echo "kernels rc=$?"; grep -E "test result|FAILED|panicked" $R/kernels-ares.log | head -5
# 2. Chosen configs at 4096x4096x128, each epilogue twice (two processes).
W='"family":"wgmma","group_m":8,"epi_smem":true,"cluster_m":1'
cfg() { echo "{$W,\"bk\":$1,\"bm\":$2,\"bn\":$3,\"stages\":$4,\"consumers\":$5,\"inflight\":$6${7:-}}"; }
A=',"a_resident":2'
C=()
for c in "$(cfg 64 128 128 6 2 false ',"pingpong":true')" "$(cfg 128 64 128 4 3 false ',"pingpong":true')" "$(cfg 64 128 256 3 2 false)" "$(cfg 64 128 128 6 2 false)" \
  "$(cfg 64 128 128 6 2 false $A)" "$(cfg 64 128 128 4 2 false $A)" "$(cfg 64 256 128 4 2 false $A)" "$(cfg 64 128 256 4 2 false $A)" "$(cfg 64 128 256 2 2 false $A)" \
  "$(cfg 64 64 128 8 1 true $A)" "$(cfg 64 64 256 5 1 true $A)" "$(cfg 64 192 192 4 3 false $A)" "$(cfg 64 128 192 5 2 false $A)" "$(cfg 64 256 64 8 2 false $A)"; do
  C+=(--config "$c")
done
for e in none bias_relu; do for round in 1 2; do
  timeout 120 $B/crossgemm tune --shape 4096x4096x128 --dtype f16 --epilogue $e --json --cache-dir /tmp/cg-s2 "${C[@]}" > $R/tune-$e-$round.json 2> $R/tune-$e-$round.err
  python3 bench/tune_summary.py "4096x4096x128 $e $round" $R/tune-$e-$round.json
done; done
# 3. The bench rows with full tunes (48 candidates by the estimate, A-resident twins
#    among them where K <= 128), beside cuBLAS and cuBLASLt.
timeout 200 $B/crossgemm bench --shape 4096x4096x128 --shape 2048x2048x128 --shape 8192x8192x128 --dtypes f16 --epilogues none,bias_relu --cache-dir /tmp/cg-s2b --out $R --name k128 > $R/k128.log 2>&1; echo "bench k128 rc=$?"
grep -E "^\| [0-9]" $R/k128.md | head -8
timeout 150 $B/crossgemm bench --shape 512x512x128 --batch 32 --dtypes f16 --epilogues none,bias_relu --cache-dir /tmp/cg-s2c --out $R --name batch32 > $R/batch32.log 2>&1; echo "bench batch32 rc=$?"
grep -E "^\| [0-9]" $R/batch32.md | head -4
# 4. compute-sanitizer on two A-resident configs where each block takes several rows.
for tool in memcheck racecheck; do
  timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool $tool $B/crossgemm tune --shape 2000x2000x120 --dtype f16 --epilogue bias_relu --cache-dir /tmp/cg-s2san --config "$(cfg 64 128 128 6 2 false $A)" --config "$(cfg 64 64 128 8 1 true $A)" > $R/$tool.log 2>&1; echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $R/$tool.log
done
cd $OUT && tar czf s2.tgz s2 && rm -rf s2
