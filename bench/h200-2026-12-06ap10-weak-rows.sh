#!/usr/bin/env bash
# Session ap, batch ap10 (written, not run): the weak rows session ap's H200 batches found,
# tuned, and the staged 3000x5000x700 swing pinned.
# (1) Tunes with their records exported: full f32 with a row-major W at 32x4096x4096 (ap1:
#     0.63x cuBLAS on its 32x32x16 default split in 8, where 16 rows take 45 µs) and tf32
#     with a row-major W at 1x4096x4096 (ao6: 0.86x on gemv_n 8 chunks split in 4).
# (2) 3000x5000x700 f16 as first calls in eight processes, four arms alternating: the
#     default (staged through the row-copy kernel), `CROSSGEMM_ROW_COPY=driver`,
#     `CROSSGEMM_STAGE=never` (the kernel on the 1400-byte rows as they lie), and
#     `CROSSGEMM_POOL_KEEP_MB=all` (the memory pool keeps all freed scratch). Why that
#     arm: the pool's release threshold (256 MiB) counts the memory in use, and a bench
#     row of this shape holds about that much (the 120 MiB flush, three 30 MB outputs,
#     cuBLASLt's 32 MiB workspace, the operands), so whether a synchronisation gives
#     staging's freed 11 MB of scratch back, for the next call to map again, may turn on
#     a few MB of what else is live.
# Binaries: `scripts/dev-build.sh .dev/NAME` at the head, B=.dev/NAME. Carry: [B]. ~6 min.
# Written before: (1) a tune finds >= 0.9x at 32 rows (16-row tiles over two strips, or
# 32x64 with K in 4: B's 64 MB read once or twice) and >= 0.95x at one row (a wider split);
# (2) the kernel and driver arms swing together between ~55 and ~145 µs from process to
# process while the unstaged arm is steady (~100 µs), and the keep arm is steady near the
# low end (~55): the swing is the pool mapping staging's scratch again, not the kernel.
BATCH=${BATCH:-ap10}
B=${B:?name the binaries folder}
source bench/lib.sh $BATCH
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
nvidia-smi --query-gpu=name --format=csv,noheader | tee $R/gpu.txt
timeout 150 $B/crossgemm bench --w-layout row --shape 32x4096x4096 --dtypes f32 --epilogues none --max 24 \
  --cache-dir /tmp/cg-$BATCH --out $R --name f32-row32 > $R/f32-row32.log 2>&1; echo "f32 row32 rc=$?"
python3 bench/rows.py $R/f32-row32.json | tail -3
timeout 100 $B/crossgemm bench --w-layout row --shape 1x4096x4096 --dtypes tf32 --epilogues none --max 16 \
  --cache-dir /tmp/cg-$BATCH --out $R --name tf32-row1 > $R/tf32-row1.log 2>&1; echo "tf32 row1 rc=$?"
python3 bench/rows.py $R/tf32-row1.json | tail -3
$B/crossgemm --cache-dir /tmp/cg-$BATCH cache export $R/records-weak.json > $R/export.log 2>&1; echo "export rc=$?"
unset CROSSGEMM_IGNORE_TABLES
for round in 1 2; do for arm in kernel driver never keep; do
  tag=odd-$arm-$round
  case $arm in
    kernel) env=() ;;
    driver) env=(CROSSGEMM_ROW_COPY=driver) ;;
    never) env=(CROSSGEMM_STAGE=never) ;;
    keep) env=(CROSSGEMM_POOL_KEEP_MB=all) ;;
  esac
  env ${env[@]+"${env[@]}"} timeout 60 $B/crossgemm bench --first-call --shape 3000x5000x700 --dtypes f16 \
    --cache-dir /tmp/cg-$BATCH-$tag --out $R --name $tag > $R/$tag.log 2>&1; echo "$tag rc=$?"
  grep -E "^\| 3000x5000x700" $R/$tag.md | head -3 | cut -d'|' -f4-8
done; done
finish
