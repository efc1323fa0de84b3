#!/usr/bin/env bash
# H200, 2026-12-01 (session d), issue 12: where the time of the slow fresh-process first
# calls of bench/h200-2026-12-01d-fresh-table.sh goes (0.5-1.7 s at some shapes, 35-150 ms
# at others), with CROSSGEMM_LOG=1 (every NVRTC compile with its time, the lookup, the
# variant check), each case twice in fresh processes. Binaries of .dev/main.
set -u
B=.dev/main
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(head -1 $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_LOG=1
mkdir -p $OUT/l
for c in 2048x2048x2048:bias_relu 3000x5000x700:none 16x4096x4096:none 1024x1024x1024:none; do
  s=${c%%:*}; e=${c##*:}
  for r in 1 2; do
    d=/tmp/cg-l-$s-$e-$r; rm -rf $d
    /usr/bin/time -f "wall %e s, user %U s, sys %S s" env CROSSGEMM_CACHE_DIR=$d timeout 30 $B/crossgemm bench --first-call --shape $s --dtypes f16 --epilogues $e --no-vendor --runs 10 --out /tmp/fl --name l > $OUT/l/$s-$e-$r.log 2>&1
    echo "$s $e run $r: $(grep -o 'first call [0-9]* ms' $OUT/l/$s-$e-$r.log) $(tail -1 $OUT/l/$s-$e-$r.log)"
  done
done
cd $OUT && tar czf l.tgz l && rm -rf l
