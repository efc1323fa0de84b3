#!/usr/bin/env bash
# Session t, batch t4 (.dev/s1old: the CLI at e461622).
# 1. Batches t1 and t3 refuted the L2-side and the DRAM-order explanations of the M = 128
#    LLM rows (37.3 us at 128x12288x4096 for every tile, where M = 1's decode kernel
#    streams the same B in 31.4-31.9). `diagnose` with the winner and the 128x128 tile
#    says which side the time is on: load-only (the TMA ring alone) against compute-only
#    and the full kernel. Written before: load-only within 5% of the full time (the TMA
#    ring is what takes 37 us), compute-only about half.
# 2. Which environment variables a CUDA tool sets in the processes it runs (for a warning
#    that times taken under Nsight Compute or compute-sanitizer are the tool's).
B=.dev/s1old
source bench/lib.sh t4
export CROSSGEMM_CACHE_DIR=/tmp/cg-t4
for c in "64 64 192 6 1 true" "64 128 128 6 2 false"; do
  n=$(echo $c | tr ' ' _)
  timeout 120 $B/crossgemm diagnose --shape 128x12288x4096 --dtype f16 --epilogue none --config "$(cfg $c)" > $R/diagnose-128x12288x4096-$n.txt 2>&1; echo "diagnose $n rc=$?"
  sed -n '/variants/,/compute roof/p' $R/diagnose-128x12288x4096-$n.txt
done
timeout 60 $B/crossgemm diagnose --shape 1x12288x4096 --dtype f16 --epilogue none --config '{"family":"decode","mt":1,"nt":1,"warps":8,"kw":8,"unroll":4}' > $R/diagnose-1x12288x4096.txt 2>&1; echo "diagnose decode rc=$?"
sed -n '/variants/,/compute roof/p' $R/diagnose-1x12288x4096.txt
NCU=$(ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
{ echo "== plain"; env | sort | grep -iE 'inject|nsight|nv_|cuda|sanitiz|tool' ;
  echo "== ncu ($NCU)"; timeout 60 $NCU --target-processes all env 2>&1 | sort | grep -iE 'inject|nsight|nv_|cuda|sanitiz|tool|==PROF==' ;
  echo "== compute-sanitizer"; timeout 60 /usr/local/cuda/bin/compute-sanitizer env 2>&1 | sort | grep -iE 'inject|nsight|nv_|cuda|sanitiz|tool' ; } > $R/tool-env.txt 2>&1
cat $R/tool-env.txt | cut -c1-200
finish
