#!/usr/bin/env bash
# Session s, batch s4 (.dev/s3, as batch s3). In batch s3 the per-config tunes put the
# A-resident ping-pong 128x128 (6 stages) 3-4% behind the same tile loading A per tile
# (17.0-17.1 against 16.4-16.5 us), yet the bench's full tune in another process picked
# its 8-stage twin (16.5 us). Written before: if A-resident ping-pong needs the deeper
# ring (B alone in the ring: 8 stages hold four tiles' B), the 8-stage twin ties or beats
# the per-tile winner in the same process; else it trails as the 6-stage one did.
set -u
B=.dev/s3
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
R=$OUT/s4; mkdir -p $R
cp $B/COMMIT $R/commit.txt
W='"family":"wgmma","group_m":8,"epi_smem":true,"cluster_m":1'
cfg() { echo "{$W,\"bk\":$1,\"bm\":$2,\"bn\":$3,\"stages\":$4,\"consumers\":$5,\"inflight\":$6${7:-}}"; }
PP=',"pingpong":true'
A=',"a_resident":2'
C=()
for c in "$(cfg 64 128 128 6 2 false $PP)" "$(cfg 64 128 128 6 2 false $PP$A)" "$(cfg 64 128 128 8 2 false $PP$A)" \
  "$(cfg 64 256 128 4 2 false $A)" "$(cfg 64 128 128 8 2 false $A)"; do
  C+=(--config "$c")
done
for s in 4096x4096x128 8192x8192x128; do for round in 1 2 3; do
  timeout 100 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --json --cache-dir /tmp/cg-s4 "${C[@]}" > $R/tune-$s-$round.json 2> $R/tune-$s-$round.err
  python3 bench/tune_summary.py "$s $round" $R/tune-$s-$round.json
done; done
cd $OUT && tar czf s4.tgz s4 && rm -rf s4
