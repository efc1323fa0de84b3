#!/usr/bin/env bash
# Session t, batch t3 (.dev/t3: the CLI at 8e5b3f4 plus the wgmma `krot` flag, CG_KROT:
# each work item walks its k-tiles from tile % ktiles on, wrapping).
# Batch t1: the M = 128 rows stay at 37.6 us (128x12288x4096) whatever the tile, and
# halving the L2-to-SM bytes did not help; M = 1's decode kernel streams the same B in
# 31.4-31.9. Every block of a wgmma grid starts at k = 0 and they advance together, so at
# any moment the whole grid reads one 128-byte k-slice of every column of B (12288
# pieces 8 KB apart). The decode family's rotated walk (02f) took 32x4096x4096 from 18.3
# to 16.7 us.
# Written before: krot twins 5-10% under their plain twins at 128x12288x4096 and
# 128x8192x8192 (same process) if the DRAM pattern limits, a tie if not; at 1000^3 (16
# k-tiles, 64 tiles) within the spread. Every candidate is verified by the tune (1000^3:
# a partial last k-tile, rotated into the middle of the walk).
B=.dev/t3
source bench/lib.sh t3
K=',"krot":true'
twins() { for c in "$@"; do printf '%s\0%s\0' "$c" "${c%\}}$K}"; done; }
args() { local a=(); while IFS= read -r -d '' c; do a+=(--config "$c"); done; printf '%s\0' "${a[@]}"; }
mapfile -d '' L12 < <(twins "$(cfg 64 64 192 6 1 true)" "$(cfg 64 128 128 6 2 false)" | args)
mapfile -d '' L8 < <(twins "$(cfg 64 64 128 8 1 true)" "$(cfg 64 128 64 8 2 false)" | args)
mapfile -d '' L1 < <(twins "$(cfg 64 128 128 6 2 false)" "$(cfg 64 128 128 6 2 false 1 ,\"pingpong\":true)" | args)
for round in 1 2; do
  timeout 90 $B/crossgemm tune --shape 128x12288x4096 --dtype f16 --epilogue none --json --cache-dir /tmp/cg-t3-$round "${L12[@]}" > $R/tune-12288-$round.json 2> $R/tune-12288-$round.err
  python3 bench/tune_summary.py "128x12288x4096 none $round" $R/tune-12288-$round.json
  timeout 90 $B/crossgemm tune --shape 128x8192x8192 --dtype f16 --epilogue none --json --cache-dir /tmp/cg-t3-$round "${L8[@]}" > $R/tune-8192-$round.json 2> $R/tune-8192-$round.err
  python3 bench/tune_summary.py "128x8192x8192 none $round" $R/tune-8192-$round.json
  timeout 90 $B/crossgemm tune --shape 1000x1000x1000 --dtype f16 --epilogue bias_relu --json --cache-dir /tmp/cg-t3-$round "${L1[@]}" > $R/tune-1000-$round.json 2> $R/tune-1000-$round.err
  python3 bench/tune_summary.py "1000^3 bias_relu $round" $R/tune-1000-$round.json
done
# memcheck and racecheck on krot configs where blocks take several tiles with a partial
# last k-tile (K = 1000: 16 k-tiles, the short one rotated into the walk).
for tool in memcheck racecheck; do
  timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool $tool $B/crossgemm tune --shape 3000x1000x1000 --dtype f16 --epilogue bias_relu --cache-dir /tmp/cg-t3san-$tool --config "$(cfg 64 128 128 6 2 false 1 $K)" --config "$(cfg 64 64 192 6 1 true 1 $K)" > $R/$tool.log 2>&1; echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $R/$tool.log
done
finish
