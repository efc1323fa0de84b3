#!/usr/bin/env bash
# Session q, batch q6 (.dev/q4n: f599a8b plus the no_store variant, committed as 1fd4534, and an unused experiment hook).
# Batch q5: 3000x5000x700 f16 plain took 94-127 us in `bench` where bias_relu, staging the
# same operands, took 59-61, and the tuner times the plain configs at ~40 us. Is it the
# row's place in the process (first), the config, or the staging? Each row alone in its
# own process, then both in the reverse order, then the plain row with staging off
# (CROSSGEMM_STAGE=never: the cp.async producer reads the 1400-byte rows in place).
# Expected if the first row of a process pays a warm-up: plain alone ~60 us when second.
set -u
B=.dev/q4n
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)"
R=$OUT/q6; mkdir -p $R
cp $B/COMMIT $R/commit.txt
S=3000x5000x700
b() { # name epilogues [env]
  local n=$1 e=$2; shift 2
  env "$@" timeout 100 $B/crossgemm bench --shape $S --dtypes f16 --epilogues $e --max 48 --cache-dir /tmp/cg-q6 --out $R --name $n > $R/$n.log 2>&1; echo "$n rc=$?"
  grep -E "^\| [0-9]" $R/$n.md | cut -d'|' -f2,4,5,6,7,9,10,17 | head -2
}
b none-alone none
b relu-alone bias_relu
b relu-then-none bias_relu,none
b none-then-relu none,bias_relu
b none-nostage none CROSSGEMM_STAGE=never
timeout 60 $B/crossgemm tune --shape $S --dtype f16 --epilogue none --json --cache-dir /tmp/cg-q6 > $R/tune-none.json 2>&1
python3 -c "import json;d=json.load(open('$R/tune-none.json'));print('cached winner', d.get('best'), d.get('best_us'))"
cd $OUT && tar czf q6.tgz q6 && rm -rf q6
