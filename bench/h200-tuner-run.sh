#!/usr/bin/env bash
# Third call: new planner defaults + the autotuner on CUDA.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
cd .dev
export CROSSGEMM_CACHE_DIR=$PWD/cache
CROSSGEMM_TEST_DEVICES=cuda:0 timeout 150 ./kernels --test-threads 3 2>&1 | tee $OUT/kernels-cuda.log | grep -E "test result|panicked|element" | head
CROSSGEMM_TUNE_TEST_DEVICE=cuda:0 CROSSGEMM_TEST_DEVICES=cuda:0 timeout 120 ./tune 2>&1 | tee $OUT/tune-tests-cuda.log | grep -E "^test |test result|panicked" | head -20
./runtime_tests cuda 2>&1 | grep "test result"
for s in "1024 1024 2048" "512 4096 1024"; do
  echo "== quickstart $s, new process, empty cache then cached"; ./quickstart $s 2>&1 | grep -E "time|ok|error"; ./quickstart $s 2>&1 | grep -E "time|ok|error"
done 2>&1 | tee $OUT/quickstart-tune.log
ls -la cache; for f in $(ls cache/*.json 2>/dev/null | head -2); do cp $f $OUT/; done
CROSSGEMM_TUNE=off timeout 120 ./throughput --configs 1 --reps 20 2>&1 | tee $OUT/throughput-default.log
