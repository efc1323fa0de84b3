#!/usr/bin/env bash
# Session o, batch d (.dev/o5: the CLI at 3a4c84d plus midsector.patch: two experiment
# switches, CROSSGEMM_TMA_L2PROMO = 0/64/128/256 for the TMA maps' L2 promotion, and
# CROSSGEMM_CPASYNC_MIDSECTOR, which sends operands whose rows are not 32-byte aligned to
# the cp.async producer instead of TMA).
# Batch c: rows that are an odd multiple of 16 bytes (K + 8 views; 1000^3's own rows) cost
# our TMA-fed kernels 7-20%, cuBLAS 4-7%. Hypotheses: (a) a 128-byte box row that starts
# mid-sector spans two 128-byte lines, and the 256-byte L2 promotion makes each miss fetch
# more than the box needs: 128-byte or no promotion narrows the cost; (b) 16-byte cp.async
# copies never straddle a sector (a warp's 512 contiguous bytes touch 17 sectors, not
# 16), so the cp.async producer pays ~6% where TMA pays ~25% more L2-to-SM traffic.
# Expected: (b) takes K + 8 views to within 5% of packed and 1000^3 (packed, 2000-byte
# rows) to within 5% of its aligned K + 8 view; (a) a few % either way.
# Then: which kernel cuBLASLt runs at 8192^3 with bias+ReLU (3% faster than cuBLAS's plain
# GEMM in batch c), by Nsight Compute's launch statistics.
set -u
B=.dev/o5
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
R=$OUT/d; mkdir -p $R
cp $B/COMMIT $R/commit.txt; cp $B/midsector.patch $R/
S="--shape 4096x4096x4096 --shape 2048x11008x4096 --shape 1000x1000x1000 --shape 4096x4096x128"
run() {
  name=$1; shift
  env "$@" timeout 110 $B/crossgemm bench --cache-dir /tmp/cg-$name $S --dtypes f16 --epilogues none --max 48 --no-vendor --pad 8 --out $R --name $name > $R/$name.log 2>&1; echo "$name rc=$?"
  sed -n '/Views against/,$p' $R/$name.md | grep -E "^\| [0-9]|rows:" | cut -d'|' -f2,5,6,7,8
}
run tma256 X=1
run cpasync CROSSGEMM_CPASYNC_MIDSECTOR=1
run tma128 CROSSGEMM_TMA_L2PROMO=128
run tma0 CROSSGEMM_TMA_L2PROMO=0
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
timeout 150 $NCU --clock-control none --section SpeedOfLight --section LaunchStats -k 'regex:^(nvjet|sm90|cutlass)' -c 3 $B/crossgemm bench --cache-dir /tmp/cg-tma256 --shape 8192x8192x8192 --dtypes f16 --epilogues bias_relu --runs 10 --max 8 --out /tmp/nb --name nb > $R/ncu-8192-vendor.txt 2>&1; echo "ncu 8192 rc=$?"
grep -E "^  [a-zA-Z_].*\(|Duration|SM Frequency|Registers Per|Cluster Size|Dynamic Shared|Grid Size|Block Size" $R/ncu-8192-vendor.txt | head -30
cd $OUT && tar czf d.tgz d && rm -rf d
