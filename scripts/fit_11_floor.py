#!/usr/bin/env python3
"""Lesson 11's per-frame floor, estimated from committed results (no GPU needed).

    python3 scripts/fit_11_floor.py [RESULTS_DIR] > results/h200/11_floor_fit.txt

RESULTS_DIR is results/h200 by default. Reads
  RESULTS_DIR/11_frames.csv        each variant's median time per frame (harness --frames-csv)
  RESULTS_DIR/bench.csv            the rows of 11_delta (default threshold, both presets)
  RESULTS_DIR/11_sweep.csv         the rows of the threshold / tile / pan / channel sweep
  results/cpu/11_change_mask.txt   mask_picture's share of output tiles recomputed per frame
and prints
  1. per variant, a least-squares line through frames 1..23 of vtest-c64 at the defaults:
     time = floor + slope x (share of 8x8 units recomputed on that frame), with R^2 and the
     largest residual; the floor is the line's value at a share of 0, an extrapolation;
  2. per row of bench.csv and 11_sweep.csv, what is left of the median when the share of
     units it updated (params' recomputed=) is charged at the dense row's median of the
     same run: median - share x dense. The same idea as the intercept, from one row.
Standard library only.
"""
import csv
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = ("dense", "tile_mask", "delta_update", "delta_compact")
DEFAULT = "threshold=0.02;tile=8;pan=0"


def shares_per_frame(path):
    """frame -> share of output tiles recomputed, from mask_picture's printed table."""
    shares = {}
    for line in path.read_text().splitlines():
        m = re.match(r"\s*(\d+)\s+\d+\s+[\d.]+%\s+[\d.]+%\s+([\d.]+)%\s*$", line)
        if m:
            shares[int(m.group(1))] = float(m.group(2)) / 100
    return shares


def line_fit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    slope = sxy / sxx
    floor = my - slope * mx
    residuals = [y - floor - slope * x for x, y in zip(xs, ys)]
    total = sum((y - my) ** 2 for y in ys)
    r2 = 1 - sum(r * r for r in residuals) / total if total else float("nan")
    return floor, slope, r2, max(abs(r) for r in residuals)


def params_of(row):
    return dict(p.split("=", 1) for p in row["params"].split(";") if "=" in p)


def run_key(row):
    """Rows of one run: same preset, channels and flags (without recomputed=)."""
    p = params_of(row)
    p.pop("recomputed", None)
    return (row["preset"], row["cin"], row["h"], row["w"], tuple(sorted(p.items())))


def main():
    results = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "results" / "h200"
    mask_txt = ROOT / "results" / "cpu" / "11_change_mask.txt"
    shares = shares_per_frame(mask_txt)
    frames = [r for r in csv.DictReader(open(results / "11_frames.csv", newline=""))
              if r["preset"] == "vtest-c64" and r["params"].startswith(DEFAULT)
              and r["frame"] != "0" and r["median_ms"]]
    commits = sorted({r["commit"] for r in frames})
    print(f"# lesson 11: the per-frame floor, from {results.relative_to(ROOT)}/11_frames.csv "
          f"(commit {', '.join(commits)}) and {mask_txt.relative_to(ROOT)}")
    print(f"# made by: python3 scripts/fit_11_floor.py")
    print("#")
    print("# 1. vtest-c64 at the defaults (threshold 0.02, 8x8 tiles), frames 1..23, each frame's")
    print("#    median ms against its share of units recomputed (mask_picture):")
    print("#    time = floor + slope x share, least squares")
    dense_ms = None
    print(f"{'variant':<15}{'frames':>7}{'floor ms':>10}{'slope ms':>10}{'R^2':>8}"
          f"{'max resid ms':>14}")
    fits = {}
    for v in VARIANTS:
        pts = [(shares[int(r["frame"])], float(r["median_ms"])) for r in frames
               if r["variant"] == v]
        floor, slope, r2, worst = line_fit(*zip(*pts))
        fits[v] = (floor, slope)
        if v == "dense":
            dense_ms = sum(y for _, y in pts) / len(pts)
        print(f"{v:<15}{len(pts):>7}{floor:>10.4f}{slope:>10.4f}{r2:>8.3f}{worst:>14.4f}")
    print(f"# dense's mean over the same frames: {dense_ms:.4f} ms; each sparse slope over it: " +
          ", ".join(f"{v} {fits[v][1] / dense_ms:.3f}" for v in VARIANTS[1:]))
    print("#")
    print("# 2. every row of bench.csv (11_delta) and 11_sweep.csv: median - share x dense, where")
    print("#    share is the row's recomputed= and dense the dense row's median of the same run")
    rows = []
    for name in ("bench.csv", "11_sweep.csv"):
        rows += [(name, r) for r in csv.DictReader(open(results / name, newline=""))
                 if r["lesson"] == "11_delta"]
    dense = {run_key(r): float(r["median_ms"]) for _, r in rows if r["variant"] == "dense"}
    print(f"{'file':<13}{'preset':<11}{'C':>4} {'flags':<30}{'variant':<15}{'share':>7}"
          f"{'median ms':>11}{'dense ms':>10}{'left ms':>9}")
    for name, r in rows:
        if r["variant"] == "dense":
            continue
        p = params_of(r)
        share = float(p["recomputed"])
        d = dense[run_key(r)]
        left = float(r["median_ms"]) - share * d
        flags = f"threshold={p['threshold']};tile={p['tile']};pan={p['pan']}"
        print(f"{name:<13}{r['preset']:<11}{r['cin']:>4} {flags:<30}{r['variant']:<15}"
              f"{share:>7.4f}{float(r['median_ms']):>11.4f}{d:>10.4f}{left:>9.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
