#!/usr/bin/env bash
# Session o, batch b (.dev/o3: the CLI at d594530 plus stage-align.patch, which makes the
# staging of operands take rows not aligned to CROSSGEMM_STAGE_ALIGN bytes, default 16,
# into scratch rows of that multiple).
# 1. Batch a found 1000^3 f16 (128x64 s8) at 10.4 us on views of pitch 1008 (2016-byte
#    rows, 32-byte aligned) against 13.9 us on the packed operands (2000-byte rows, every
#    other one 16 bytes off a 32-byte sector) in the same rounds. Hypothesis: TMA reads a
#    sector more per 128-byte box row when the row starts mid-sector. If so, copying A and
#    B (2 MB each) into 32-byte-aligned rows first pays when the copies cost less than the
#    ~2-3 us they save. Expected: 1000^3 with STAGE_ALIGN=32 between 0.95x and 1.1x of the
#    unstaged time (the copies' launches eat most of the gain); a clear win only if the
#    copies overlap. Each mode tuned in its own cache (the tuning key holds no pitch).
# 2. Batch a's views run again with the packed side tuned for itself (d594530): the
#    contiguous case as a program calling on packed operands gets it.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
B=.dev/o3
export CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
R=$OUT/b; mkdir -p $R
cp $B/COMMIT $R/commit.txt; cp $B/stage-align.patch $R/
for al in 16 32 128; do
  CROSSGEMM_STAGE_ALIGN=$al timeout 100 $B/crossgemm bench --cache-dir /tmp/cg-b$al --shape 1000x1000x1000 --shape 2000x2000x1000 --dtypes f16 --epilogues none,bias_relu --max 48 --out $R --name align$al > $R/align$al.log 2>&1; echo "align $al rc=$?"
  grep -E "^\| [0-9]" $R/align$al.md | head -4 | cut -d'|' -f2-12,17
  grep -E "misaligned" $R/align$al.md | head -2 | cut -c1-160
done
S="--shape 4096x4096x4096 --shape 2048x11008x4096 --shape 16x4096x4096 --shape 1000x1000x1000 --shape 4096x4096x128"
for pad in 8 64; do
  timeout 200 $B/crossgemm bench --cache-dir /tmp/cg-p$pad $S --dtypes f16 --epilogues none --max 48 --no-vendor --pad $pad --out $R --name pad$pad > $R/pad$pad.log 2>&1; echo "pad $pad rc=$?"
  sed -n '/Views against/,$p' $R/pad$pad.md | grep -E "^\| [0-9]|rows:"
done
cd $OUT && tar czf b.tgz b && rm -rf b
