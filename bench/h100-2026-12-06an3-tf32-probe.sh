#!/usr/bin/env bash
# Session an, batch an3: after an1 (tf32 decode). (1) The 16-bit decode source changed
# in text only (the element type's definitions moved into a block per width, `q * 8`
# became `q * CG_EPC`): f16 first calls at 7257b9c and at the tf32 build should tie.
# (2) What tf32 rows of few rows decode does not take run at (a row-major W not turned
# around, 64 rows, K = 4099 through windows). (3) What rounding each word to tf32
# (`cvt.rna`) costs the decode kernel: the same configs timed with and without it
# (.dev/an3t: 4fa9412 with the words passed to the MMA as loaded, truncated by the
# hardware), alternating over two rounds. On an H200, then batch an2 (tf32 records).
# Binaries: .dev/an0c (7257b9c), .dev/an1c (ba7926c), .dev/an3t (4fa9412, no rounding;
# not for use). Carry: [".dev/an0c", ".dev/an1c", ".dev/an3t"]. ~4 minutes (+4 on an H200).
# Written before: (1) within 2%; (2) the row-major W at 16 rows on mma.sync 64x64 near
# the old col-W default's 0.9x, 64 rows on wgmma 0.9-1.0x, K = 4099 within 10% of
# K = 4096; (3) rounding costs under 2% (the kernel streams at 75% of the copy bandwidth
# with ALU to spare).
BATCH=${BATCH:-an3}
B=.dev/an1c
source bench/lib.sh $BATCH
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt)
echo "$GPU"
NO_TABLES=1 DTYPES=f16 ROWS=1 first_calls ".dev/an0c $B" \
  "h16|--shape 16x4096x4096 --epilogues none" \
  "hr16|--shape 4096x16x4096 --w-layout row --epilogues none"
NO_TABLES=1 DTYPES=tf32 ROWS=1 first_calls "$B" \
  "w16|--shape 16x4096x4096 --w-layout row --epilogues none" \
  "c64|--shape 64x4096x4096 --epilogues none" \
  "k4099|--shape 16x4096x4099 --epilogues none"
export CROSSGEMM_IGNORE_TABLES=1
d() { echo "{\"family\":\"decode\",\"mt\":$1,\"nt\":1,\"warps\":8,\"kw\":8,\"unroll\":$2$3}"; }
for round in 1 2; do for bin in $B .dev/an3t; do
  tag=$(basename $bin)-$round
  timeout 60 $bin/crossgemm tune --shape 16x4096x4096 --dtype tf32 --epilogue none --json --cache-dir /tmp/cg-$BATCH-$tag \
    --config "$(d 2 4 '')" --config "$(d 2 4 ',"rot":true')" --config "$(d 1 4 '')" > $R/tune-round-$tag.json 2> $R/tune-round-$tag.err
  python3 bench/tune_summary.py "tf32 16x4096x4096 $tag" $R/tune-round-$tag.json
done; done
finish
case "$GPU" in *H200*) cd - > /dev/null; BATCH=an2 bash bench/h200-2026-12-06an2-tf32-records.sh ;; esac
