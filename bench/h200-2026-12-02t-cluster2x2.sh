#!/usr/bin/env bash
# Session l, batch t (binaries of `scripts/dev-build.sh .dev/t`): the wgmma family's 2x2
# clusters (CLUSTER_N: the blocks of a cluster row share the A tile by multicast, those
# of a column the B tile, so each block loads half of what it multiplies), planned as a
# class of their own per two-consumer block tile. Batch q: at 1000^3 cuBLAS's kernel
# shares operand loads over clusters of 8 and takes 8.2 us against our 11.1 (64 CTAs,
# no cluster); every tile size we time there is bound by delivering operands (smaller
# tiles, more CTAs, lost: 128x64 13.6 against 128x128 12.6 us in -02e).
# Expected: 128x128 2x2 (16 clusters, 64 CTAs) and 128x64 2x2 (128 CTAs) at 1000^3
# toward ~9-10 us; at 2048x11008x4096 (power-bound) a few % at best.
# Then what batch s was to measure (the read ceiling, the batched rows).
set -u
B=${B:-.dev/t}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export CROSSGEMM_REQUIRE_CUDA=1 CROSSGEMM_REQUIRE_NVRTC=1 CROSSGEMM_COMMIT=$(head -1 $B/COMMIT)
SAN=/usr/local/cuda/bin/compute-sanitizer
R=$OUT/t; mkdir -p $R
cp $B/COMMIT $R/commit.txt
# 1. Correctness of the 2x2 configs: the every-config tests (odd shapes, edges), the
#    persistent loops (many tiles a block) and the batches, then the sanitizers on f16.
export CROSSGEMM_TEST_CONFIGS="cluster 2x2" CROSSGEMM_TEST_DEVICES=cuda:0
CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 150 $B/kernels --test-threads 8 every_planned_config persistent_grids > $R/kernels.log 2>&1; echo "kernels rc=$?"
grep -E "test result|FAILED|panicked" $R/kernels.log | head -6
CROSSGEMM_CACHE_DIR=/tmp/cg-suite timeout 100 $B/batched --test-threads 4 > $R/batched.log 2>&1; echo "batched rc=$?"
grep -E "test result|FAILED|panicked" $R/batched.log | head -6
for tool in memcheck racecheck synccheck; do
  CROSSGEMM_CACHE_DIR=/tmp/cg-san-$tool timeout 80 $SAN --tool $tool --print-limit 20 $B/kernels --test-threads 1 every_planned_config_f16 > $R/san-$tool.log 2>&1; echo "$tool rc=$?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test result" $R/san-$tool.log | head -3
done
unset CROSSGEMM_TEST_CONFIGS CROSSGEMM_TEST_DEVICES
# 2. Every planned candidate at 1000^3 and 2048x11008x4096 (f16, none).
for s in 1000x1000x1000 2048x11008x4096; do
  CROSSGEMM_IGNORE_TABLES=1 CROSSGEMM_CACHE_DIR=/tmp/cg-all timeout 120 $B/crossgemm tune --shape $s --dtype f16 --epilogue none --max 400 --json > $R/tune-all-$s.json 2> $R/tune-all-$s.log; echo "tune all $s rc=$?"
  python3 - $R/tune-all-$s.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = sorted(d["timings"], key=lambda t: t["us"])
print("  timed", len(t), "winner", d.get("best"))
for x in t[:8]:
    print("  %.2f %s" % (x["us"], x["config"]))
for tag in ("cluster 2 ", "cluster 2x2"):
    print("  best with '%s':" % tag.strip())
    for x in [x for x in t if tag in x["config"]][:4]:
        print("    %.2f %s" % (x["us"], x["config"]))
PY
done
# 3. The read ceiling and the batched rows (batch s's script, this folder's binaries).
B=$B bash bench/h200-2026-12-02s-read-ceiling.sh
cd $OUT && tar czf t.tgz t && rm -rf t
