#!/usr/bin/env bash
# Fifth call: launch overhead after the launch-plan memo; tuner and kernel suites on CUDA.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
cd .dev
export CROSSGEMM_CACHE_DIR=$PWD/cache
timeout 90 ./launch_overhead 2>&1 | tee $OUT/launch_overhead.log | tail -9
CROSSGEMM_TUNE_TEST_DEVICE=cuda:0 CROSSGEMM_TEST_DEVICES=cuda:0 timeout 120 ./tune 2>&1 | grep -E "test result|panicked" | tee $OUT/tune-tests.log
CROSSGEMM_TEST_DEVICES=cuda:0 timeout 150 ./kernels --test-threads 3 2>&1 | grep -E "test result|panicked" | tee $OUT/kernels.log
