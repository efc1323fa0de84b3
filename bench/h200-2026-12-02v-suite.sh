#!/usr/bin/env bash
# Session l, batch v (binaries of `scripts/dev-build.sh .dev/v` at 735f7b1): the kernel
# suite on the committed wgmma source (CLUSTER_N support; the default plan unchanged, its
# configs' code the same in effect), unfiltered: every planned config, the persistent
# loops, split-K's and decode's same-bits checks, and the batched suite.
set -u
B=${B:-.dev/v}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_TEST_DEVICES=cuda:0
R=$OUT/v; mkdir -p $R
cp $B/COMMIT $R/commit.txt
CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 300 $B/kernels --test-threads 16 > $R/kernels.log 2>&1; echo "kernels rc=$?"
grep -E "test result|FAILED|panicked" $R/kernels.log | head -6
CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 150 $B/batched --test-threads 6 > $R/batched.log 2>&1; echo "batched rc=$?"
grep -E "test result|FAILED|panicked" $R/batched.log | head -6
cd $OUT && tar czf v.tgz v && rm -rf v
