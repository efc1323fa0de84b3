#!/usr/bin/env bash
# Session k, batch l (binaries of `scripts/dev-build.sh .dev/l` at the commit in COMMIT):
# the tuner's final round (the fastest few of the first pass re-timed together, one run
# of each in turn) with the wave-fitting widths 176 and 240.
# (1) Two standalone 48-candidate tunes of 2048x11008x4096 f16 none: batch k's tune
#     picked 128x240 (261.9 us) and its bench, in another process, 128x256 s3 c2
#     (270.9), with 128x256 s4 at 307 in the tune against 266 at 12-01: the clock moved.
#     Expected: both tunes pick the same config, its final-round median within 2% of
#     the other's.
# (2) The M >= 128 rows where the widths can matter, full tunes (tables ignored) beside
#     cuBLAS, against the 12-01 report; records exported for records/h200.json.
#     Expected: 2048x11008x4096 f16 none 266.6 -> ~255 us (0.93x -> ~0.97x), no row
#     slower than 12-01 beyond noise.
set -u
B=${B:-.dev/l}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
R=$OUT/l; mkdir -p $R
cp $B/COMMIT $R/commit.txt
for i in 1 2; do
  CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-t$i timeout 60 $B/crossgemm tune --shape 2048x11008x4096 --dtype f16 --epilogue none --max 48 --json > $R/tune$i-2048x11008x4096.json 2> $R/tune$i.log; echo "tune $i rc=$?"
  python3 -c "
import json
d=json.load(open('$R/tune$i-2048x11008x4096.json'))
print('  best', d['best'], '%.1f' % d['best_us'])
for x in d['final_round']: print('   final %.1f %s' % (x['us'], x['config']))
"
done
S="--shape 2048x11008x4096 --shape 2048x12288x4096 --shape 2048x4096x11008 --shape 4096x4096x4096 --shape 2048x2048x2048 --shape 8192x8192x8192 --shape 128x11008x4096 --shape 128x12288x4096 --shape 1000x1000x1000"
CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-b timeout 330 $B/crossgemm bench $S --max 48 --dtypes f16 --epilogues none,bias_relu,bias_gelu --out $R --name f16 --against bench/results/nvidia-h200-2026-12-01.json > $R/f16.log 2>&1; echo "bench f16 rc=$?"
grep -E "^\| [0-9]" $R/f16.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -30
CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-b timeout 100 $B/crossgemm bench --shape 2048x11008x4096 --shape 4096x4096x4096 --max 48 --dtypes bf16 --epilogues none,bias_relu,bias_gelu --out $R --name bf16 --against bench/results/nvidia-h200-2026-12-01.json > $R/bf16.log 2>&1; echo "bench bf16 rc=$?"
grep -E "^\| [0-9]" $R/bf16.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -8
CROSSGEMM_CACHE_DIR=/tmp/cg-b $B/crossgemm cache export $R/records.json 2>&1 | tail -1
cd $OUT && tar czf l.tgz l && rm -rf l
