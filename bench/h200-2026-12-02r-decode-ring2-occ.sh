#!/usr/bin/env bash
# Session l, batch r (binaries of `scripts/dev-build.sh .dev/r`): two more tries at the
# decode shapes after batch q's counters (1x12288x4096: DRAM 74% of peak, 3.55 TB/s,
# 2 blocks an SM by registers, 2.91 waves, 79% of warp cycles waiting on loads;
# 16x4096x4096: DRAM 57%, 0.97 waves).
# 1. The ring again, its parts taking runs of `unroll` consecutive chunks as the register
#    walk does (batch p's ring took single chunks KW apart: a confound, each warp using
#    64 of the L2's 256-byte fetch).
# 2. 24 warps an SM for the 8-row tiles (launch bounds: 80 registers, 3 blocks of 8
#    warps): 50% more loads in flight per SM, 1.94 waves instead of 2.91 at N = 12288.
# Expected: if loads in flight limit the 8-row tiles, 1x12288x4096 from ~31.6 toward
# ~29 us; the ring v2 within 2% of the register walk or better.
set -u
B=${B:-.dev/r}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
SAN=/usr/local/cuda/bin/compute-sanitizer
R=$OUT/r; mkdir -p $R
cp $B/COMMIT $R/commit.txt
CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 60 $B/kernels --test-threads 4 decode_configs f16_layouts > $R/kernels.log 2>&1; echo "kernels rc=$?"
grep -E "test result|FAILED|panicked" $R/kernels.log | head -5
CROSSGEMM_TEST_DEVICES=cuda:0 CROSSGEMM_CACHE_DIR=/tmp/cg-san timeout 100 $SAN --tool memcheck --print-limit 20 $B/kernels --test-threads 1 decode_configs_give_the_same_bits_twice > $R/san-decode-memcheck.log 2>&1; echo "decode memcheck rc=$?"
grep -E "ERROR SUMMARY|test result" $R/san-decode-memcheck.log
for s in 1x12288x4096 1x4096x11008 16x4096x4096 16x12288x4096; do
  CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-t timeout 60 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --max 64 --json > $R/tune-$s.json 2> $R/tune-$s.log; echo "tune $s rc=$?"
  python3 - $R/tune-$s.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = sorted(d["timings"], key=lambda t: t["us"])
for x in t[:5]:
    print("  %.2f %s" % (x["us"], x["config"]))
def best(f):
    b = [x for x in t if "decode" in x["config"] and f(x["config"])]
    return "%.2f (%s)" % (b[0]["us"], b[0]["config"]) if b else "none"
print("  ring", best(lambda c: "ring" in c))
print("  sm_warps 24", best(lambda c: "sm_warps" in c))
print("  register walk", best(lambda c: "ring" not in c and "sm_warps" not in c))
PY
done
cd $OUT && tar czf r.tgz r && rm -rf r
