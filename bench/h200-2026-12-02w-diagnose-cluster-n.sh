#!/usr/bin/env bash
# Session l, batch w (the CLI of .dev/v, 735f7b1): `crossgemm diagnose` at 4096^3 and
# 1000^3 (f16, none). Its neighbours of the winner now include `cluster_n 2` (a cluster
# of 2 along N sharing A: the winner's tile with CLUSTER_N = 2), beside `cluster 2`
# (along M sharing B). Question left by batches t and u: are the 2x2 clusters slow
# because clusters of 4 do not all fit at once, or because of the A multicast path
# itself? A 1x2 cluster as slow as the 2x2 points at the A path; one as fast as
# `cluster 2` points at clusters of 4.
set -u
B=${B:-.dev/v}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
R=$OUT/w; mkdir -p $R
cp $B/COMMIT $R/commit.txt
for s in 4096x4096x4096 1000x1000x1000; do
  timeout 100 $B/crossgemm diagnose --cache-dir /tmp/cg-w --shape $s --dtype f16 --epilogue none > $R/diagnose-$s.txt 2>&1; echo "diagnose $s rc=$?"
  grep -iE "cluster|winner|full|neighbour" $R/diagnose-$s.txt | head -16
done
cd $OUT && tar czf w.tgz w && rm -rf w
