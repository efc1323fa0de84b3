#!/usr/bin/env bash
# Prepared first calls on this machine's PoCL (no GPU): `prepare`, then each shape's first
# plain CROSSGEMM_TUNE=cached launch, in a fresh process with an empty cache per shape.
# README numbers (2 cores, 2026-12-01): with the build-variant check at the call's full
# shape (a build of f451008) 2295 ms at 1x12288x4096 and 1977 ms at 16x11008x4096; with
# the check at a cut shape (7b28e6e) 768 and 691 ms, of which the kernel's own run is 612.
# Usage: bench/first-call-pocl.sh [path/to/crossgemm] (default: a release build of HEAD).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}
if [ -z "$bin" ]; then
    cargo build -q --release --bin crossgemm
    bin=target/release/crossgemm
fi
out=$(mktemp -d)
for s in 1x12288x4096 16x11008x4096; do
    CROSSGEMM_CACHE_DIR="$out/cache-$s" "$bin" bench --first-call --prepare --device opencl-cpu --shape "$s" \
        --dtypes f16 --epilogues none --no-vendor --out "$out" --name "fc-$s" > "$out/$s.log" 2>&1
    echo "$s: $(grep -o 'first call [0-9]* ms ([a-z_]*)' "$out/$s.log")"
done
