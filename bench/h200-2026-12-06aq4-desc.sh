#!/usr/bin/env bash
# Session aq, batch aq4: session ae's batch ae2 (never run) at the head: the wgmma
# consumers' shared-memory descriptors from their 32-bit halves, a k-step's one add to its
# stage's low half (`h200-2026-12-05ae2-desc.patch`, which applies to dc61a0c as it is),
# against the head's kernels, as first calls on the shipped tables, in the same rounds.
# Binaries: B=.dev/aq-desc (the CLI of the head with the patch applied: `git apply` it,
# then `cargo build --release --features baseline,aot --bin crossgemm`, gzipped) and
# OLD=.dev/aq0 (`scripts/dev-build.sh` at the head). Carry: both. ~5 minutes.
# Why: the fused rows of M and N >= 2048 are 1-2% behind cuBLASLt (ap2), and the SASS of
# the 128x256 two-consumer main loop spends ~86 instructions a k-step a consumer warp on
# 4 HGMMA, the descriptors rebuilt from the ring's address every k-step; with the patch 74.
# Written before (as ae2): correct (a first call verifies its config); 0-1% faster at
# 2048x12288x4096 and 4096³, nothing slower by more than the noise (1%).
BATCH=${BATCH:-aq4}
B=${B:-.dev/aq-desc}
OLD=${OLD:-.dev/aq0}
source bench/lib.sh $BATCH
first_calls "$OLD $B" \
  "llm|--shape 2048x12288x4096 --epilogues none,bias_relu" \
  "sq4096|--shape 4096x4096x4096 --epilogues none,bias_relu" \
  "sq2048|--shape 2048x2048x2048 --epilogues none,bias_relu" \
  "k2048|--shape 1024x1024x2048 --epilogues none,bias_relu"
finish
