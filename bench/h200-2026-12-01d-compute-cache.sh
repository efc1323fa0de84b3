#!/usr/bin/env bash
# H200, 2026-12-01 (session d), issue 12: is the machine-wide cache that makes a second
# fresh process's NVRTC compile 38 ms instead of 1247 ms (bench/h200-2026-12-01d-first-call-log.sh:
# an empty ptxas log the second time) CUDA's compute cache? The same first call with
# CUDA_CACHE_PATH pointing at an empty folder (twice), then with CUDA_CACHE_DISABLE=1.
set -u
B=.dev/main
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(head -1 $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_LOG=1
fc() { # label, env...
  local label=$1; shift
  local d=/tmp/cg-cc-$label; rm -rf $d
  env "$@" CROSSGEMM_CACHE_DIR=$d timeout 30 $B/crossgemm bench --first-call --shape 2048x2048x2048 --dtypes f16 --epilogues bias_gelu --no-vendor --runs 10 --out /tmp/fcc --name c > /tmp/cc-$label.log 2>&1
  echo "$label: $(grep -o 'first call [0-9]* ms' /tmp/cc-$label.log); $(grep -m1 -o 'KSPLIT=1\] [0-9.]* ms: [^;]*' /tmp/cc-$label.log)"
}
ls -d ~/.nv/ComputeCache 2>/dev/null && du -sh ~/.nv/ComputeCache
mkdir -p /tmp/newcc
fc newcache-1 CUDA_CACHE_PATH=/tmp/newcc
fc newcache-2 CUDA_CACHE_PATH=/tmp/newcc
fc disabled-1 CUDA_CACHE_DISABLE=1
fc disabled-2 CUDA_CACHE_DISABLE=1
fc default-1 X=1
du -sh /tmp/newcc
