#!/usr/bin/env python3
"""Plot a sequence op's rows per frame (lesson 11's --frames-csv) as one PNG per problem.

Reads:  a CSV with the harness's frame header (common/measure/report.h, FRAME_CSV_HEADER).
Writes: into --out, <slug of the GPU>_<lesson>_<preset>_<slug of the flags>_frames.png: time per frame
        (top) and relative error against the float64 conv(x_t) per frame (bottom), one line
        per variant. Frame 0 is computed densely and not timed: it has no time. When a
        variant was run several times on a problem, the last run wins. Each PNG records
        the CSV rows it read, those of its lesson, device and preset (all flags), in its
        metadata (plots/provenance.py). With --shown-in DIR only the charts a Markdown
        page under DIR shows (img/NAME.png) are written.
Exit codes: 0 done; 2 the CSV is missing, has another header or a malformed row, or
--out cannot be written (one line on stderr naming the file).

    python3 plots/plot_frames.py FRAMES_CSV [--out DIR] [--shown-in PAGES_DIR]
"""
import argparse
import collections
import csv
import os
import re
import sys

import provenance  # stdlib only, like this script until matplotlib is needed

HEADER = ("lesson,variant,preset,device,frame,median_ms,min_ms,rel_err,max_abs_err,status,"
          "commit,params").split(",")
DPI = 110


def fail(message):
    print(f"plot_frames.py: {message}", file=sys.stderr)
    return 2


def number(text):
    return float(text) if text else None


def read_runs(path):
    """{(lesson, device, preset, params without the variant's own keys): {variant: [rows]}}."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows or rows[0] != HEADER:
        raise ValueError(f"{path}: not a frames CSV (expected the header {','.join(HEADER)})")
    runs = collections.OrderedDict()
    for line, fields in enumerate(rows[1:], start=2):
        if len(fields) != len(HEADER):
            raise ValueError(f"{path}:{line}: {len(fields)} fields, expected {len(HEADER)}")
        row = dict(zip(HEADER, fields))
        try:
            row["frame"] = int(row["frame"])
            row["median_ms"] = number(row["median_ms"])
            row["rel_err"] = number(row["rel_err"])
        except ValueError:
            raise ValueError(f"{path}:{line}: a frame, time or error that is not a number")
        shared = ";".join(p for p in row["params"].split(";") if not p.startswith("recomputed="))
        key = (row["lesson"], row["device"], row["preset"], shared)
        variants = runs.setdefault(key, collections.OrderedDict())
        frames = variants.setdefault(row["variant"], [])
        if frames and row["frame"] <= frames[-1]["frame"]:
            frames.clear()  # a later run of the same variant: the last wins
        frames.append(row)
    return runs


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "unknown"


def chart(plt, key, variants):
    lesson, device, preset, params = key
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for name, frames in variants.items():
        timed = [r for r in frames if r["median_ms"] is not None]
        top.plot([r["frame"] for r in timed], [r["median_ms"] for r in timed], marker="o",
                 markersize=3, label=name)
        checked = [r for r in frames if r["rel_err"] is not None and r["rel_err"] > 0]
        bottom.plot([r["frame"] for r in checked], [r["rel_err"] for r in checked], marker="o",
                    markersize=3, label=name)
    top.set_ylabel("time per frame (ms)")
    top.set_ylim(bottom=0)
    top.set_title(f"{lesson} {preset} ({params}) on {device}", fontsize=9)
    top.legend(fontsize=8)
    bottom.set_yscale("log")
    bottom.set_ylabel("relative error vs conv(x_t), float64")
    bottom.set_xlabel("frame (frame 0 dense, untimed)")
    for ax in (top, bottom):
        ax.grid(True, alpha=0.3)
    return fig


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--out", default="docs/img")
    provenance.add_shown_in(parser)
    args = parser.parse_args()
    try:
        runs = read_runs(args.csv)
    except OSError as e:
        return fail(f"cannot read {args.csv}: {e.strerror or e}")
    except ValueError as e:
        return fail(str(e))
    shown = provenance.shown_images(args.shown_in)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    for key, variants in runs.items():
        lesson, device, preset, params = key
        name = f"{slug(device)}_{lesson}_{preset}_{slug(params)}_frames.png"
        if shown is not None and name not in shown:
            continue
        target = os.path.join(args.out, name)
        tmp = os.path.join(args.out, f".{name}.{os.getpid()}.tmp")
        # The flags are not a plain column value (a run adds recomputed=...): the record
        # names all the rows of the lesson, device and preset, a few more than drawn.
        where = {"lesson": [lesson], "device": [device], "preset": [preset]}
        try:
            info = provenance.metadata(__file__, [provenance.source(args.csv, where)])
        except provenance.ProvenanceError as e:
            return fail(str(e))
        fig = chart(plt, key, variants)
        try:
            os.makedirs(args.out, exist_ok=True)
            fig.savefig(tmp, format="png", dpi=DPI, bbox_inches="tight", metadata=info)
            os.replace(tmp, target)
        except OSError as e:
            if os.path.exists(tmp):
                os.unlink(tmp)
            return fail(f"cannot write {target}: {e.strerror or e}")
        finally:
            plt.close(fig)
        print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
