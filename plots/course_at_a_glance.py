#!/usr/bin/env python3
"""The whole course at a glance: the best kernel of each lesson against cuDNN.

    python3 plots/course_at_a_glance.py [CSV] [--out DIR]

Reads:  one bench CSV (default: results/h200/bench.csv), through plot.py's reader.
Writes: <out>/<gpu slug>_course_at_a_glance.png (default out: docs/img), and prints
        one line per column with the range of its points. The PNG records the CSV rows
        it drew, those of the lessons it shows, in its metadata (plots/provenance.py).

One column per lesson with a cuDNN row (02-07, 09, 11; lesson 10's op has none), one
point per problem that lesson runs: the `vs_cudnn` value (cuDNN's median time over the
kernel's, at the same precision and layout) of the lesson's fastest PASS variant on that
problem. Lesson 08 gets one column per precision (fp16, bf16, TF32, and 3xTF32 against
fp32), each point its fastest variant of that precision, already compared by the harness
with cuDNN at that precision in NHWC. Lesson 09's binary kernels are compared with the
fastest of cuDNN's fp16 and fp32 rows, lesson 11's with cuDNN fp32 on one frame. Above 1
the kernel is faster than cuDNN, below 1 slower.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot  # noqa: E402  (the harness CSV reader, save() and the log-axis style)
import provenance  # noqa: E402
from plot import plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

DEFAULT_CSV = os.path.join(plot.REPO_ROOT, "results", "h200", "bench.csv")
LESSONS = (2, 3, 4, 5, 6, 7, 9, 11)
TENSOR_CORE_LESSON = 8
# Lesson 08: (dtype, column name); each row's vs_cudnn is against cuDNN at its precision.
TENSOR_CORE_SERIES = (("fp16", "08 fp16"), ("bf16", "08 bf16"), ("tf32", "08 TF32"),
                      ("3xtf32", "08 fp32-level"))
SHORT_NAMES = {2: "naive", 3: "constant", 4: "shared tile", 5: "register tile",
               6: "separable", 7: "multi-channel", 9: "binary", 11: "video delta"}
COLUMN_ORDER = (2, 3, 4, 5, 6, 7, 8, 9, 11)
# The marker says what kind of problem a point is.
KINDS = (("seed000", "o", "seed000 (1000x2000, k=3)"),
         ("single", "s", "8192x8192, k=3..15, one channel"),
         ("unet", "^", "U-Net layer, batch 4"),
         ("batch64", "D", "batch-64 layer (3xtf32 only)"),
         ("binary", "P", "binary layer (lesson 09)"),
         ("video", "*", "a video frame's layer (lesson 11)"))
JITTER = 0.32  # points of a column spread over this width, in problem order
KIND_ORDER = {kind: i for i, (kind, _, _) in enumerate(KINDS)}


def problem_rank(row):
    """seed000, then the single-channel problems by filter size, then the U-Net layers
    in the network's order, then the batch-64 layer."""
    preset = row["preset"]
    unet = plot.PRESET_ORDER.index(preset) if preset in plot.PRESET_ORDER else 0
    return (KIND_ORDER[kind_of(row)], row["ksize"], unet)


def kind_of(row):
    if row["preset"] == "seed000":
        return "seed000"
    if row["preset"].startswith("bnn-"):
        return "binary"
    if row["preset"].startswith("vtest-"):
        return "video"
    if row["preset"].startswith(plot.UNET_PREFIX):
        return "unet"
    if row["n"] > 1:
        return "batch64"
    return "single"


def best_column(name, rows):
    """(label, [rows]): the fastest of rows on each problem, in the CSV's problem order,
    labelled with the name and the variants that won; None when rows is empty."""
    best = {}
    for r in rows:
        key = (r["preset"], r["n"], r["ksize"], r["h"], r["w"])
        if key not in best or r["median_ms"] < best[key]["median_ms"]:
            best[key] = r
    if not best:
        return None
    names = plot.unique(r["variant"] for r in sorted(best.values(), key=problem_rank))
    return (f"{name}\n" + "\n".join(names), sorted(best.values(), key=problem_rank))


def columns(rows):
    """[(label, [rows])]: per column, one row per problem, in the CSV's problem order."""
    rows = [r for r in plot.latest_rows(rows)
            if r["status"] == "PASS" and r["vs_cudnn"] is not None and
            r["variant"] != plot.CUDNN]
    result = []
    for number in COLUMN_ORDER:
        of_lesson = [r for r in rows if plot.lesson_number(r["lesson"]) == number]
        if number != TENSOR_CORE_LESSON:
            result.append(best_column(f"{number:02d} {SHORT_NAMES[number]}", of_lesson))
            continue
        for dtype, name in TENSOR_CORE_SERIES:
            result.append(best_column(name, [r for r in of_lesson if r["dtype"] == dtype]))
    return [column for column in result if column]


def chart(gpu, cols):
    fig, ax = plt.subplots(figsize=(17.0, 6.4))
    ax.grid(axis="y", which="both", alpha=0.3)
    ax.set_axisbelow(True)
    plot.use_log_scale(ax)
    values = [r["vs_cudnn"] for _, rs in cols for r in rs]
    bottom, top = min(values + [1.0]) / 1.6, max(values + [1.0]) * 2.0
    ax.axhspan(bottom, 1.0, color="mistyrose", alpha=0.6, zorder=0)
    ax.axhline(1.0, color="black", linewidth=1, linestyle="--")
    # Between lessons 03 and 04, where no point comes near the line.
    ax.text(2.5, 1.03, "1 = as fast as cuDNN", ha="center", va="bottom", fontsize="small")
    ax.text(2.5, 0.95, "below 1 (shaded):\nslower than cuDNN", ha="center", va="top",
            fontsize="small", color="firebrick", fontweight="bold")
    markers = {kind: marker for kind, marker, _ in KINDS}
    for i, (_, rs) in enumerate(cols):
        colour = plt.get_cmap("tab20")(i % 20)  # a colour of its own per column
        for j, r in enumerate(rs):
            x = i - JITTER / 2 + (JITTER * j / (len(rs) - 1) if len(rs) > 1 else JITTER / 2)
            ax.plot(x, r["vs_cudnn"], linestyle="none", marker=markers[kind_of(r)],
                    markersize=6, markerfacecolor=colour, markeredgecolor="black",
                    markeredgewidth=0.5)
        low, high = min(r["vs_cudnn"] for r in rs), max(r["vs_cudnn"] for r in rs)
        ax.annotate(f"{low:.3g}-{high:.3g}x" if low != high else f"{low:.3g}x",
                    (i, top / 1.2), ha="center", va="center", fontsize="small",
                    bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1})
    ax.set_ylim(bottom, top)
    ax.set_xlim(-0.6, len(cols) - 0.4)
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels([label for label, _ in cols], fontsize="x-small")
    ax.set_ylabel("speed-up over cuDNN (vs_cudnn)\ncuDNN ms / kernel ms, same precision "
                  "and layout")
    ax.set_xlabel("lesson, and its fastest passing variant(s) on the problems it runs")
    ax.set_title(f"The course at a glance: the best kernel of each lesson vs cuDNN, {gpu}")
    used = plot.unique(kind_of(r) for _, rs in cols for r in rs)
    handles = [Line2D([], [], linestyle="none", marker=m, markerfacecolor="white",
                      markeredgecolor="black", label=text)
               for kind, m, text in KINDS if kind in used]
    plot.legend_outside(ax, handles, title="problem (marker)")
    ax.text(1.01, 0.0, "label at the top:\nlowest-highest\nratio of the column",
            transform=ax.transAxes, fontsize="small", va="bottom")
    return fig


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("csv", nargs="?", default=DEFAULT_CSV)
    parser.add_argument("--out", default=os.path.join(plot.REPO_ROOT, "docs", "img"))
    args = parser.parse_args(argv)
    try:
        rows = plot.read_rows(args.csv)
    except plot.CsvError as e:
        print(f"course_at_a_glance.py: {e}", file=sys.stderr)
        return 2
    gpus = plot.unique(r["device"] for r in rows if r["variant"] == plot.CUDNN)
    if len(gpus) != 1:
        print(f"course_at_a_glance.py: {args.csv}: expected cuDNN rows of one GPU, "
              f"found {gpus}", file=sys.stderr)
        return 2
    rows = [r for r in rows if r["device"] == gpus[0]]
    cols = columns(rows)
    if not cols:
        print(f"course_at_a_glance.py: {args.csv}: no PASS rows with vs_cudnn", file=sys.stderr)
        return 2
    for label, rs in cols:
        vs = sorted(r["vs_cudnn"] for r in rs)
        print(f"{label.splitlines()[0]:<18} {len(rs):2d} problems  vs cuDNN "
              f"{vs[0]:.4f} .. {vs[-1]:.4f}  ({', '.join(plot.unique(r['variant'] for r in rs))})")
    drawn = [r["lesson"] for r in rows
             if plot.lesson_number(r["lesson"]) in LESSONS + (TENSOR_CORE_LESSON,)]
    try:
        info = provenance.metadata(__file__, [provenance.source(args.csv, {"lesson": drawn})])
    except provenance.ProvenanceError as e:
        print(f"course_at_a_glance.py: {e}", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{plot.slugify(gpus[0])}_course_at_a_glance.png")
    plot.save(chart(gpus[0], cols), path, info)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
