#!/usr/bin/env python3
"""Lesson 04's crossover: naive vs constant memory vs the three tilings over filter sizes.

Reads:  a bench CSV (default results/h200/bench.csv), the rows of lessons 02, 03 and 04
        on one 8192x8192 image (presets big3/big5/big7 and `custom` rows with ksize 9..15).
        When a row was measured several times, the last wins.
Writes: docs/img/04_crossover.png: left, median time per kernel against the filter size;
        right, each kernel's speed-up over the naive kernel (02 block32x8), so a crossing
        of two lines is a crossover. The PNG records the CSV rows it read, those of
        lessons 02-04, in its metadata (plots/provenance.py).
Exit codes: 0 done; 2 the CSV is missing or lacks a row the chart needs.

    python3 plots/04_crossover.py [CSV]
"""
import csv
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only
import matplotlib.pyplot as plt  # noqa: E402

import provenance  # noqa: E402  (plots/ is on the path)

sys.path.insert(0, str(Path(__file__).resolve().parent / "diagrams"))
from diagram import save  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CSV = REPO / "results" / "h200" / "bench.csv"
SIDE = 8192
KSIZES = (3, 5, 7, 9, 11, 13, 15)
NAIVE = ("02_gpu_naive", "block32x8")
# (lesson, variant, legend label, colour, marker, line style)
KERNELS = (
    (*NAIVE, "02 naive (block32x8)", "tab:grey", "o", "-"),
    ("03_constant_memory", "const_unrolled", "03 constant memory, unrolled", "tab:blue", "s", "-"),
    ("04_shared_tiling", "tile_in", "04 tile_in", "tab:orange", "^", "--"),
    ("04_shared_tiling", "tile_out", "04 tile_out", "tab:green", "D", "--"),
    ("04_shared_tiling", "tile_cached_halo", "04 tile_cached_halo (the seed's design)",
     "tab:red", "v", "--"),
)


def read_times(path):
    """{(lesson, variant, ksize): median ms} of the PASS rows on SIDE x SIDE images, and
    the device of the naive kernel's rows."""
    times, device = {}, "unknown device"
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if (row["status"] == "PASS" and row["n"] == "1" and row["cin"] == "1"
                    and int(row["h"]) == SIDE and int(row["w"]) == SIDE):
                times[(row["lesson"], row["variant"], int(row["ksize"]))] = float(row["median_ms"])
                if (row["lesson"], row["variant"]) == NAIVE:
                    device = row["device"]
    return times, device


def series(times, lesson, variant):
    try:
        return [times[(lesson, variant, k)] for k in KSIZES]
    except KeyError as missing:
        sys.exit(f"04_crossover.py: no PASS row {missing} at {SIDE}x{SIDE}")


def main():
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CSV
    if not path.is_file():
        print(f"04_crossover.py: {path}: no such file", file=sys.stderr)
        return 2
    times, device = read_times(path)
    naive = series(times, *NAIVE)
    fig, (ax_t, ax_s) = plt.subplots(1, 2, figsize=(11, 4.4))
    for lesson, variant, label, colour, marker, style in KERNELS:
        ms = series(times, lesson, variant)
        ax_t.plot(KSIZES, ms, marker=marker, linestyle=style, color=colour, label=label)
        ax_s.plot(KSIZES, [n / t for n, t in zip(naive, ms)], marker=marker,
                  linestyle=style, color=colour)
    ax_t.set_yscale("log")
    ax_t.set_ylabel("median time, ms (log scale)")
    ax_t.set_title(f"time per {SIDE}x{SIDE} image")
    ax_s.set_ylabel("speed-up over 02 naive (higher is faster)")
    ax_s.set_title("where the lines cross, the order changes")
    ax_s.axhline(1.0, color="black", linewidth=0.6)
    for ax in (ax_t, ax_s):
        ax.set_xticks(KSIZES)
        ax.set_xlabel("filter size k (k x k)")
        ax.grid(True, which="major", alpha=0.3)
    fig.legend(loc="lower center", ncol=3, frameon=False)
    fig.suptitle(f"Lessons 02-04 on one {SIDE}x{SIDE} image, {device} "
                 f"({path.parent.name}/{path.name})")
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    lessons = sorted({lesson for lesson, *_ in KERNELS})
    save(fig, "04_crossover.png",
         metadata=provenance.metadata(__file__, [provenance.source(path, {"lesson": lessons})]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
