#!/usr/bin/env bash
# Session ae, batch ae2: the wgmma consumers' shared-memory descriptors from their 32-bit
# halves, a k-step's one add to its stage's low half (`h200-2026-12-05ae2-desc.patch`),
# against the shipped kernels, in the same rounds.
# Binaries: .dev/ae2s (the CLI of 1d74f42 with the patch applied: `git apply` it, then
# `cargo build --release --features baseline,aot --bin crossgemm`) and .dev/ae1s (the
# same commit without it, batch ae1's). Carry: [".dev/ae1s", ".dev/ae2s"]. ~5 minutes.
# Why: the SASS of the 128x256 two-consumer main loop (2048x12288x4096's winner) spends
# ~86 instructions a k-step a consumer warp on 4 HGMMA, the descriptors rebuilt from the
# ring's address every k-step; with the patch 74 (ab2: ours 41.3M warp instructions
# against cuBLASLt's 26.5M, 1.6% slower with ReLU). Between a k-step's wait and its first
# HGMMA the consumer now issues fewer instructions.
# Written before: correct (a first call verifies each config at its build variant);
# 0-1% faster at 2048x12288x4096 and 4096^3, nothing slower by more than the noise (1%).
BATCH=${BATCH:-ae2}
B=.dev/ae2s
OLD=.dev/ae1s
source bench/lib.sh $BATCH
for f in "$OLD"/*.gz; do [ -e "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
first_calls "$OLD $B" \
  "llm|--shape 2048x12288x4096 --epilogues none,bias_relu" \
  "sq4096|--shape 4096x4096x4096 --epilogues none,bias_relu" \
  "sq2048|--shape 2048x2048x2048 --epilogues none" \
  "k2048|--shape 1024x1024x2048 --epilogues bias_relu"
finish
