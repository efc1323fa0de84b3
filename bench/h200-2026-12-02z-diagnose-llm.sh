#!/usr/bin/env bash
# Session m, batch z (binaries of `scripts/dev-build.sh .dev/z`: resident-cluster grids as
# committed). First the runtime's test that a clustered persistent grid runs all at once
# (clustered_persistent_grids_run_at_once: every block waits for the whole grid; it fails
# on a grid the device cannot hold at once). Then `crossgemm diagnose` at the issue-9
# shapes still short of 0.95x, for their launch orders. 2048x11008x4096's 128x256 winner walks 16 tile rows in
# groups of 8, so each B panel (2 MB) comes from memory twice, 180 MB in all; in groups of
# 16, A (16 MB) stays in L2 and B is read once: 90 MB less DRAM traffic, ~10 W of a
# 700 W budget the chip is held to (1.55 GHz here). Expected: GROUP_M 16 ahead of 8 by
# 1-2% at most; at 4096^3 (session k) 16 was 179.3 against 180.1-181.3 us.
set -u
B=${B:-.dev/z}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
R=$OUT/z; mkdir -p $R
cp $B/COMMIT $R/commit.txt
CROSSGEMM_REQUIRE_CUDA=1 timeout 60 $B/runtime_tests --test-threads 1 device::cuda > $R/runtime-cuda.log 2>&1; echo "runtime cuda tests rc=$?"
grep -E "clustered|test result|FAILED|panicked" $R/runtime-cuda.log | head -6
for case in "2048x11008x4096 f16 none" "2048x12288x4096 bf16 bias_relu"; do
  set -- $case
  timeout 200 $B/crossgemm diagnose --cache-dir /tmp/cg-z --shape $1 --dtype $2 --epilogue $3 > $R/diagnose-$1-$2-$3.txt 2>&1; echo "diagnose $case rc=$?"
  grep -E "full|GROUP_M|verdict|winner" $R/diagnose-$1-$2-$3.txt | head -14
done
cd $OUT && tar czf z.tgz z && rm -rf z
