#!/usr/bin/env bash
# Session aa, batch aa10 (.dev/aa10: tests/kernels.rs and tests/batched.rs at 0e05439, the
# session's head after kcluster's revert, with the deep ring planned and the split-K
# same-bits test taking the wgmma family's splits only). The two GPU suites whole on the
# H200 (every planned config of every kernel, the deep ring among them), not filtered.
# Written before: every test passes (aa9 found the split-K same-bits test failing on
# gemv_n's splits at 16 rows, a test bug since session y, fixed here).
B=.dev/aa10
source bench/lib.sh aa10
export CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
timeout 420 $B/kernels --test-threads 4 > $R/kernels.log 2>&1; echo "kernels rc=$?"; grep -E "test result|panicked|^test .* FAILED" $R/kernels.log | head -8
timeout 150 $B/batched --test-threads 4 > $R/batched.log 2>&1; echo "batched rc=$?"; grep -E "test result|panicked|^test .* FAILED" $R/batched.log | head -8
finish
