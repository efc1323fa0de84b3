#!/usr/bin/env bash
# Session p, batch p1 (the CLI of .dev/p1, built at the commit in .dev/p1/COMMIT with
# `baseline`). 4096x4096x128 (issue 10, 1.03-1.06x cuBLAS, 1.2x needs ~14 us against our
# 16.6): Nsight put the kernel at 53% of memory throughput and 12% of DRAM (the output
# stays in L2), and diagnose's load_only (87%) and compute_only (90%) variants both keep
# the epilogue's stores, so the question is whether writing a GEMM output tile by tile
# (a persistent grid, one block an SM, grouped order) runs slower than a linear write of
# the same 33.5 MB (10.3 us in batch zf). bench/ceilings.py `tiles` times both, with plain
# and streaming (st.global.cs) stores; then our kernel's bench row in the same session.
set -u
B=${B:-.dev/p1}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
R=$OUT/p1; mkdir -p $R
cp $B/COMMIT $R/commit.txt
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $R/smi-start.csv 2>&1
timeout 200 python3 bench/ceilings.py tiles > $R/tiles.txt 2>&1; echo "tiles rc=$?"
head -30 $R/tiles.txt
CROSSGEMM_CACHE_DIR=/tmp/cg-p1 timeout 120 $B/crossgemm bench --shape 4096x4096x128 --dtypes f16 --epilogues none --out $R --name k128 > $R/k128.log 2>&1; echo "bench rc=$?"
grep -E "^\| [0-9]" $R/k128.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -3
cd $OUT && tar czf p1.tgz p1 && rm -rf p1
