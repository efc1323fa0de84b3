#!/usr/bin/env bash
# Session i, first batch (binaries of `scripts/dev-build.sh .dev/dec` trimmed to what runs
# here, plus `crossgemm-sk`: the CLI built with `--features baseline,streamk-candidates`).
# `part1`: correctness on the H200 of what no GPU has run yet:
#   - the kernels suite through CUDA: the new decode family (every planned config on
#     aligned and odd shapes, and the same bits twice) and the opt-in stream-K kernel
#     (persistent_grids_loop_over_tiles, f16_rc_sk);
#   - tests/views.rs and tests/batched.rs (every config on views and on batches);
#   - compute-sanitizer memcheck and racecheck on the decode test (its shared-memory
#     reduction), memcheck, racecheck and synccheck on the persistent test (stream-K).
# `part2`: speed beside cuBLAS/cuBLASLt, against the 2026-12-01 report:
#   - the decode-size shapes (M = 1, 8, 16, 32) f16 none/bias_relu and bf16 none: expected
#     16x4096x4096 from 18.2 us (the split-K wgmma winner) toward 10-11 us (33.6 MB at
#     ~3.5 TB/s plus ~2 us launch), the M = 16 LLM rows from ~35 to ~27 us;
#   - every candidate's time at 16x4096x4096 (crossgemm tune --json);
#   - stream-K at 2048x11008x4096 (5.2 waves of 128x256; expected 266 -> ~245 us);
#   - the memory-pool run of bench/h200-2026-12-01k-pool.sh (staged 3000x5000x700 and a
#     K + 3 view of 16x4096x4096 against session h's numbers).
set -u
B=${B:-.dev/dec}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(head -1 $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
SAN=/usr/local/cuda/bin/compute-sanitizer
mkdir -p $OUT/dec
cp $B/COMMIT $OUT/dec/commit.txt
case "${1:-part1}" in
part1)
  export CROSSGEMM_TEST_DEVICES=cuda:0
  CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 240 $B/kernels --test-threads 16 > $OUT/dec/kernels.log 2>&1; echo "kernels rc=$?"
  grep -hE "test result|panicked" -A3 $OUT/dec/kernels.log | head -16
  for t in views batched; do
    CROSSGEMM_CACHE_DIR=/tmp/cg-$t timeout 90 $B/$t --test-threads 16 > $OUT/dec/$t.log 2>&1; echo "$t rc=$?"
    grep -hE "test result|panicked" -A3 $OUT/dec/$t.log | head -8
  done
  for tool in memcheck racecheck; do
    CROSSGEMM_CACHE_DIR=/tmp/cg-san timeout 60 $SAN --tool $tool $B/kernels --test-threads 1 decode_configs_give_the_same_bits_twice > $OUT/dec/san-decode-$tool.log 2>&1; echo "decode $tool rc=$?"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test result" $OUT/dec/san-decode-$tool.log
  done
  for tool in memcheck racecheck synccheck; do
    CROSSGEMM_CACHE_DIR=/tmp/cg-san timeout 70 $SAN --tool $tool $B/kernels --test-threads 1 persistent_grids_loop_over_tiles > $OUT/dec/san-persistent-$tool.log 2>&1; echo "persistent $tool rc=$?"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test result" $OUT/dec/san-persistent-$tool.log
  done
  ;;
part2)
  S="--shape 16x4096x4096 --shape 16x12288x4096 --shape 16x4096x11008 --shape 16x11008x4096 --shape 1x12288x4096 --shape 1x4096x11008 --shape 8x4096x4096 --shape 32x4096x4096 --shape 32x12288x4096"
  CROSSGEMM_CACHE_DIR=/tmp/cg-b timeout 150 $B/crossgemm bench $S --max 48 --dtypes f16 --epilogues none,bias_relu --out $OUT/dec --name decode-f16 --against bench/results/nvidia-h200-2026-12-01.json > $OUT/dec/decode-f16.log 2>&1; echo "bench f16 rc=$?"
  grep -E "^\| [0-9]" $OUT/dec/decode-f16.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -20
  CROSSGEMM_CACHE_DIR=/tmp/cg-b timeout 80 $B/crossgemm bench --shape 16x4096x4096 --shape 16x12288x4096 --shape 1x12288x4096 --shape 32x4096x4096 --max 48 --dtypes bf16 --epilogues none --out $OUT/dec --name decode-bf16 --against bench/results/nvidia-h200-2026-12-01.json > $OUT/dec/decode-bf16.log 2>&1; echo "bench bf16 rc=$?"
  grep -E "^\| [0-9]" $OUT/dec/decode-bf16.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -6
  # The winners as records (merged into records/h200.json here if they hold).
  CROSSGEMM_CACHE_DIR=/tmp/cg-b $B/crossgemm cache export $OUT/dec/records-decode.json 2>&1 | tail -1
  CROSSGEMM_CACHE_DIR=/tmp/cg-t timeout 40 $B/crossgemm tune --shape 16x4096x4096 --dtype f16 --epilogue none --json > $OUT/dec/tune-16x4096x4096.json 2> $OUT/dec/tune-16x4096x4096.log; echo "tune rc=$?"
  CROSSGEMM_CACHE_DIR=/tmp/cg-sk timeout 100 $B/crossgemm-sk bench --shape 2048x11008x4096 --shape 4096x4096x4096 --max 48 --dtypes f16 --epilogues none,bias_relu --out $OUT/dec --name streamk --against bench/results/nvidia-h200-2026-12-01.json > $OUT/dec/streamk.log 2>&1; echo "streamk rc=$?"
  grep -E "^\| [0-9]" $OUT/dec/streamk.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -6
  CROSSGEMM_CACHE_DIR=/tmp/cg-k700 timeout 45 $B/crossgemm bench --shape 3000x5000x700 --dtypes f16 --epilogues none,bias_relu --out $OUT/dec --name k700-staged --against bench/results/h200-2026-12-01h/part2/k700-staged.json > $OUT/dec/k700.log 2>&1; echo "k700 rc=$?"
  grep -A8 "^## Change" $OUT/dec/k700-staged.md | grep -E "^\| [0-9]" | cut -d'|' -f2,4,5,6,7
  CROSSGEMM_CACHE_DIR=/tmp/cg-p3 timeout 30 $B/crossgemm bench --shape 16x4096x4096 --dtypes f16 --epilogues none --no-vendor --pad 3 --out $OUT/dec --name pad3 --against bench/results/h200-2026-12-01h/part2/pad3-staged.json > $OUT/dec/pad3.log 2>&1; echo "pad3 rc=$?"
  grep -A8 "^## Change" $OUT/dec/pad3.md | grep -E "^\| [0-9]" | cut -d'|' -f2,4,5,6,7
  ;;
esac
cd $OUT && tar czf dec-${1:-part1}.tgz dec && rm -rf dec
