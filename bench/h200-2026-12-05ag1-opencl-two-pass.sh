#!/usr/bin/env bash
# Session ag, batch ag1: OpenCL's splits of K over work-groups as two kernels, through
# NVIDIA's OpenCL on the H200. Each work-group leaves its partial sums in its slot of a
# launch workspace; a second kernel (`{symbol}_sum`, queued after the first with the same
# arguments, one work-group per strip or tile) adds the slots in split order and stores.
# Batch af1 ran the one-kernel form (the last work-group to arrive adds the others' sums):
# right in every run, but its fences are `membar.cta` there, so it was right by luck and
# was kept to CPUs. Before any split (ae1s's CLI, 1d74f42) OpenCL walked K whole.
# Binaries: `scripts/dev-build.sh .dev/ag1` at the commit in COMMIT, carried as .dev/ag1s
# (the CLI and the kernels/views test binaries, gzipped); .dev/ae1s (K whole) and
# .dev/af1s (one kernel, 7d7e4e4). Carry: [".dev/ag1s", ".dev/ae1s", ".dev/af1s"].
# PART=1 (~6 min): correct through NVIDIA's OpenCL (every planned split config of the
#   kernel suites, the split-K same-bits tests, the views with NaN around them), then
#   tuned row-major-w rows (gemv_n), K whole against two kernels.
# PART=2 (~8 min): tuned column-major-w rows of 16-64 rows (simt): K whole, one kernel,
#   two kernels; then every candidate's time at 16x4096x4096 and 1000^3 (the OpenCL
#   target has no peak in targets.toml, so its default is the planner's first config).
# PART=3 (~2 min, CUDA; PART=1 runs it too): gemv against decode at misaligned decode sizes (K odd: rows
#   through windows), a full tune of each shape (every candidate's time) and the config
#   an `off` launch takes (the plan's default: decode's first where it accepts).
# Written before (PART=3): ae1 found gemv 18% ahead of decode at 1x4096x4099 (17.25
#   against 20.32 µs); if gemv leads at every one- and two-row shape here, the default
#   there should be gemv's (decode's windows shift whole mma fragments).
# Written before: correct; the second kernel costs a launch's gap on the queue (a few µs
#   between the kernels; af1's one-kernel times: simt 16/32/64x4096x4096 114.6/132.4/170.3
#   µs, gemv_n 1x4096x11008 55.3), so two kernels keep most of af1's gain over K whole:
#   simt 2x faster or more at 16 and 32 rows, gemv_n 1x4096x11008 1.2-1.4x.
BATCH=${BATCH:-ag1}
B=.dev/${BATCH}s
source bench/lib.sh $BATCH-part${PART:-1}
for old in .dev/ae1s .dev/af1s; do
  for f in "$old"/*.gz; do [ -e "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
done
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
$B/crossgemm devices > $R/devices.txt 2>&1
OCL=$(grep -iE "opencl:[0-9]+:[0-9]+.*(NVIDIA|H200)" $R/devices.txt | grep -oE "opencl:[0-9]+:[0-9]+" | head -1)
echo "nvidia opencl: $OCL"
[ -n "$OCL" ] || { echo "no NVIDIA OpenCL device"; finish; exit 1; }
PART=${PART:-1}

# Tuned rows of each CLI in BINS: bench NAME ARGS...
bench() {
  local name=$1; shift
  for bin in $BINS; do
    local tag=$name-$(basename $bin)
    timeout 100 $bin/crossgemm bench --device $OCL "$@" --max 48 --dtypes f16 --epilogues none \
      --cache-dir /tmp/cg-$BATCH-$tag --out $R --name $tag > $R/$tag.log 2>&1; echo "$tag rc=$?"
    python3 -c "
import json
try: rows=json.load(open('$R/$tag.json'))['rows']
except Exception as e: print('$tag', 'missing', e); rows=[]
for r in rows: print('$tag', '%dx%dx%d'%(r['m'],r['n'],r['k']), round(r['ours_us'],1) if r.get('ours_us') else None, r['wrong'], r['config'])
"
  done
}

if [ "$PART" = 1 ]; then
  # NVIDIA's OpenCL alone (the machine's PoCL fails f32 simt tiles, a known fault),
  # narrowed to the split configs (`ksplit` is in their descriptions). No CUDA device is
  # under test: lib.sh's CROSSGEMM_REQUIRE_CUDA would fail the suites.
  unset CROSSGEMM_REQUIRE_CUDA
  export CROSSGEMM_TEST_DEVICES=$OCL CROSSGEMM_TEST_CONFIGS=ksplit CROSSGEMM_REQUIRE_OPENCL=1
  timeout 150 $B/kernels --test-threads 4 every_planned_config gemv_n_configs split_k_configs > $R/kernels.log 2>&1; echo "kernels rc=$?"; grep -E "test result|panicked" $R/kernels.log | head -3
  timeout 100 $B/views --test-threads 4 every_config_on_views > $R/views.log 2>&1; echo "views rc=$?"; grep -E "test result|panicked" $R/views.log | head -3
  unset CROSSGEMM_TEST_DEVICES CROSSGEMM_TEST_CONFIGS
  export CROSSGEMM_REQUIRE_CUDA=1
  BINS=".dev/ae1s $B" bench wrow --w-layout row --shape 1x4096x11008 --shape 4x4096x4096 --shape 1x12288x4096
  # The default a first call takes there (no OpenCL table): K whole before, a split now
  # (gemv_n's score puts KSPLIT 4 first).
  for bin in .dev/ae1s $B; do
    tag=first-$(basename $bin)
    timeout 60 $bin/crossgemm bench --first-call --device $OCL --w-layout row --shape 1x4096x11008 --shape 4x4096x4096 --shape 1x12288x4096 --dtypes f16 --epilogues none --cache-dir /tmp/cg-$BATCH-$tag --out $R --name $tag > $R/$tag.log 2>&1; echo "$tag rc=$?"
    grep -E "^\| [0-9]+x[0-9]+x[0-9]+ \|" $R/$tag.md | head -3 | cut -d"|" -f2-9
  done
elif [ "$PART" = 2 ]; then
  BINS=".dev/ae1s .dev/af1s $B" bench col --shape 16x4096x4096 --shape 32x4096x4096 --shape 64x4096x4096
  # Every candidate's time (the new CLI), for the OpenCL target's default: with no peak in
  # targets.toml it is the planner's first (a 128x128 simt tile: 32 work-groups at 16 rows).
  export CROSSGEMM_IGNORE_TABLES=1
  for s in 16x4096x4096 1000x1000x1000; do
    timeout 100 $B/crossgemm tune --device $OCL --shape $s --dtype f16 --epilogue none --max 48 --json --cache-dir /tmp/cg-$BATCH-all > $R/tune-ocl-$s.json 2> $R/tune-ocl-$s.err; echo "tune $s rc=$?"
    python3 bench/tune_summary.py "$s" $R/tune-ocl-$s.json | cut -c1-900
  done
fi
if [ "$PART" = 1 ] || [ "$PART" = 3 ]; then
  export CROSSGEMM_IGNORE_TABLES=1
  for s in 1x4096x4099 2x4096x4099 8x4096x4099 1x12288x4099; do
    timeout 60 $B/crossgemm tune --device cuda:0 --shape $s --dtype f16 --epilogue none --max 48 --json --cache-dir /tmp/cg-$BATCH-fam > $R/tune-$s.json 2> $R/tune-$s.err; echo "tune $s rc=$?"
    python3 bench/tune_summary.py "$s" $R/tune-$s.json | cut -c1-700
    CROSSGEMM_TUNE=off timeout 30 $B/crossgemm tune --device cuda:0 --shape $s --dtype f16 --epilogue none --cache-dir /tmp/cg-$BATCH-off > $R/off-$s.txt 2>&1; echo "default $s: $(grep -E "^best" $R/off-$s.txt | head -1 | tr '\n' ' ')"
  done
fi
finish
