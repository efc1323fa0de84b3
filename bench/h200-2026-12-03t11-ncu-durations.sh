#!/usr/bin/env bash
# Session t, batch t11 (.dev/s1old: the CLI at e461622).
# t7-t10 found the M = 128 kernels at parity with cuBLAS inside the kernel, the bench's
# times 6-8 us longer than the kernels' durations for both. The same question for the
# rows whose targets are furthest: 4096x4096x128 (1.05x; 1.2x is 14.0 us) and
# 16x4096x4096 (1.13x f16): each side's kernel duration in the bench's own runs (Nsight
# Compute, one metric, caches and clocks left alone, every launch of a `bench` of the row
# with the s6 winner named), against the bench's times between events.
# Written before: ours and cuBLAS's kernels 3-6 us under their bench times at both
# shapes, the ratio of durations close to the bench's ratio.
B=.dev/s1old
source bench/lib.sh t11
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
K128="$(cfg 64 128 128 6 2 false 1 ,\"pingpong\":true)"
DEC='{"family":"decode","mt":2,"nt":1,"warps":8,"kw":8,"unroll":4,"rot":true}'
row() { # name shape config
  timeout 200 $NCU --cache-control none --clock-control none --metrics gpu__time_duration.sum -c 200 $B/crossgemm bench --cache-dir /tmp/cg-t11-$1 --shape $2 --dtypes f16 --epilogues none --config "$3" --out $R --name $1 > $R/ncu-$1.txt 2>&1; echo "$1 rc=$?"
  python3 - $R/ncu-$1.txt <<'PY'
import re, sys, statistics
name, d = None, {}
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"\s\s(\S+)\s\(\d+, \d+, \d+\)x\(\d+, \d+, \d+\)", line)
    if m: name = m.group(1)[:60]
    m = re.search(r"gpu__time_duration.sum\s+(\S+)\s+([\d.,]+)", line)
    if m and name:
        v = float(m.group(2).replace(",", "")); v = v / 1000 if m.group(1) == "ns" else v * 1000 if m.group(1) == "ms" else v
        d.setdefault(name, []).append(v)
for k, v in d.items():
    print(f"  {k}: {len(v)} launches, median {statistics.median(v):.2f} us, min {min(v):.2f}")
PY
  grep -E "^\| [0-9]" $R/$1.md | head -2
}
row k128 4096x4096x128 "$K128"
row m16 16x4096x4096 "$DEC"
finish
