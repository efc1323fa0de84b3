#!/usr/bin/env bash
# Session q, batch q5: staging misaligned operands with a row-copy kernel instead of the
# driver's 2-D copy (cuMemcpy2DAsync). Binaries: .dev/q5 (main plus repitch.patch: the
# CLI, gemm-runtime's unit tests and tests/staged.rs), .dev/q4n (main without it, as the baseline in the
# same session).
# Hypothesis (batches p2, p6, q1: 3000x5000x700 f16 took 59-107 us in `bench`, whose time
# includes staging A's and B's 1400-byte rows to 1408, against 40.5 us for the tuned
# kernel alone): the driver's 2-D copies of 11 MB take 20-65 us; a kernel moving 8-byte
# words does it in ~6-8 us, so the row drops to ~48-50 us (about 2.5x cuBLAS, from 1.16-2.08x).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_IGNORE_TABLES=1
R=$OUT/q5; mkdir -p $R
cp .dev/q5/COMMIT $R/commit-q5.txt; cp .dev/q4n/COMMIT $R/commit-base.txt
timeout 120 .dev/q5/runtime-tests --test-threads 1 copy_rows stage staging views > $R/unit-tests.txt 2>&1; echo "unit tests rc=$?"
grep -E "^test |test result" $R/unit-tests.txt | tail -12
# tests/staged.rs: odd K, odd-pitch views and offsets, batches, every planned config and
# the tuner, each against the host reference, on the CUDA device.
CROSSGEMM_STAGE=always timeout 200 .dev/q5/staged-tests > $R/staged-tests.txt 2>&1; echo "staged tests rc=$?"
grep -E "^test |test result|device" $R/staged-tests.txt | tail -6
for b in q5 q4n; do
  export CROSSGEMM_COMMIT="$(head -1 .dev/$b/COMMIT)-$b"
  timeout 150 .dev/$b/crossgemm bench --shape 3000x5000x700 --shape 1001x1000x1000 --dtypes f16 --epilogues none,bias_relu --max 48 --cache-dir /tmp/cg-$b --out $R --name bench-$b > $R/bench-$b.log 2>&1; echo "bench $b rc=$?"
  grep -E "^\| [0-9]" $R/bench-$b.md | cut -d'|' -f2,3,4,5,6,7,9,10,17 | head -4
done
cd $OUT && tar czf q5.tgz q5 && rm -rf q5
