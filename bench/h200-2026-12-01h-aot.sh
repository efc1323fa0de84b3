#!/usr/bin/env bash
# For the next H200 session (written 2026-12-01 session f, not run yet: loans were paused).
# Binaries of `scripts/dev-build.sh .dev/aot` (the CLI built with the `aot` feature: its
# kernels' table configs embedded as CUBINs; the test binaries as usual).
# `part1`, issue 12: fresh-process first calls over the f16 table (22 shapes x none, bias_relu, bias_gelu) and
# the bf16 one (22 shapes, none), each process with an empty crossgemm cache and an empty
# CUDA compute cache (CUDA_CACHE_PATH: what a new machine sees; session e measured a cold
# median of 722 ms without prebuilt CUBINs). The `kernel` column of each report says
# whether the first call loaded a prebuilt CUBIN or ran NVRTC.
# `part2`, issues 10 and 13, staged operands (a misaligned A or B copied into aligned
# scratch first): tests/staged.rs through CUDA and compute-sanitizer memcheck on it; then
# 3000x5000x700 (K = 700: 1400-byte rows) beside cuBLAS/cuBLASLt with staging on (the
# default) and off (CROSSGEMM_STAGE=never: session e's 0.59x), and views of pitch K + 3
# staged against the packed report of session e (bench/results/h200-2026-12-01f/part2).
# Expected: 3000x5000x700 from 209 us to ~60-80 us (TMA wgmma on K = 704 rows plus ~6 us
# of copies); K + 3 views from 0.15-0.21x to ~0.8-0.95x of packed.
# `part3`, issue 13: the batched rows beside cublasGemmStridedBatchedEx and, new, beside
# cublasLtMatmul on strided-batch layouts with its fused bias epilogue (the fair baseline
# of the fused rows: session e's 1.13-1.84x were against cuBLAS plus a separate kernel),
# and the tuner now checking every product of a batch.
# Everything lands in $OUT/aot.tgz (one JSON and log per case, fresh-table.tsv).
set -u
B=${B:-.dev/aot}  # B=.dev/pp for the rerun of part1 after the variant-check fix
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(head -1 $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
mkdir -p $OUT/aot/json
cp $B/COMMIT $OUT/aot/commit.txt
case "${1:-part1}" in
part1)
SHAPES="1024x1024x1024 2048x2048x2048 4096x4096x4096 8192x8192x8192 1024x1024x2048 16x4096x4096 128x8192x8192 4096x4096x128 1000x1000x1000 3000x5000x700 1x12288x4096 16x12288x4096 128x12288x4096 2048x12288x4096 1x11008x4096 16x11008x4096 128x11008x4096 2048x11008x4096 1x4096x11008 16x4096x11008 128x4096x11008 2048x4096x11008"
printf "shape\tdtype\tepilogue\tfirst_call\n" > $OUT/aot/fresh-table.tsv
i=0
one() { # shape dtype epilogue
  i=$((i+1)); rm -rf /tmp/cc-$i /tmp/cg-$i
  CUDA_CACHE_PATH=/tmp/cc-$i CROSSGEMM_CACHE_DIR=/tmp/cg-$i timeout 40 $B/crossgemm bench --first-call --shape $1 --dtypes $2 --epilogues $3 --no-vendor --runs 10 --out $OUT/aot/json --name c$i > $OUT/aot/json/c$i.log 2>&1
  printf "%s\t%s\t%s\t%s\n" "$1" "$2" "$3" "$(grep -o 'first call [0-9]* ms ([^)]*)' $OUT/aot/json/c$i.log | head -1)" >> $OUT/aot/fresh-table.tsv
}
for s in $SHAPES; do for e in none bias_relu bias_gelu; do one $s f16 $e; done; done
for s in $SHAPES; do one $s bf16 none; done
grep -c prebuilt $OUT/aot/fresh-table.tsv
awk -F'\t' 'NR>1 {split($4,a," "); print a[3]}' $OUT/aot/fresh-table.tsv | sort -n | awk '{a[NR]=$1} END {print "first calls:", NR, "median", a[int((NR+1)/2)], "ms, largest", a[NR], "ms"}'
grep -v prebuilt $OUT/aot/fresh-table.tsv | head -12
;;
part2)
  CROSSGEMM_CACHE_DIR=/tmp/cg-st CROSSGEMM_TEST_DEVICES=cuda:0 timeout 150 $B/staged > $OUT/aot/staged.log 2>&1; echo "staged rc=$?"
  grep -hE "test result|panicked" -A3 $OUT/aot/staged.log | head -6
  CROSSGEMM_CACHE_DIR=/tmp/cg-stsan CROSSGEMM_TEST_DEVICES=cuda:0 timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck $B/staged > $OUT/aot/san-staged.log 2>&1; echo "memcheck rc=$?"
  grep -E "ERROR SUMMARY|test result" $OUT/aot/san-staged.log
  C="--shape 3000x5000x700 --dtypes f16 --epilogues none,bias_relu,bias_gelu --out $OUT/aot"
  CROSSGEMM_CACHE_DIR=/tmp/cg-k700 timeout 150 $B/crossgemm bench $C --name k700-staged > $OUT/aot/k700-staged.log 2>&1; echo "k700 staged rc=$?"
  CROSSGEMM_STAGE=never CROSSGEMM_CACHE_DIR=/tmp/cg-k700n timeout 150 $B/crossgemm bench $C --name k700-direct > $OUT/aot/k700-direct.log 2>&1; echo "k700 direct rc=$?"
  grep -hE "^\| 3000x5000x700" $OUT/aot/k700-*.md
  S="--shape 4096x4096x4096 --shape 2048x11008x4096 --shape 16x4096x4096 --shape 1000x1000x1000 --shape 4096x4096x128"
  CROSSGEMM_CACHE_DIR=/tmp/cg-p3 timeout 200 $B/crossgemm bench $S --dtypes f16 --epilogues none,bias_relu --no-vendor --pad 3 --out $OUT/aot --name pad3-staged --against bench/results/h200-2026-12-01f/part2/packed.json > $OUT/aot/pad3.log 2>&1; echo "pad3 rc=$?"
  grep -A14 "^## Change" $OUT/aot/pad3-staged.md | head -18
;;
part3)
  C="--dtypes f16 --epilogues none,bias_relu,bias_gelu --out $OUT/aot"
  CROSSGEMM_CACHE_DIR=/tmp/cg-b32 timeout 150 $B/crossgemm bench --shape 512x512x128 --batch 32 $C --name b32 > $OUT/aot/b32.log 2>&1; echo "b32 rc=$?"
  CROSSGEMM_CACHE_DIR=/tmp/cg-b64 timeout 150 $B/crossgemm bench --shape 128x4096x128 --batch 64 $C --name b64 > $OUT/aot/b64.log 2>&1; echo "b64 rc=$?"
  CROSSGEMM_CACHE_DIR=/tmp/cg-b8 timeout 200 $B/crossgemm bench --shape 2048x2048x2048 --batch 8 $C --name b8 > $OUT/aot/b8.log 2>&1; echo "b8 rc=$?"
  for b in b32 b64 b8; do grep -E "^\| [0-9]+x\(" $OUT/aot/$b.md | head -4; done
;;
esac
cd $OUT && tar czf aot.tgz aot && rm -rf aot
