#!/usr/bin/env bash
# Session q, batch q4 (.dev/q4: batch q3's storers patch plus two experiment-only hooks:
# CG_X_ONE="bm,bn,stages,consumers,pingpong,storers" plans that one wgmma tile;
# CG_X_PREPEND puts text (';' for newlines) at the top of the kernel source).
# Batches q1-q3: every storers twin 0.6-0.8x of its tile at 4096x4096x128 whatever the
# hand-off (per-thread or per-warp arrivals; one or two staged tiles; try_wait or
# test_wait). Nsight Compute on the 1-consumer 64x128 s6 tile with and without storers
# (and with a 32 ns back-off in the storers' polls) at 4096x4096x128 f16: where do the
# warps stall, and what does the memory see? Expected if the storers' polls steal issue
# slots: the back-off variant fast, "selected"/"branch" samples high in the spin loop;
# if their stores are throttled: lg_throttle on the STG. CG_X_ONE takes cluster_m and
# cluster_n as 7th and 8th values (the 1000^3 runs).
set -u
B=${B:-.dev/q4}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT="$(head -1 $B/COMMIT)-storers-x"
export CROSSGEMM_IGNORE_TABLES=1
R=$OUT/q4; mkdir -p $R
cp $B/COMMIT $R/commit.txt
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"; $NCU --version | tail -1
S=4096x4096x128
run() { # name tile prepend [shape]
  local n=$1 sh=${4:-$S}; export CG_X_ONE=$2 CG_X_PREPEND="$3"
  timeout 60 $B/crossgemm tune --shape $sh --dtype f16 --epilogue none --max 1 --thorough --json --cache-dir /tmp/cg-$n > $R/tune-$n.json 2> $R/tune-$n.log
  python3 -c "import json;d=json.load(open('$R/tune-$n.json'));print('$n', ['%.2f %s'%(x['us'],x['config']) for x in d['timings']], d.get('failed'))"
}
run plain1 64,128,6,1,0,0 ""
run stor1 64,128,6,1,0,1 ""
run stor1bo 64,128,6,1,0,1 "#define CG_X_BACKOFF 32"
run stor1bo256 64,128,6,1,0,1 "#define CG_X_BACKOFF 256"
run plain2 128,128,4,2,0,0 ""
run stor2 128,128,4,2,0,1 ""
run stor2bo 128,128,4,2,0,1 "#define CG_X_BACKOFF 64"
# 1000^3 (0.79x cuBLAS, whose kernel is 72x128 tiles in 2x4 clusters): smaller tiles on
# every SM lose to 128x128 on 64 SMs (13.6 against 11.9 us), as if the L2's reads were
# the limit; clusters that share both operands cut those reads in half (2x2) or by a
# quarter (2x1). Expected: a small tile in a 2x2 cluster under 11.9 us if L2 reads limit.
K=1000x1000x1000
run k128 128,128,6,2,0,0 "" $K
run k128q 128,128,6,2,0,0,2,2 "" $K
run k12864 128,64,8,2,0,0 "" $K
run k12864c 128,64,8,2,0,0,2,1 "" $K
run k12864q 128,64,8,2,0,0,2,2 "" $K
run k64128 64,128,8,1,0,0 "" $K
run k64128c 64,128,8,1,0,0,2,1 "" $K
run k64128q 64,128,8,1,0,0,2,2 "" $K
run k64128q2 64,128,8,2,1,0,2,2 "" $K
for v in "plain1 64,128,6,1,0,0" "stor1 64,128,6,1,0,1"; do
  set -- $v; export CG_X_ONE=$2 CG_X_PREPEND=""
  timeout 120 $NCU --clock-control none --set full --import-source no -k regex:cg_gemm_f16_none -c 1 -o $R/rep-$1 $B/crossgemm bench --cache-dir /tmp/cg-$1 --shape $S --dtypes f16 --epilogues none --runs 3 --no-vendor --out /tmp/nb --name nb-$1 > $R/ncu-$1.log 2>&1; echo "ncu $1 rc=$?"
  $NCU -i $R/rep-$1.ncu-rep --page details > $R/ncu-$1.txt 2>&1
  $NCU -i $R/rep-$1.ncu-rep --page source --csv --print-source sass > $R/src-$1.csv 2>&1; echo "source page rc=$? $(wc -l < $R/src-$1.csv) lines"
  grep -E "Duration|Memory Throughput|DRAM Throughput|L2 Cache Throughput|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Active Warps Per Scheduler|Eligible Warps" $R/ncu-$1.txt | head -12
  $NCU -i $R/rep-$1.ncu-rep --page raw --csv --metrics regex:smsp__pcsamp_warps_issue_stalled_.* > $R/stalls-$1.csv 2>&1
  python3 - $R/stalls-$1.csv <<'PY'
import csv,sys
rows=list(csv.reader(open(sys.argv[1])))
h=[i for i,r in enumerate(rows) if any('pcsamp' in c for c in r)]
if h:
  names=rows[h[0]]; vals=rows[-1]
  p=[(float(v.replace(',','')),n) for n,v in zip(names,vals) if 'pcsamp' in n and v.replace(',','').replace('.','').isdigit()]
  p.sort(reverse=True); tot=sum(x for x,_ in p if not _.endswith('_not_issued')) or 1
  for x,n in p[:12]: print('   %8.0f %s'%(x,n.replace('smsp__pcsamp_warps_issue_stalled_','')))
PY
  s=$(stat -c %s $R/rep-$1.ncu-rep 2>/dev/null || echo 0); [ "$s" -gt 12000000 ] && rm -f $R/rep-$1.ncu-rep
done
cd $OUT && tar czf q4.tgz q4 && rm -rf q4
