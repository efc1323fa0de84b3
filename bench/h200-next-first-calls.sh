#!/usr/bin/env bash
# For the next H200 session's second device call (written 2026-12-01 evening, not run yet),
# from the binaries of `scripts/dev-build.sh` in .dev/next (see bench/h200-next.sh).
# issue 12: first calls after `prepare` over the f16 table, now that the build-variant
# check runs at a cut shape (the evening's prepared table: median 175 ms, at most 639 ms,
# the LLM shapes), and first calls in fresh processes at four shapes with the NVRTC log
# (the afternoon's: 457, 685, 805, 1443 ms). Everything lands in $OUT/f.tgz.
set -u
B=.dev/next
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(head -1 $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
mkdir -p $OUT/n
cp $B/COMMIT $OUT/n/commit.txt
CROSSGEMM_CACHE_DIR=/tmp/cg-p timeout 200 $B/crossgemm bench --first-call --prepare --dtypes f16 --out $OUT/n --name prepared-table --against bench/results/h200-2026-12-01b/full-f16-bf16.json > $OUT/n/prepared-table.log 2>&1; echo "prepared table rc=$?"
grep -h "first calls:" $OUT/n/prepared-table.md
for s in 4096x4096x4096 16x12288x4096 1x12288x4096 1024x1024x1024; do
  CROSSGEMM_LOG=1 CROSSGEMM_CACHE_DIR=/tmp/cg-fresh-$s timeout 60 $B/crossgemm bench --first-call --shape $s --dtypes f16 --epilogues bias_gelu --no-vendor --runs 10 --out /tmp/fc --name fresh-$s > $OUT/n/fresh-$s.log 2>&1
  echo "fresh $s rc=$? $(grep -o 'first call [0-9]* ms ([a-z_]*)' $OUT/n/fresh-$s.log)"
done
cd $OUT && mv n f && tar czf f.tgz f && rm -rf f
