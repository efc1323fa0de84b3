#!/usr/bin/env bash
# Session z, batch z8 (.dev/z5, the CLI at f1c4976): 64 rows of a row-major W, where the
# tuned wgmma 64x64 tile with K in 2 runs at 0.90x cuBLAS NN (z7): wgmma splits and tiles
# the plan's 48 candidates may not hold (`--config`), and Nsight Compute's names and
# launch shapes of cuBLAS's kernel there, for the next step. f16, none.
# Written before: a split of K in 3-4 or a 128-column tile within 3% of the 64x64 K-in-2
# winner (17.8 us); cuBLAS's kernel a 64-row tile with a split of K or a stream-K grid.
B=.dev/z5
source bench/lib.sh z8
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
w() { echo "{\"family\":\"wgmma\",\"bm\":64,\"bn\":$1,\"bk\":64,\"stages\":$2,\"consumers\":1,\"group_m\":8,\"cluster_m\":1,\"inflight\":true,\"epi_smem\":true,\"ksplit\":$3}"; }
C=(); for c in "$(w 64 8 2)" "$(w 64 8 3)" "$(w 64 8 4)" "$(w 128 8 2)" "$(w 128 8 3)" "$(w 128 8 4)" "$(w 64 8 1)" "$(w 128 6 2)"; do C+=(--config "$c"); done
timeout 120 $B/crossgemm tune --shape 64x4096x4096 --w-layout row --dtype f16 --epilogue none --json --cache-dir /tmp/cg-z8 "${C[@]}" > $R/tune-64.json 2> $R/tune-64.err
python3 bench/tune_summary.py "64x4096x4096" $R/tune-64.json
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
timeout 150 $NCU --clock-control none --section LaunchStats --section SpeedOfLight -k 'regex:^([^c]|c[^g])' -c 3 $B/crossgemm bench --shape 64x4096x4096 --w-layout row --config "$(w 64 8 2)" --cache-dir /tmp/cg-z8b --dtypes f16 --epilogues none --out /tmp/nb --name nb > $R/ncu-cublas.txt 2>&1; echo "ncu rc=$?"
grep -E "^  [a-zA-Z_].*\(|Duration|Grid Size|Block Size|DRAM Throughput|Registers Per|Shared Memory Config|Dynamic Shared" $R/ncu-cublas.txt | head -30
finish
