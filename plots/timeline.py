#!/usr/bin/env python3
"""A timeline of a program's last runs on every GPU, from tools/timeline.c's CSV.

Reads:  the CSV scripts/timeline.sh wrote: one row per kernel, copy or memset, with its
        device and stream, and per call of the CUDA runtime and driver APIs on the host,
        start and end in nanoseconds on a clock the host and all GPUs share.
Writes: PNG, one lane for the host's runtime calls, one for its driver calls, one per GPU
        and stream, a bar per activity: NCCL's kernels red, the other kernels blue,
        copies orange, memsets grey, host calls purple and brown. The PNG records the CSV
        it drew in its metadata (plots/provenance.py). Prints how long the host spent in
        CUDA calls per run, and, for each NCCL kernel shown, its blocks, its time and for
        how much of it other kernels ran on the same GPU: the exchange hidden behind
        compute, or not.
Runs:   a program that repeats one layer repeats one marker kernel: NCCL's kernel on the
        first GPU when NCCL ran, else the kernel that ran most often. Run i spans from
        a little before its marker's start (a twentieth of the runs' median period, for
        the work that starts beside it) to the same point of run i + 1. The plot shows
        --runs whole runs (default 2), the last ones before the last marker.
Exit codes: 0 done; 2 a missing or unreadable CSV, too few runs, or a PNG that cannot
        be written (one line on stderr, nothing written).

    python3 plots/timeline.py TRACE.csv OUT.png [--runs N] [--title TEXT]
"""
import argparse
import csv
import statistics
import sys
from collections import Counter
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

import provenance  # noqa: E402  (plots/ is on the path)

COLUMNS = ("device", "stream", "kind", "name", "start_ns", "end_ns", "bytes", "blocks")
COLOURS = {"nccl": "tab:red", "kernel": "tab:blue", "copy": "tab:orange", "memset": "tab:grey",
           "runtime": "tab:purple", "driver": "tab:brown"}
LABELS = {"nccl": "NCCL kernel", "kernel": "kernel", "copy": "copy", "memset": "memset",
          "runtime": "runtime API call", "driver": "driver API call"}
HOST = ("runtime", "driver")  # the kinds of a host call (device -1)


class Refusal(Exception):
    """A reason to stop with exit 2; the message names the file."""


def category(row):
    if row["kind"] == "kernel" and "nccl" in row["name"].lower():
        return "nccl"
    return row["kind"]


def read_trace(path):
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            if tuple(reader.fieldnames or ()) != COLUMNS:
                raise Refusal(f"{path}: not a timeline CSV (its header is not "
                              f"{','.join(COLUMNS)})")
            rows = []
            for row in reader:
                rows.append({"device": int(row["device"]), "stream": int(row["stream"]),
                             "kind": row["kind"], "name": row["name"],
                             "start": int(row["start_ns"]), "end": int(row["end_ns"]),
                             "blocks": int(row["blocks"])})
    except OSError as e:
        raise Refusal(f"{path}: {e.strerror}") from None
    except (ValueError, KeyError, TypeError):
        raise Refusal(f"{path}: a row that is not a timeline row") from None
    for row in rows:
        row["category"] = category(row)
    return rows


def marker_starts(rows):
    """The starts of the marker kernel (see Runs above), in order, and its name."""
    first = min((r["device"] for r in rows if r["device"] >= 0), default=0)
    nccl = [r for r in rows if r["category"] == "nccl" and r["device"] == first]
    if nccl:
        return sorted(r["start"] for r in nccl), "NCCL's kernel"
    counts = Counter(r["name"] for r in rows if r["kind"] == "kernel")
    if not counts:
        return [], "a kernel"
    name = counts.most_common(1)[0][0]
    return sorted(r["start"] for r in rows if r["name"] == name), name


def window(rows, runs):
    starts, marker = marker_starts(rows)
    if len(starts) < runs + 1:
        raise Refusal(f"{len(starts)} runs of {marker} in the trace; {runs + 1} needed "
                      f"(--runs {runs} and the last one)")
    period = statistics.median(b - a for a, b in zip(starts, starts[1:]))
    lead = period / 20
    return starts[-1 - runs] - lead, starts[-1] - lead, period


def covered(spans, start):
    """Nanoseconds the union of the (a, b) spans covers, none before start."""
    total, reach = 0, start
    for a, b in sorted(spans):
        a = max(a, reach)
        if b > a:
            total += b - a
            reach = b
    return total


def busy_beside(rows, nccl):
    """Nanoseconds of nccl's span during which another kernel ran on its GPU."""
    return covered(((max(r["start"], nccl["start"]), min(r["end"], nccl["end"]))
                    for r in rows
                    if r["device"] == nccl["device"] and r["kind"] == "kernel"
                    and r["category"] != "nccl" and r["start"] < nccl["end"]
                    and r["end"] > nccl["start"]), nccl["start"])


def lane(row):
    """A host call's lane is its API's; a GPU activity's, its device and stream."""
    return (-1, HOST.index(row["kind"])) if row["device"] < 0 else (row["device"], row["stream"])


def lane_label(key):
    return f"host, {HOST[key[1]]} API" if key[0] < 0 else f"GPU {key[0]}, stream {key[1]}"


def draw(rows, t0, t1, out, title, source):
    shown = [r for r in rows if r["end"] > t0 and r["start"] < t1]
    lanes = sorted({lane(r) for r in shown})
    lane_of = {lane: i for i, lane in enumerate(lanes)}
    height = 0.55 * len(lanes) + 1.6  # inches
    fig, ax = plt.subplots(figsize=(11, height))
    for r in shown:
        a, b = max(r["start"], t0), min(r["end"], t1)
        y = lane_of[lane(r)]
        ax.broken_barh([((a - t0) / 1e3, (b - a) / 1e3)], (y - 0.35, 0.7),
                       facecolors=COLOURS.get(r["category"], "black"), edgecolor="white",
                       linewidth=0.3)
    ax.set_yticks(range(len(lanes)), [lane_label(key) for key in lanes])
    ax.invert_yaxis()
    ax.set_xlim(0, (t1 - t0) / 1e3)
    ax.set_xlabel("microseconds")
    ax.grid(True, axis="x", alpha=0.3)
    present = [c for c in COLOURS if any(r["category"] == c for r in shown)]
    fig.legend(handles=[Patch(color=COLOURS[c], label=LABELS[c]) for c in present],
               loc="lower center", ncol=len(present), frameon=False)
    ax.set_title(title)
    fig.tight_layout(rect=(0, 0.35 / height, 1, 1))
    tmp = out.with_name(out.name + ".tmp.png")
    fig.savefig(tmp, dpi=110, metadata=provenance.metadata(__file__, [source]))
    tmp.replace(out)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trace", type=Path)
    parser.add_argument("png", type=Path)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--title", default=None)
    args = parser.parse_args()
    try:
        if args.runs < 1:
            raise Refusal(f"--runs {args.runs}: at least 1")
        if not args.png.parent.is_dir():
            raise Refusal(f"{args.png}: no folder {args.png.parent}")
        rows = read_trace(args.trace)
        t0, t1, period = window(rows, args.runs)
    except Refusal as e:
        print(f"timeline.py: {e}", file=sys.stderr)
        return 2
    print(f"{args.runs} runs of {period / 1e3:.1f} us (median period), "
          f"{(t1 - t0) / 1e3:.1f} us shown")
    host = covered(((max(r["start"], t0), min(r["end"], t1)) for r in rows
                    if r["kind"] == "runtime" and r["end"] > t0 and r["start"] < t1), t0)
    print(f"host in CUDA runtime calls: {host / 1e3 / args.runs:.1f} us per run")
    for nccl in sorted((r for r in rows if r["category"] == "nccl" and t0 <= r["start"] < t1),
                       key=lambda r: (r["start"], r["device"])):
        span = nccl["end"] - nccl["start"]
        beside = busy_beside(rows, nccl)
        print(f"GPU {nccl['device']} at {(nccl['start'] - t0) / 1e3:8.1f} us: NCCL kernel "
              f"({nccl['blocks']} blocks) {span / 1e3:.1f} us, other kernels beside it "
              f"{beside / 1e3:.1f} us "
              f"({100 * beside / span if span else 0:.0f} %)")
    title = args.title or f"{args.trace.name}: the last {args.runs} runs"
    draw(rows, t0, t1, args.png, title, provenance.source(args.trace))
    print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
