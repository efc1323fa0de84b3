#!/usr/bin/env bash
# Session u, batch u3 (no crossgemm binary: bench/tma_pitch.py only).
# u2 found TMA's rate from L2 proportional to the box size at every ring depth (64-row
# boxes 3.95 TB/s, 128-row 7.8, 256-row 15.0: ~270 ns a box a multiprocessor) with the
# tensor map in global memory, and the odd-16 pitch capped near 5.5-6.4 TB/s whatever the
# box. The GEMM kernels pass the map as a __grid_constant__ parameter and prefetch it.
# Written before: if the per-box cost is the global-memory map's (a descriptor fetch per
# copy), the parameter map runs 64- and 128-row boxes near the 256-row rate (~15 TB/s)
# and the odd pitch's cap shows alone; if not, every box costs ~270 ns a multiprocessor
# and fewer, larger boxes are a lever for the small-tile kernels (1000^3, K = 128).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
R=$OUT/u3; mkdir -p $R
git rev-parse --short HEAD > $R/commit.txt 2>/dev/null || true
python3 bench/tma_pitch.py ceiling > $R/ceiling.txt 2>&1; echo "ceiling rc=$?"
cat $R/ceiling.txt
cd $OUT && tar czf u3.tgz u3 && rm -rf u3
