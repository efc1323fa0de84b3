#!/usr/bin/env bash
# Regenerates records/pocl-cpu.json: tunes the CLI's built-in kernels (f16 with each
# epilogue class, f32 plain) over three shapes on PoCL, every candidate timed
# (--thorough), in a fresh cache folder, and exports that cache as the records file.
# The records carry each kernel's IR, so the macro's config tables can apply them by
# mainloop signature and epilogue class.
#
#   bench/records-pocl.sh            # writes records/pocl-cpu.json (a few minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --bin crossgemm
bin=target/release/crossgemm
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for shape in 256x256x256 17x33x65 64x512x128; do
  for kind in "f16 none" "f16 bias_relu" "f16 bias_gelu" "f32 none"; do
    set -- $kind
    "$bin" tune --device opencl-cpu --cache-dir "$dir" --shape "$shape" --dtype "$1" --epilogue "$2" --thorough --json
  done
done
"$bin" cache export --cache-dir "$dir" records/pocl-cpu.json
