#!/usr/bin/env bash
# H200, 2026-12-01 (session d), last call (issues 12 and 14), binaries of .dev/main
# (scripts/dev-build.sh .dev/main at the head of main):
# 1. issue 12: the first call of a kernel in a *fresh process with an empty cache* at
#    every f16 shape of the bench table and every epilogue (66 processes): the shipped
#    tables name the config, nothing is timed, and the wall time of that first launch
#    (lookup, the check of the config at the call's build variant, NVRTC of one config, the
#    run) is what `bench --first-call` reports; then the config's own time. Collected in
#    fresh-table.tsv (shape, epilogue, first call ms, source, ours us, config).
# 2. issue 14: at the same head, the epilogue-value tests, the runtime's CUDA unit tests
#    and the CUDA interop test and example.
set -u
B=.dev/main
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_COMMIT=$(head -1 $B/COMMIT) CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
mkdir -p $OUT/t
cp $B/COMMIT $OUT/t/commit.txt
SHAPES="1024x1024x1024 2048x2048x2048 4096x4096x4096 8192x8192x8192 1024x1024x2048 16x4096x4096 128x8192x8192 4096x4096x128 1000x1000x1000 3000x5000x700 1x12288x4096 16x12288x4096 128x12288x4096 2048x12288x4096 1x11008x4096 16x11008x4096 128x11008x4096 2048x11008x4096 1x4096x11008 16x4096x11008 128x4096x11008 2048x4096x11008"
printf "shape\tepilogue\tfirst_call_ms\tsource\tours_us\tconfig\n" > $OUT/t/fresh-table.tsv
i=0
for s in $SHAPES; do for e in none bias_relu bias_gelu; do
  i=$((i+1)); d=/tmp/cg-fresh-$i; rm -rf $d
  CROSSGEMM_CACHE_DIR=$d timeout 30 $B/crossgemm bench --first-call --shape $s --dtypes f16 --epilogues $e --no-vendor --runs 10 --out /tmp/fc --name f$i > /tmp/fc-$i.log 2>&1
  rc=$?
  line=$(grep -m1 "ours " /tmp/fc-$i.log)
  fc=$(echo "$line" | grep -o 'first call [0-9]* ms ([a-z_]*)' | sed -E 's/first call ([0-9]*) ms \(([a-z_]*)\)/\1\t\2/')
  us=$(echo "$line" | sed -E 's/.*ours ([0-9.]+) us.*/\1/')
  cfg=$(echo "$line" | sed -E 's/.*\), ([a-z]+ [^,]*), first call.*/\1/')
  printf "%s\t%s\t%s\t%s\t%s\trc=%s\n" "$s" "$e" "$fc" "$us" "$cfg" "$rc" >> $OUT/t/fresh-table.tsv
done; done
cut -f3 $OUT/t/fresh-table.tsv | tail -n +2 | sort -n | awk '{a[NR]=$1} END {print "fresh first calls:", NR, "median", a[int((NR+1)/2)], "ms, largest", a[NR], "ms"}'
cp /tmp/fc-1.log /tmp/fc-36.log $OUT/t/ 2>/dev/null
CROSSGEMM_CACHE_DIR=/tmp/cg-suite CROSSGEMM_TEST_DEVICES=cuda:0 timeout 100 $B/epilogue_values --test-threads 16 > $OUT/t/epilogue_values.log 2>&1; echo "epilogue_values rc=$?"
CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 40 $B/runtime_tests cuda --test-threads 4 > $OUT/t/runtime_tests_cuda.log 2>&1; echo "runtime cuda rc=$?"
CROSSGEMM_CACHE_DIR=/tmp/cg-int timeout 60 $B/interop_cuda --test-threads 1 > $OUT/t/interop_cuda.log 2>&1; echo "interop rc=$?"
CROSSGEMM_CACHE_DIR=/tmp/cg-int timeout 30 $B/interop_cuda_example >> $OUT/t/interop_cuda.log 2>&1; echo "interop example rc=$? $(tail -1 $OUT/t/interop_cuda.log)"
grep -hE "test result|panicked" $OUT/t/*.log | head -8
# 3. issue 14, PoCL 5.0 on this machine: opencl_generated_gemm's f32 kernels read back
#    zeros (bench/results/h200-2026-12-01c/pocl5-dump): with a fresh cache folder, without
#    PoCL's kernel cache, and without crossgemm's compiled-binary cache as well.
p5() { # name, env...
  local name=$1; shift
  env "$@" CROSSGEMM_CACHE_DIR=/tmp/cg-p5-$name timeout 60 $B/runtime_tests opencl_generated_gemm > $OUT/t/pocl5-$name.log 2>&1
  echo "pocl5 $name rc=$? $(grep -c 'wrong' $OUT/t/pocl5-$name.log) wrong-lines $(grep -h 'test result' $OUT/t/pocl5-$name.log)"
}
p5 fresh X=1
p5 nopoclcache POCL_KERNEL_CACHE=0
p5 nocaches POCL_KERNEL_CACHE=0 CROSSGEMM_BINARY_CACHE_MB=0
cd $OUT && tar czf t.tgz t && rm -rf t
