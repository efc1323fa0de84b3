#!/usr/bin/env bash
# What a warm call costs the host, in instructions, without a GPU: callgrind over
# examples/launch_overhead on the best device here (PoCL on a CPU-only machine), counting
# only inside `gemm_runtime::launch::launch_impl`, at two call counts; the difference over
# the difference in calls is one warm call (first-call work cancels out). Session ar:
# 23.3k -> 20.6k instructions a warm call at 54d8c3f (the kernel arguments in one
# allocation, the plan map on an Fx hash), ~12.4k of them PoCL's own
# (`callgrind_annotate --inclusive=yes` on the two outputs shows where); at ea60d1f 20.2k.
# Session at, against e7e903b: `Call::new` 1.90k -> 1.25k instructions a warm
# call (the operand views' vector allocated once at its size, not grown) and
# `TuneMode::from_env` 0.85k -> 0.55k (the mode's name parsed once, without allocating);
# the total stayed 19.4k -> 19.5k, as glibc malloc's cost on PoCL's heap moved the other
# way (the kernel arguments' one allocation 1.4k -> 2.2k): compare the functions, not the
# total, when PoCL's threads share the heap. Session au, against d6bd6ba: the kernel
# arguments on the stack (`device::KernelArgs`, a SmallVec of 24) instead of that one
# allocation: 19.35k -> 18.25k instructions a warm call (`Call::kernel_args` had been
# 2.07k inclusive, malloc's share most of it).
# Usage: bench/callgrind-warm-call.sh [TARGET_DIR] (needs valgrind; ~5 min).
set -euo pipefail
cd "$(dirname "$0")/.."
tgt=${1:-${CARGO_TARGET_DIR:-target}}
CARGO_TARGET_DIR=$tgt cargo build -q --release --example launch_overhead
out=$(mktemp -d)
# launch_overhead N makes about N + min(N, 1000) warm calls (timed and warm-up) besides
# its fixed ones: 1000 -> ~2000, 3000 -> ~4000.
for n in 1000 3000; do
  valgrind --tool=callgrind --callgrind-out-file=$out/cg$n.out --toggle-collect='*launch_impl*' \
    "$tgt/release/examples/launch_overhead" $n > $out/vg$n.log 2>&1
done
ir() { grep -o 'Collected : [0-9]*' $out/vg$1.log | grep -o '[0-9]*$'; }
echo "instructions a warm call: $(( ($(ir 3000) - $(ir 1000)) / 2000 )) (callgrind outputs in $out)"
