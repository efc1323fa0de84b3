#!/usr/bin/env python3
"""The rows of `crossgemm bench` reports (their JSON), one line each, and a summary per
dtype: what a batch's log shows of a bench run without the markdown's width.

Usage: rows.py REPORT.json [REPORT.json ...]
Each row: shape, dtype, epilogue, ours in µs, ×cuBLAS, ×cuBLASLt, the config (its common
suffixes cut) and `WRONG` where a side's output was over its error limit. Each dtype's
summary: the geometric mean of ×cuBLAS and of ×cuBLASLt over its rows that have them,
the lowest, and how many round to 1.00 or more. A file that does not parse prints its
name and why, so that a batch's log says what is missing.
"""
import json
import math
import sys
from collections import defaultdict


def short(config):
    for cut in (" cluster 1", " inflight 0", " inflight 1", " group 8", "wgmma "):
        config = config.replace(cut, "")
    return config


def ratio(v):
    return f"{v:.2f}x" if v else "-"


def summary(label, values):
    if not values:
        return f"  {label}: no rows"
    g = math.exp(sum(map(math.log, values)) / len(values))
    at_par = sum(round(v, 2) >= 1.0 for v in values)
    return f"  {label}: geomean {g:.3f} over {len(values)} rows, lowest {min(values):.2f}, {at_par} at 1.00x or more"


def report(path):
    try:
        rows = json.load(open(path))["rows"]
    except Exception as e:  # a bench that ran past its limit writes no report
        print(f"{path}: no report ({e})")
        return
    print(path)
    by_dtype = defaultdict(list)
    for r in rows:
        by_dtype[r["dtype"]].append(r)
        wrong = " WRONG " + ",".join(r.get("wrong_sides") or []) if r.get("wrong") else ""
        print(
            f"{r['m']}x{r['n']}x{r['k']:<6} {r['dtype']:4} {r['epilogue']:9} {r['ours_us']:9.1f} "
            f"{ratio(r.get('speedup_vs_cublas')):>6} {ratio(r.get('speedup_vs_cublaslt')):>6}  {short(r.get('config') or '')}{wrong}"
        )
    for dtype, rs in by_dtype.items():
        print(dtype)
        print(summary("x cuBLAS", [r["speedup_vs_cublas"] for r in rs if r.get("speedup_vs_cublas")]))
        print(summary("x cuBLASLt", [r["speedup_vs_cublaslt"] for r in rs if r.get("speedup_vs_cublaslt")]))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        report(p)
