#!/usr/bin/env bash
# Session af, batch af1: K split over work-groups in the OpenCL forms, through NVIDIA's
# OpenCL on the H200: gemv_n (KSPLIT 4, 8, 16) and simt's tiles of at most 32 rows
# (KSPLIT 4, 8); the last of a strip's or tile's work-groups adds the partial sums in
# split order through a workspace, as the CUDA forms do. Before it OpenCL walked all of K
# in one work-group per strip or tile: gemv_n 1x4096x11008 77.9 µs, 1x12288x4096 63.0,
# 4x4096x4096 49.6 (z1; the CUDA form 32.9-35.1 with a split); simt at 16-32 rows never
# timed (a 16x64 tile leaves 64 work-groups at N = 4096).
# Binaries: `scripts/dev-build.sh .dev/af1` at the commit in COMMIT, carried as .dev/af1s
# (the CLI and the test binaries, gzipped); the CLI before the change is .dev/ae1s's
# (1d74f42). Carry: [".dev/af1s", ".dev/ae1s"].
# PART=1 (~6 min): correct through NVIDIA's OpenCL (every planned gemv_n and split simt
#   config of the kernel suites, the views with NaN around them and the split-K same-bits
#   test), then tuned row-major-w rows (gemv_n), old CLI and new.
# PART=2 (~5 min): tuned column-major-w rows of 16-64 rows (simt), old and new; then the
#   split kernels' PTX (the driver's program binaries, from the binary cache): the fences
#   (`mem_fence(CLK_GLOBAL_MEM_FENCE)`) should be `membar.gl` (or `fence.sc.gpu` /
#   `fence.acq_rel.gpu`) and the slots' volatile loads `ld.volatile.global`: OpenCL C 1.2
#   promises nothing across work-groups, so this is what the split relies on there.
# Written before: correct; gemv_n 1x4096x11008 (64-128 strips of K whole: under one wave of
# 132 SMs) 1.5-2x faster (~40-50 µs), 4x4096x4096 1.2-1.5x, 1x12288x4096 (384 strips
# already) within 10%; simt 16x4096x4096 and 32x4096x4096 2x faster or more with a split,
# 64x4096x4096 (no split planned at 64-row tiles) as before.
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
PART=${PART:-1}

# Tuned rows of the old and the new CLI: bench NAME ARGS...
bench() {
  local name=$1; shift
  for bin in $OLD $B; do
    local tag=$name-$(basename $bin)
    timeout 110 $bin/crossgemm bench --device $OCL "$@" --max 48 --dtypes f16 --epilogues none \
      --cache-dir /tmp/cg-af1-$tag --out $R --name $tag > $R/$tag.log 2>&1; echo "$tag rc=$?"
    python3 -c "
import json
try: rows=json.load(open('$R/$tag.json'))['rows']
except Exception as e: print('$tag', 'missing', e); rows=[]
for r in rows: print('$tag', '%dx%dx%d'%(r['m'],r['n'],r['k']), round(r['ours_us'],1) if r.get('ours_us') else None, r['wrong'], r['config'])
"
  done
}

if [ "$PART" = 1 ]; then
  # The suites on NVIDIA's OpenCL alone (the machine's PoCL fails f32 simt tiles, a known
  # fault), narrowed to the split configs (`ksplit` is in their descriptions; gemv's warp
  # splits come along). No CUDA device is under test: lib.sh's CROSSGEMM_REQUIRE_CUDA
  # would fail them (a dry run on PoCL found it).
  unset CROSSGEMM_REQUIRE_CUDA
  export CROSSGEMM_TEST_DEVICES=$OCL CROSSGEMM_TEST_CONFIGS=ksplit CROSSGEMM_REQUIRE_OPENCL=1
  timeout 150 $B/kernels --test-threads 4 every_planned_config gemv_n_configs split_k_configs > $R/kernels.log 2>&1; echo "kernels rc=$?"; grep -E "test result|panicked" $R/kernels.log | head -3
  timeout 100 $B/views --test-threads 4 every_config_on_views > $R/views.log 2>&1; echo "views rc=$?"; grep -E "test result|panicked" $R/views.log | head -3
  unset CROSSGEMM_TEST_DEVICES CROSSGEMM_TEST_CONFIGS
  export CROSSGEMM_REQUIRE_CUDA=1
  bench wrow --w-layout row --shape 1x4096x11008 --shape 4x4096x4096 --shape 1x12288x4096
else
  bench col --shape 16x4096x4096 --shape 32x4096x4096 --shape 64x4096x4096
  mkdir -p $R/ptx
  # The split kernels are the programs with a global atomic; four of them kept.
  kept=0
  for f in /tmp/cg-af1-col-${BATCH}s/bin/*.bin; do
    [ -e "$f" ] || continue
    a=$(strings "$f" | grep -c "atom\.")
    [ "$a" -gt 0 ] || continue
    echo "$(basename $f): atom $a, membar.gl/fence.gpu $(strings "$f" | grep -cE 'membar\.gl|fence\.(sc|acq_rel)\.gpu'), ld.volatile.global $(strings "$f" | grep -c 'ld\.volatile\.global')"
    [ $kept -lt 4 ] && cp "$f" $R/ptx/ && kept=$((kept+1))
  done | tee $R/ptx/summary.txt | head -12
  echo "$(ls /tmp/cg-af1-col-${BATCH}s/bin/ 2>/dev/null | wc -l) program binaries in the cache"
fi
finish
