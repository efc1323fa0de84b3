#!/usr/bin/env bash
# Session j, last call (binaries of `scripts/dev-build.sh .dev/final` at the head, the
# quickstart, and crossgemm-sk: the CLI with `streamk-candidates`): the CUDA suite, views,
# batches and the quickstart at the session's final code; then the stream-K question of
# batches h and i: does stream-K's 254.5 us at 2048x11008x4096 (batch h, a standalone
# tune) come back in two more standalone tunes, or was it the 266.7 of batch i?
set -u
B=${B:-.dev/final}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1
R=$OUT/j; mkdir -p $R
cp $B/COMMIT $R/commit.txt
CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 230 $B/kernels --test-threads 16 > $R/kernels.log 2>&1; echo "kernels rc=$?"
grep -hE "test result|panicked" -A3 $R/kernels.log | head -8
CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-views timeout 60 $B/views --test-threads 16 > $R/views.log 2>&1; echo "views rc=$?"
grep -hE "test result|panicked" $R/views.log | head -3
CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-batched timeout 60 $B/batched --test-threads 16 > $R/batched.log 2>&1; echo "batched rc=$?"
grep -hE "test result|panicked" $R/batched.log | head -3
CROSSGEMM_CACHE_DIR=/tmp/cg-q timeout 40 $B/quickstart > $R/quickstart.log 2>&1; echo "quickstart rc=$?"
tail -4 $R/quickstart.log
for i in 1 2; do
  CROSSGEMM_CACHE_DIR=/tmp/cg-sk$i timeout 60 $B/crossgemm-sk tune --shape 2048x11008x4096 --dtype f16 --epilogue none --max 96 --json > $R/tune-sk$i-2048x11008x4096.json 2> $R/tune-sk$i.log; echo "tune sk$i rc=$?"
  python3 -c "
import json
t=sorted(json.load(open('$R/tune-sk$i-2048x11008x4096.json'))['timings'], key=lambda t: t['us'])
for x in t[:4]: print('  %.1f %s' % (x['us'], x['config']))
"
done
cd $OUT && tar czf j.tgz j && rm -rf j
