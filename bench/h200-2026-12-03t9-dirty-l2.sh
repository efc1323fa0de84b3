#!/usr/bin/env bash
# Session t, batch t9 (.dev/s1old: the CLI at e461622).
# Batch t8 refuted the carveout explanation of t7's gap (an empty kernel with 216 KB of
# dynamic shared memory takes 2.78 us between events after the memset, as one with none).
# Nsight Compute's replays flush and invalidate L2 before each pass, so t7's durations
# were taken on a clean L2; the bench's runs follow a 120 MiB memset that leaves L2 full
# of dirty lines. Hypothesis (written before): with --cache-control none the wgmma
# winner's duration in a tune's timed runs (each after the memset) is ~4 us longer than
# t7's 30.1 and it writes tens of MB to DRAM (the memset's lines written back), more
# than the decode kernel at 1x12288x4096 does in the same setting.
B=.dev/s1old
source bench/lib.sh t9
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct
timeout 150 $NCU --cache-control none --clock-control none --metrics $M -k regex:cg_gemm_f16_none -c 8 $B/crossgemm tune --cache-dir /tmp/cg-t9a --shape 128x12288x4096 --dtype f16 --epilogue none --config "$(cfg 64 64 192 6 1 true)" > $R/ncu-wgmma.txt 2>&1; echo "wgmma rc=$?"
grep -E "gpu__time_duration|dram__bytes|sector_hit" $R/ncu-wgmma.txt | head -32
timeout 150 $NCU --cache-control none --clock-control none --metrics $M -k regex:cg_gemm_f16_none -c 8 $B/crossgemm tune --cache-dir /tmp/cg-t9b --shape 1x12288x4096 --dtype f16 --epilogue none --config '{"family":"decode","mt":1,"nt":1,"warps":8,"kw":8,"unroll":4}' > $R/ncu-decode.txt 2>&1; echo "decode rc=$?"
grep -E "gpu__time_duration|dram__bytes|sector_hit" $R/ncu-decode.txt | head -32
finish
