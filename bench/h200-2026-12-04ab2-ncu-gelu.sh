#!/usr/bin/env bash
# Session ab, batch ab2 (.dev/ab1). Why our bias+GELU costs more over bias+ReLU than
# cuBLASLt's (aa2, f16 2048x12288x4096: ours 271.2 -> 279.3 us, +8.1; cuBLASLt 270.1 ->
# 275.0, +4.9; 4096^3: +5.3 against +3.7). Our epilogue computes GELU with one
# `tanh.approx.f32` (MUFU) and six other instructions an element (SASS of the 128x256
# two-consumer tile, NVRTC here): 25.2M elements at the H200's 16 MUFU results a clock
# an SM are ~7 us at 1.7 GHz if nothing overlaps them, which is our whole delta. Nsight
# Compute counts, for ours and cuBLASLt's kernels with each epilogue: the XU pipe's
# (MUFU's) warp instructions and its active cycles, all instructions, the tensor pipe's
# active cycles, and the kernel's time.
# Written before: ours ~0.8M XU warp instructions more with GELU than with ReLU (one per
# 32 elements). cuBLASLt either about as many (then it hides them under its main loop:
# its tensor pipe stays busier through the epilogue) or half (a packed f16x2 tanh, whose
# f16 result is too coarse near -1 for our verifier's tolerance at negative inputs).
# Written in session ab, which was lent no device: not run yet (build the binaries with
# `scripts/dev-build.sh .dev/ab1` at the head that is to be measured).
B=.dev/ab1s  # .dev/ab1 with only what this batch runs, the CLI gzipped, to fit the carry
source bench/lib.sh ab2
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"
# Only metrics this ncu knows (a name it does not know fails the whole run): the base
# names are looked up in its list for the GPU, each with its sub-metric.
$NCU --query-metrics > $R/query-metrics.txt 2>&1
M=gpu__time_duration.sum,smsp__inst_executed.sum,sm__cycles_elapsed.avg.per_second
for m in smsp__inst_executed_pipe_xu:sum smsp__pipe_xu_cycles_active:avg.pct_of_peak_sustained_active \
         sm__pipe_tensor_op_gmma_cycles_active:avg.pct_of_peak_sustained_active \
         sm__pipe_tensor_op_hmma_cycles_active:avg.pct_of_peak_sustained_active \
         sm__inst_executed_pipe_xu:sum; do
  grep -q "^${m%%:*} " $R/query-metrics.txt && M=$M,${m%%:*}.${m#*:}
done
echo "metrics: $M"
C=$(cfg 64 128 256 4 2 false)
for e in bias_relu bias_gelu; do
  # Ours: the first two launches of the kernel in a tune of the one config.
  timeout 120 $NCU --clock-control none --metrics $M -k regex:cg_gemm_f16_$e -c 2 $B/crossgemm tune --shape 2048x12288x4096 --dtype f16 --epilogue $e --cache-dir /tmp/cg-ab2-$e --config "$C" > $R/ncu-ours-$e.txt 2>&1; echo "ours $e rc=$?"
  # cuBLASLt's (and cuBLAS's plain) kernels inside a bench row; the names tell them apart.
  timeout 150 $NCU --clock-control none --metrics $M -k regex:nvjet -c 6 $B/crossgemm bench --shape 2048x12288x4096 --dtypes f16 --epilogues $e --runs 10 --warmup 1 --cache-dir /tmp/cg-ab2-$e --config "$C" --out $R --name bench-$e > $R/ncu-vendor-$e.txt 2>&1; echo "vendor $e rc=$?"
  for f in $R/ncu-ours-$e.txt $R/ncu-vendor-$e.txt; do
    grep -E "^  [A-Za-z_].*\(|gpu__time|inst_executed|pipe_xu|tensor_op|per_second" $f | head -40
  done
done
finish
