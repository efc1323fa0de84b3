#!/usr/bin/env bash
# Fourth call: binary cache, launch overhead, CLI tuning + H200 records, cuBLAS baselines.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
cd .dev
export CROSSGEMM_CACHE_DIR=$PWD/cache
( CROSSGEMM_LOG=1 ./quickstart 2>&1 | grep -E "nvrtc|time" | tail -3; CROSSGEMM_LOG=1 ./quickstart 2>&1 | grep -E "binary|time" | tail -3 ) > $OUT/bincache.log 2>&1
CROSSGEMM_BINCACHE_TEST_DEVICE=cuda:0 timeout 60 ./binary_cache 2>&1 | grep -E "test result|panicked" >> $OUT/bincache.log
cat $OUT/bincache.log
timeout 60 ./launch_overhead 2>&1 | tee $OUT/launch_overhead.log | tail -8
SHAPES="4096x4096x4096 2048x2048x2048 1024x1024x2048 128x12288x4096 16x4096x4096 1000x1000x1000 3000x5000x700 2048x11008x4096"
for s in $SHAPES; do for e in none bias_relu; do
  timeout 40 ./crossgemm tune --shape $s --dtype f16 --epilogue $e --json 2>/dev/null
done; done | tee $OUT/ours-tuned.jsonl | cut -c1-160
./crossgemm cache export $OUT/h200-records.json 2>&1 | tail -1
timeout 200 python3 torch_baseline.py --shapes-file shapes.toml --shapes $(echo $SHAPES | tr ' ' ,) --dtypes f16 --epilogues none,bias_relu --no-triton 2>&1 | tee $OUT/torch-baseline.jsonl | cut -c1-160
CROSSGEMM_TEST_DEVICES=cuda:0 timeout 120 ./kernels --test-threads 3 2>&1 | grep -E "test result|panicked" | tee $OUT/kernels.log
