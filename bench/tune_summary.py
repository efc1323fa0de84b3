#!/usr/bin/env python3
"""One line per `crossgemm tune --json` output: the label, then every timed config with
its median (the final round's where it ran, else the first pass's), fastest first.

Usage: tune_summary.py LABEL FILE.json [LABEL FILE.json ...]
A file that is not a tune's JSON prints its label, `failed` and the end of FILE's .err
neighbour (the tune's stderr), so that a batch's log says why.
"""
import json
import sys


def short(config):
    for cut in (" inflight 0 group 8", " inflight 1 group 8", "wgmma "):
        config = config.replace(cut, "")
    return config


def line(label, path):
    try:
        d = json.load(open(path))
    except Exception as e:  # a failed tune writes no JSON: show its stderr instead
        try:
            err = open(path.rsplit(".", 1)[0] + ".err").read()[-400:]
        except OSError:
            err = ""
        return f"{label} failed ({e}) {err}"
    t = {x["config"]: x["us"] for x in d.get("timings", [])}
    t.update({x["config"]: x["us"] for x in d.get("final_round", [])})
    ranked = sorted(t.items(), key=lambda kv: kv[1])
    return f"{label} | " + " | ".join(f"{short(c)} {u:.2f}" for c, u in ranked)


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or len(args) % 2:
        sys.exit(__doc__)
    for label, path in zip(args[::2], args[1::2]):
        print(line(label, path))
