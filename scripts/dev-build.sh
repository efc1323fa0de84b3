#!/usr/bin/env bash
# Builds what an H200 call runs (there is no cargo on the GPU machine) into a git-ignored
# folder to `carry`: the CLI with the cuBLAS baseline and prebuilt CUBINs, the CUDA test binaries gzipped (kernels,
# epilogue values, CUDA interop, views, batches, staged operands, in place, tf32x3), the runtime's unit tests and the CUDA interop example,
# stripped, with the commit they were built at. Usage: scripts/dev-build.sh [.dev/DIR
# [FEATURES]] (default .dev/next; FEATURES, comma-separated, are added to the CLI's, e.g.
# `turned-candidates`). The bench/h200-*.sh scripts name the folder they expect.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.dev/next}
extra=${2:+,$2}
# Another target folder (CARGO_TARGET_DIR) lets this build run beside a debug test run.
tgt=${CARGO_TARGET_DIR:-target}
log=$(mktemp)
# The CLI with the `aot` feature: its kernels' table configs are CUBINs in the binary, as a
# user's release build would have them (needs libnvrtc on LD_LIBRARY_PATH here).
# Copied at once: the test builds below relink target/release/crossgemm without `aot`
# (integration tests get the package's binaries built).
rm -rf "$out" && mkdir -p "$out"
cargo build --release --features "baseline,aot$extra" --bin crossgemm
cp "$tgt/release/crossgemm" "$out/"
cargo build --release --features baseline --example interop_cuda
# The CUDA test binaries, by their tests/*.rs name.
tests=(kernels epilogue_values interop_cuda views batched staged empty in_place tf32x3)
cargo test --release --features baseline --no-run $(printf -- '--test %s ' "${tests[@]}") 2>&1 | tee "$log"
cargo test --release -p gemm-runtime --features cuda,opencl --lib --no-run 2>&1 | tee -a "$log"
# The test executables, by the source they were built from.
exe() { grep -E "Executable $1 " "$log" | sed -E 's/.*\((.*)\)$/\1/' | tail -1; }
cp "$tgt/release/examples/interop_cuda" "$out/interop_cuda_example"
for t in "${tests[@]}"; do cp "$(exe "tests/$t.rs")" "$out/$t"; done
cp "$(exe 'unittests src/lib.rs')" "$out/runtime_tests"
packed=(interop_cuda_example "${tests[@]}" runtime_tests)
strip "$out"/crossgemm "${packed[@]/#/$out/}"
# The test binaries compressed (~48 MB stripped, ~16 gzipped), so that the folder and the
# tree fit a call's 64 MiB carry; bench/lib.sh unpacks them on the GPU machine.
gzip -9f "${packed[@]/#/$out/}"
git rev-parse --short HEAD > "$out/COMMIT"
if [ -n "$extra" ]; then echo "CLI features: baseline,aot$extra" >> "$out/COMMIT"; fi
git diff --quiet || echo "dirty" >> "$out/COMMIT"
du -sh "$out"
