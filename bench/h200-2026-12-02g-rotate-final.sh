#!/usr/bin/env bash
# Session j, batch g (binaries of `scripts/dev-build.sh .dev/rot`): the decode family with
# the walk over K rotated per block for 16- and 32-row tiles of one 16-column block a warp
# (DecodeTile::rotates), and the load-only diagnosis variant that keeps its loads.
# Expected (batch f): 32x4096x4096 from 18.2 to ~16.7 us (1.08x cuBLAS), 16x4096x4096
# from 15.5 to ~15.4, the rest as in -02b; diagnose's load-only time now >= the memory
# roof (it was 3.6 us at 16x4096x4096: a kernel without loads).
set -u
B=${B:-.dev/rot}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
SAN=/usr/local/cuda/bin/compute-sanitizer
R=$OUT/g; mkdir -p $R
cp $B/COMMIT $R/commit.txt
CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-san timeout 90 $SAN --tool memcheck $B/kernels --test-threads 1 decode_configs_give_the_same_bits_twice > $R/san-decode-memcheck.log 2>&1; echo "decode memcheck rc=$?"
grep -E "ERROR SUMMARY|test result" $R/san-decode-memcheck.log
S="--shape 16x4096x4096 --shape 16x12288x4096 --shape 16x4096x11008 --shape 16x11008x4096 --shape 1x12288x4096 --shape 1x4096x11008 --shape 1x11008x4096 --shape 8x4096x4096 --shape 32x4096x4096"
CROSSGEMM_CACHE_DIR=/tmp/cg-b timeout 200 $B/crossgemm bench $S --max 48 --dtypes f16,bf16 --epilogues none,bias_relu --out $R --name decode --against bench/results/h200-2026-12-02b/decode.json > $R/decode.log 2>&1; echo "bench rc=$?"
grep -E "^\| [0-9]" $R/decode.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -36
for s in 16x4096x4096 1x12288x4096; do
  CROSSGEMM_CACHE_DIR=/tmp/cg-b timeout 40 $B/crossgemm diagnose --shape $s --epilogue none > $R/diagnose-$s.txt 2>&1; echo "diagnose $s rc=$?"
  sed -n '/2. variants/,/compute roof/p' $R/diagnose-$s.txt
done
CROSSGEMM_CACHE_DIR=/tmp/cg-b $B/crossgemm cache export $R/records-decode.json 2>&1 | tail -1
CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 230 $B/kernels --test-threads 16 > $R/kernels.log 2>&1; echo "kernels rc=$?"
grep -hE "test result|panicked" -A3 $R/kernels.log | head -12
cd $OUT && tar czf g.tgz g && rm -rf g
