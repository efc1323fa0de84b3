#!/usr/bin/env bash
# Session an, batch an5: an4 found the tf32 decode form that streams W across slow
# (16x4096x4096 73 µs, 0.54x; 1x12288x4096 91.8 against gemv_n's 78.5) and the every-config
# test without an odd shape for its turned form. Here: its loads without the L2::256B
# prefetch (the 128 bytes after a lane group's are another block's: twice the DRAM
# traffic if they are fetched early and evicted), the test with 68x7x72, and the
# across-W tiles side by side (one or two column groups, 4 or 8 warps).
# Binaries: .dev/an4c (8304e84), .dev/an5c (the CLI without the prefetch), .dev/an5k
# (tests/kernels.rs with it). Carry: [".dev/an4c", ".dev/an5c", ".dev/an5k"]. ~2 minutes.
# Written before: if the prefetch doubled the traffic, 16x4096x4096 near 37 µs (2x); if
# not, within 5% (the block count or DRAM page locality binds instead).
BATCH=${BATCH:-an5}
B=.dev/an5c
source bench/lib.sh $BATCH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
K=.dev/an5k/kernels
timeout 100 $K every_planned_decode_config_across --test-threads 1 > $R/kernels-across.log 2>&1; echo "kernels across rc=$?"
grep -hE "^test |test result|panicked|no aligned" $R/kernels-across.log | head -5
for bin in .dev/an4c $B; do for c in "w16|16x4096x4096" "w16l|16x12288x4096" "w1|1x12288x4096"; do
  tag=$(basename $bin)-${c%%|*}
  CROSSGEMM_IGNORE_TABLES=1 timeout 60 $bin/crossgemm bench --first-call --shape ${c#*|} --w-layout row --epilogues none --dtypes tf32 --cache-dir /tmp/cg-$BATCH-$tag --out $R --name $tag > $R/$tag.log 2>&1
  echo "$tag: $(grep -E '^\| [0-9]+x' $R/$tag.md | head -1 | cut -d'|' -f2,5,6,9,17)"
done; done
export CROSSGEMM_IGNORE_TABLES=1
d() { echo "{\"family\":\"decode\",\"mt\":2,\"nt\":2,\"warps\":$1,\"kw\":$2,\"unroll\":2}"; }
timeout 60 $B/crossgemm tune --shape 16x4096x4096 --dtype tf32 --epilogue none --w-layout row --json --cache-dir /tmp/cg-$BATCH-t \
  --config "$(d 8 8)" --config "$(d 8 4)" --config "$(d 4 4)" --config "$(d 4 2)" > $R/tune-w16.json 2> $R/tune-w16.err
python3 bench/tune_summary.py "tf32 row-W 16x4096x4096 across tiles" $R/tune-w16.json
timeout 100 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 $K every_planned_decode_config_across --test-threads 1 > $R/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|test result" $R/memcheck.log | tail -2
finish
