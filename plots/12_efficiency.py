#!/usr/bin/env python3
"""Lesson 12's efficiency against the image's size: one 64 -> 64 image split over the GPUs.

Reads:  a bench CSV of lesson 12 (default results/h200x2/bench.csv), its `custom` rows
        of batch 1, 64 -> 64 channels, 3x3, square images; for each side, the one_gpu
        row and the splits' rows of the same run.
Writes: docs/img/12_efficiency.png: left, median time against the side for one GPU and
        each split; right, each split's efficiency T1 / (N x TN) (the CSV's
        `efficiency` param), with 1/N marked: below it the GPUs together are slower than
        one, the crossover. The PNG records the CSV rows it read, lesson 12's, in its
        metadata (plots/provenance.py).
Exit codes: 0 done; 2 the CSV is missing or has no such rows.

    python3 plots/12_efficiency.py [CSV]
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
DEFAULT_CSV = REPO / "results" / "h200x2" / "bench.csv"
LESSON = "12_multi_gpu"
# (variant, colour, marker, line style); batch_split is left out: one image does not
# split by batch.
KERNELS = (
    ("one_gpu", "tab:grey", "o", "-"),
    ("rows_blocking", "tab:blue", "s", "-"),
    ("rows_overlap", "tab:green", "D", "--"),
    ("peer_copy", "tab:orange", "^", "-."),
)


def params(text):
    return dict(p.split("=", 1) for p in text.split(";") if "=" in p)


def read_rows(path):
    """{variant: {side: (median ms, efficiency or None)}}, the GPU count and device."""
    rows, gpus, device = {}, None, "unknown device"
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if (row["lesson"] != LESSON or row["preset"] != "custom" or row["status"] != "PASS"
                    or row["n"] != "1" or row["cin"] != "64" or row["cout"] != "64"
                    or row["ksize"] != "3" or row["h"] != row["w"]):
                continue
            p = params(row["params"])
            gpus = int(p["gpus"]) if "gpus" in p else gpus
            efficiency = float(p["efficiency"]) if "efficiency" in p else None
            side = int(row["h"])
            rows.setdefault(row["variant"], {})[side] = (float(row["median_ms"]), efficiency)
            device = row["device"]
    return rows, gpus, device


def main():
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CSV
    if not path.is_file():
        print(f"12_efficiency.py: {path}: no such file", file=sys.stderr)
        return 2
    rows, gpus, device = read_rows(path)
    if "one_gpu" not in rows or gpus is None:
        print(f"12_efficiency.py: {path}: no one_gpu rows of one 64 -> 64 image",
              file=sys.stderr)
        return 2
    fig, (ax_t, ax_e) = plt.subplots(1, 2, figsize=(11, 4.4))
    for variant, colour, marker, style in KERNELS:
        if variant not in rows:
            continue
        sides = sorted(rows[variant])
        ax_t.plot(sides, [rows[variant][s][0] for s in sides], marker=marker,
                  linestyle=style, color=colour, label=variant)
        if variant != "one_gpu":
            ax_e.plot(sides, [rows[variant][s][1] for s in sides], marker=marker,
                      linestyle=style, color=colour)
    ax_t.set_yscale("log")
    ax_t.set_ylabel("median time, ms (log scale)")
    ax_t.set_title("time per image")
    ax_e.axhline(1.0 / gpus, color="black", linewidth=0.8)
    sides = sorted(rows["one_gpu"])
    ax_e.text(sides[-1], 1.0 / gpus, f"1/{gpus}: as fast as one GPU", ha="right",
              va="bottom", fontsize=8)
    # Above 1 where the one-GPU median ran slow (the time of one run, not a speed-up past N).
    efficiencies = [e for v, runs in rows.items() if v != "one_gpu" for _, e in runs.values()
                    if e is not None]
    ax_e.set_ylim(0, max([1.0] + [1.05 * e for e in efficiencies]))
    ax_e.set_ylabel(f"efficiency T1 / ({gpus} x T{gpus})")
    ax_e.set_title("below the line, one GPU is faster: the crossover")
    for ax in (ax_t, ax_e):
        ax.set_xscale("log", base=2)
        ax.set_xticks(sides, [str(s) for s in sides])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_xlabel("image side (one image, 64 -> 64 channels, 3x3, fp16 NHWC)")
        ax.grid(True, which="major", alpha=0.3)
    fig.legend(loc="lower center", ncol=len(KERNELS), frameon=False)
    fig.suptitle(f"Lesson 12 on {gpus} x {device} ({path.parent.name}/{path.name})")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    save(fig, "12_efficiency.png",
         metadata=provenance.metadata(__file__, [provenance.source(path, {"lesson": [LESSON]})]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
