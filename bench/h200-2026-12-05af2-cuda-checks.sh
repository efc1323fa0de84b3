#!/usr/bin/env bash
# Session af, batch af2: this session's runtime changes through CUDA, which CI (PoCL) cannot
# run. Binaries: batch af1's build (`scripts/dev-build.sh .dev/af1` at the commit in
# COMMIT), carried as .dev/af2s (the test binaries this batch runs, gzipped). Carry:
# [".dev/af2s"]. ~5 min (timeouts sum to 530 s).
# 1. Split-K workspaces, now one generic pair per device held from reading their
#    addresses until the launch is queued (device/workspace.rs): the split-K same-bits
#    tests of the wgmma, gemv_n and decode_n families (every split config twice, bit for
#    bit, against the host reference).
# 2. The result written over a residual (`k_into_res`, tests/in_place.rs): one config of
#    each form of each CUDA family (wgmma plain, ping-pong, clusters, split-K, stream-K
#    where planned; mma_sync; decode, decode_n, gemv, gemv_n, simt) gives the same bits in
#    place as into other memory.
# 3. An output sharing memory with an operand refused (interop_cuda: views of one
#    caller's slice), views side by side in one slice run; the views and batch suites
#    (whose operands share buffers with nothing the output uses) unchanged.
# Written before: all pass; nothing refused that ran before (views, batched, interop).
BATCH=${BATCH:-af2}
B=.dev/${BATCH}s
source bench/lib.sh $BATCH
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
run() { # name timeout binary args...
  local n=$1 t=$2 bin=$3; shift 3
  timeout $t $B/$bin --test-threads 8 "$@" > $R/$n.log 2>&1; echo "$n rc=$?"
  grep -E "test result|panicked" $R/$n.log | head -3
}
run splitk 120 kernels split_k_configs gemv_n_configs decode_n_configs
run in_place 120 in_place
run interop 40 interop_cuda
run views 150 views
run batched 100 batched
finish
