#!/usr/bin/env bash
# Session af, batch af1: gemv_n's OpenCL form with K split over work-groups (KSPLIT 4, 8,
# 16; the last of a strip's work-groups adds their sums in split order through a
# workspace, as the CUDA form does), through NVIDIA's OpenCL on the H200. Before it
# OpenCL's gemv_n walked all of K in one work-group per strip: 1x4096x11008 77.9 µs,
# 1x12288x4096 63.0, 4x4096x4096 49.6 (z1; the CUDA form 32.9-35.1 with a split).
# Binaries: `scripts/dev-build.sh .dev/af1` at the commit in COMMIT, carried as .dev/af1s
# (the CLI, kernels and views gzipped); the CLI before the change is .dev/ae1s's
# (1d74f42). Carry: [".dev/af1s", ".dev/ae1s"]. ~6 minutes.
# 1. Correct through NVIDIA's OpenCL: every planned gemv_n config (splits included) of
#    the kernel suites and on views with NaN around them, twice for the same bits.
# 2. The kernels' PTX (the driver's program binaries, from the binary cache): the split's
#    fences (`mem_fence(CLK_GLOBAL_MEM_FENCE)`) should be `membar.gl` (or `fence.sc.gpu`/
#    `fence.acq_rel.gpu`) and the slots' volatile loads `ld.volatile.global`: OpenCL C 1.2
#    promises nothing across work-groups, so this is what the split relies on there.
# 3. Tuned rows, old and new CLI alternating over two rounds, row-major w, f16.
# Written before: correct; 1x4096x11008 (64-128 strips of K whole: under one wave of 132
# SMs) 1.5-2x faster with a split (~40-50 µs); 4x4096x4096 1.2-1.5x; 1x12288x4096 (384
# strips of 32 columns already) within 10%, the tuner keeping K whole if the split loses.
BATCH=${BATCH:-af1}
B=.dev/${BATCH}s
OLD=.dev/ae1s
source bench/lib.sh $BATCH
for f in "$OLD"/*.gz; do [ -e "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
$B/crossgemm devices > $R/devices.txt 2>&1
OCL=$(grep -iE "opencl:[0-9]+:[0-9]+.*(NVIDIA|H200)" $R/devices.txt | grep -oE "opencl:[0-9]+:[0-9]+" | head -1)
echo "nvidia opencl: $OCL"
[ -n "$OCL" ] || { echo "no NVIDIA OpenCL device"; finish; exit 1; }

# 1. The suites on NVIDIA's OpenCL alone (the machine's PoCL fails f32 simt tiles, a known
#    fault), narrowed to gemv_n's configs.
# (No CUDA device under test: lib.sh's CROSSGEMM_REQUIRE_CUDA would fail them; a dry run
# on PoCL found it.)
unset CROSSGEMM_REQUIRE_CUDA
export CROSSGEMM_TEST_DEVICES=$OCL CROSSGEMM_TEST_CONFIGS=gemv_n CROSSGEMM_REQUIRE_OPENCL=1
timeout 150 $B/kernels --test-threads 4 every_planned_config gemv_n_configs > $R/kernels.log 2>&1; echo "kernels rc=$?"; grep -E "test result|panicked" $R/kernels.log | head -3
timeout 100 $B/views --test-threads 4 every_config_on_views > $R/views.log 2>&1; echo "views rc=$?"; grep -E "test result|panicked" $R/views.log | head -3
unset CROSSGEMM_TEST_DEVICES CROSSGEMM_TEST_CONFIGS
export CROSSGEMM_REQUIRE_CUDA=1

# 3 (first: the measurement), then 2 from the new CLI's cache.
shapes="--shape 1x4096x11008 --shape 4x4096x4096 --shape 1x12288x4096"
for round in 1 2; do for bin in $OLD $B; do
  tag=$(basename $bin)-$round
  timeout 120 $bin/crossgemm bench --device $OCL $shapes --w-layout row --max 48 --dtypes f16 --epilogues none \
    --cache-dir /tmp/cg-af1-$tag --out $R --name wrow-$tag > $R/wrow-$tag.log 2>&1; echo "wrow-$tag rc=$?"
done; done
python3 -c "
import json
for b in ['ae1s','${BATCH}s']:
  for rd in (1,2):
    f='$R/wrow-%s-%d.json'%(b,rd)
    try: rows=json.load(open(f))['rows']
    except Exception as e: print(f,'missing',e); continue
    for r in rows: print(b, rd, '%dx%dx%d'%(r['m'],r['n'],r['k']), round(r['ours_us'],1) if r.get('ours_us') else None, r['wrong'], r['config'])
"
mkdir -p $R/ptx
# The split kernels are the programs with a global atomic; four of them kept.
kept=0
for f in /tmp/cg-af1-${BATCH}s-1/bin/*.bin; do
  [ -e "$f" ] || continue
  a=$(strings "$f" | grep -c "atom\.")
  [ "$a" -gt 0 ] || continue
  echo "$(basename $f): atom $a, membar.gl/fence.gpu $(strings "$f" | grep -cE 'membar\.gl|fence\.(sc|acq_rel)\.gpu'), ld.volatile.global $(strings "$f" | grep -c 'ld\.volatile\.global')"
  [ $kept -lt 4 ] && cp "$f" $R/ptx/ && kept=$((kept+1))
done | tee $R/ptx/summary.txt | head -12
echo "$(ls /tmp/cg-af1-${BATCH}s-1/bin/ 2>/dev/null | wc -l) program binaries in the cache"
finish
