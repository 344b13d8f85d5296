#!/usr/bin/env python3
"""Check that the cuDNN rows of one problem agree across the lessons of one sweep.

Every lesson times cuDNN on its problems with the same protocol; the rows of one
problem, precision and layout must agree within --limit (default 10%) of the
fastest. Prints one line per problem (rows, fastest, slowest, spread, algorithms)
and exits 1 if any spread is over the limit, 2 if the CSV cannot be read.

    python3 scripts/cudnn_spread.py build/gpu-check-work/bench.csv
"""
import argparse
import collections
import csv
import sys


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("csv")
    p.add_argument("--limit", type=float, default=0.10)
    args = p.parse_args(argv)
    try:
        with open(args.csv, newline="") as f:
            rows = [r for r in csv.DictReader(f) if r["variant"] == "cudnn" and r["median_ms"]]
    except (OSError, KeyError) as e:
        print(f"error: {args.csv}: {e}", file=sys.stderr)
        return 2
    groups = collections.defaultdict(list)
    for r in rows:
        key = (r["preset"], r["n"], r["cin"], r["cout"], r["h"], r["w"], r["ksize"], r["dtype"],
               r["layout"])
        groups[key].append(r)
    worst = 0.0
    for key, group in groups.items():
        times = [float(r["median_ms"]) for r in group]
        spread = max(times) / min(times) - 1
        worst = max(worst, spread if len(group) > 1 else 0.0)
        algos = sorted({r["params"].split(";")[0] for r in group})
        name = key[0] if key[0] != "custom" else f"{key[4]}x{key[5]} k={key[6]}"
        print(f"{name:22s} {key[7]:5s} {key[8]:4s} {len(group):2d} rows  {min(times):9.4f} .. "
              f"{max(times):9.4f} ms  spread {100 * spread:5.1f}%  {' '.join(algos)}")
    print(f"largest spread {100 * worst:.1f}% (limit {100 * args.limit:.0f}%)")
    return 1 if worst > args.limit else 0


if __name__ == "__main__":
    sys.exit(main())
