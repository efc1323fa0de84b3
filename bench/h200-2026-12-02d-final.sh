#!/usr/bin/env bash
# Session i, last call (binaries of `scripts/dev-build.sh .dev/fin` at the session's head, and
# `cargo build --release --example quickstart`): the CUDA suite at the final code (the
# decode family after its reduction became one macro, decode before gemv in a plan) and
# tests/views.rs through CUDA, then the quickstart on the GPU.
set -u
B=${B:-.dev/fin}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
mkdir -p $OUT/fin
cp $B/COMMIT $OUT/fin/commit.txt
CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 250 $B/kernels --test-threads 16 > $OUT/fin/kernels.log 2>&1; echo "kernels rc=$?"
grep -hE "test result|panicked" -A3 $OUT/fin/kernels.log | head -12
CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-views timeout 80 $B/views --test-threads 16 > $OUT/fin/views.log 2>&1; echo "views rc=$?"
grep -hE "test result|panicked" -A3 $OUT/fin/views.log | head -6
CROSSGEMM_CACHE_DIR=/tmp/cg-q timeout 60 $B/quickstart > $OUT/fin/quickstart.log 2>&1; echo "quickstart rc=$?"
tail -8 $OUT/fin/quickstart.log
cd $OUT && tar czf fin.tgz fin && rm -rf fin
