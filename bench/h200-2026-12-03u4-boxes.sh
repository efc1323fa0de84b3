#!/usr/bin/env bash
# Session u, batches u4 and u5 (no crossgemm binary: bench/tma_boxes.py only; u5 with 16x
# longer launches, 1 GiB of boxes, after u4's 64 MiB gave ~30 boxes a multiprocessor).
# u2/u3: a one-thread ring of TMA boxes takes ~275 ns a box a multiprocessor whatever the
# box size (8-32 KiB) and ring depth (4-16), the map in global memory or a parameter.
# Written before: if it is the L2 serving lines that ~8 SMs want at once, private slabs
# run several times faster per box; if it is one thread's issue (each copy waiting on
# something serial), 2 and 4 issuing threads divide it; if TMA serialises the boxes of an
# SM, neither helps and only bigger boxes (the 3-D two-chunk box, 32 KiB) do, as the
# 256-row box did in u2.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
R=$OUT/${U:-u4}; mkdir -p $R
python3 bench/tma_boxes.py > $R/boxes.txt 2>&1; echo "boxes rc=$?"
cat $R/boxes.txt
cd $OUT && tar czf ${U:-u4}.tgz ${U:-u4} && rm -rf ${U:-u4}
