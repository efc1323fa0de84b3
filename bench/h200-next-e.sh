#!/usr/bin/env bash
# For the next H200 session's first call (written 2026-12-01 session d, not run yet).
# Build here first: `scripts/dev-build.sh .dev/next`, then carry .dev/next.
# 1. issue 14 upkeep: tests/kernels.rs through CUDA at the head (split-K and deep k-tile
#    configs, ragged shape buckets).
# 2. issue 12: the fresh-process first call at every f16 table shape, each process with an
#    empty CUDA compute cache (CUDA_CACHE_PATH: cold NVRTC, what a new machine sees) and
#    then again with that cache warm; 1000x1000x1000 should now take its own bucket's
#    winner (pow2r:, 128x128 two consumers) and run within 10 % of the tuned time.
# Everything lands in $OUT/e.tgz.
set -u
B=.dev/next
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(head -1 $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
mkdir -p $OUT/e
cp $B/COMMIT $OUT/e/commit.txt
CROSSGEMM_CACHE_DIR=/tmp/cg-suite CROSSGEMM_TEST_DEVICES=cuda:0 timeout 260 $B/kernels --test-threads 16 > $OUT/e/kernels.log 2>&1; echo "kernels rc=$?"
grep -hE "test result|panicked" -A2 $OUT/e/kernels.log | head -6
SHAPES="1024x1024x1024 2048x2048x2048 4096x4096x4096 8192x8192x8192 1024x1024x2048 16x4096x4096 128x8192x8192 4096x4096x128 1000x1000x1000 3000x5000x700 1x12288x4096 16x12288x4096 128x12288x4096 2048x12288x4096 1x11008x4096 16x11008x4096 128x11008x4096 2048x11008x4096 1x4096x11008 16x4096x11008 128x4096x11008 2048x4096x11008"
printf "shape\tepilogue\tcompute_cache\tfirst_call_ms\tsource\tours_us\tconfig\n" > $OUT/e/fresh-table.tsv
i=0
for s in $SHAPES; do for e in none bias_relu bias_gelu; do
  i=$((i+1)); rm -rf /tmp/cc-$i
  for cc in cold warm; do
    d=/tmp/cg-e-$i-$cc; rm -rf $d
    CUDA_CACHE_PATH=/tmp/cc-$i CROSSGEMM_CACHE_DIR=$d timeout 30 $B/crossgemm bench --first-call --shape $s --dtypes f16 --epilogues $e --no-vendor --runs 10 --out /tmp/fe --name e$i > /tmp/fe-$i-$cc.log 2>&1
    line=$(grep -m1 "ours " /tmp/fe-$i-$cc.log)
    fc=$(echo "$line" | grep -o 'first call [0-9]* ms ([a-z_]*)' | sed -E 's/first call ([0-9]*) ms \(([a-z_]*)\)/\1\t\2/')
    us=$(echo "$line" | sed -E 's/.*ours ([0-9.]+) us.*/\1/')
    cfg=$(echo "$line" | sed -E 's/.*\), ([a-z]+ [^,]*), first call.*/\1/')
    printf "%s\t%s\t%s\t%s\t%s\t%s\n" "$s" "$e" "$cc" "$fc" "$us" "$cfg" >> $OUT/e/fresh-table.tsv
  done
done; done
for cc in cold warm; do
  awk -F'\t' -v c=$cc 'NR>1 && $3==c {print $4}' $OUT/e/fresh-table.tsv | sort -n | awk -v c=$cc '{a[NR]=$1} END {print c, "first calls:", NR, "median", a[int((NR+1)/2)], "ms, largest", a[NR], "ms"}'
done
cd $OUT && tar czf e.tgz e && rm -rf e
