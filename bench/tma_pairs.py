"""Pairs each config of a `crossgemm tune --json` with its twin (the same text plus
" tmastore", or with `--mark storers` " storers") and prints how they compare: the best
of each kind, the pairs among the fastest, and the candidates that failed (with why).
Used by the session p (TMA store) and q (storer warps) batches.

    python3 bench/tma_pairs.py [--mark storers] tune.json [more.json ...]
"""
import json
import sys


def main(paths, mark="tmastore"):
    for path in paths:
        d = json.load(open(path))
        t = {x["config"]: x["us"] for x in d.get("timings", [])}
        plain = {c: us for c, us in t.items() if mark not in c}
        tma = {c.replace(" " + mark, ""): us for c, us in t.items() if mark in c}
        print(f"{path}: {len(t)} timed ({len(tma)} {mark})")
        if plain:
            c = min(plain, key=plain.get)
            print(f"  best plain  {plain[c]:9.2f} us  {c}")
        if tma:
            c = min(tma, key=tma.get)
            print(f"  best {mark:9} {tma[c]:9.2f} us  {c} {mark}")
        pairs = sorted((min(plain[c], tma[c]), c) for c in plain if c in tma)
        ratios = [plain[c] / tma[c] for _, c in pairs]
        if ratios:
            ratios.sort()
            print(f"  {len(ratios)} pairs, plain/{mark}: median {ratios[len(ratios) // 2]:.3f}, "
                  f"min {ratios[0]:.3f}, max {ratios[-1]:.3f}")
        for _, c in pairs[:8]:
            print(f"    {plain[c]:9.2f} -> {tma[c]:9.2f} us ({plain[c] / tma[c]:.3f}x)  {c}")
        print(f"  winner: {d.get('best')}")
        for x in d.get("final_round", []):
            print(f"    final round {x['us']:9.2f} us  {x['config']}")
        for f in d.get("failed", []):
            print(f"  FAILED {f['config']} ({f['stage']}): {f['reason'][:300]}")


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--mark"]:
        main(args[2:], args[1])
    else:
        main(args)
