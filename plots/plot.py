#!/usr/bin/env python3
"""Plot the benchmark CSVs the lessons write (--csv, `make bench`) as PNG charts.

Reads:  CSV files with the harness's fixed header (default: results/*/bench.csv in
        the repository). One file holds the runs of one machine: its GPU rows and the
        CPU rows of lesson 01. When a row was measured several times, the last wins.
Writes: into --out (default docs/img), named after a slug of the GPU name found in
        the file's GPU rows (e.g. nvidia-h100-80gb-hbm3):
          <slug>_<lesson>_time.png          median time per variant and problem
          <slug>_<lesson>_roofline_pct.png  % of the roofline per variant and problem
          <slug>_<lesson>_vs_cudnn.png      speed-up over cuDNN
          <slug>_<lesson>_roofline.png      the lesson's kernels under the roofline, each
                                            labelled, at the problem most of them ran
          <slug>_single_channel.png         the best kernel of lessons 02-06 vs cuDNN
          <slug>_roofline_model.png         every PASS GPU row under the roofline
          <slug>_unet.png                   the U-Net layers: lesson 07 vs cuDNN vs CPU
        A chart without data is skipped; one line per PNG is printed. Each PNG is
        written to a temporary name and renamed, so a reader never sees half a file.
        Each PNG records the CSV rows it drew in its metadata (plots/provenance.py),
        which tests/check_plots_fresh.py compares with the CSV. With --shown-in DIR
        only the charts a Markdown page under DIR shows (img/NAME.png) are written.
Exit codes: 0 done (also for a CSV holding only the header); 2 a CSV is missing,
unreadable, has another header or a malformed row, or --out cannot be written
(one line on stderr naming the file).

    python3 plots/plot.py [CSV ...] [--out DIR] [--shown-in PAGES_DIR]
"""
import argparse
import collections
import csv
import glob
import math
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display on build or GPU machines
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import ticker  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

import provenance  # noqa: E402  (the rows each PNG records; plots/ is on the path)

HEADER = ("lesson,variant,preset,device,n,cin,cout,h,w,ksize,dtype,median_ms,min_ms,"
          "gbps,gflops,roofline_pct,cudnn_ms,vs_cudnn,rel_err,max_abs_err,status,"
          "commit,date,layout,params").split(",")
INT_COLUMNS = ("n", "cin", "cout", "h", "w", "ksize")
FLOAT_COLUMNS = ("median_ms", "min_ms", "gbps", "gflops", "roofline_pct", "cudnn_ms",
                 "vs_cudnn", "rel_err", "max_abs_err")
STATUSES = ("PASS", "FAIL")
CUDNN = "cudnn"
BASE_FORMAT = ("fp32", "nchw")  # the lessons 01-07 format; roofline charts use these rows
CUSTOM = "custom"
PRESET_ORDER = ("seed000", "big3", "big5", "big7", "unet-3x64", "unet-64x64",
                "unet-64x128", "unet-128x128", "unet-128x256", "unet-256x256",
                "unet-256x512", "unet-512x512", "unet-512x1024", "unet-1024x1024")
SINGLE_CHANNEL_PRESETS = ("seed000", "big3", "big5", "big7")
SINGLE_CHANNEL_LESSONS = range(2, 7)
CPU_LESSON = 1
UNET_LESSON = 7
UNET_PREFIX = "unet-"
# The harness names a CPU by its model and thread count: "... (16 threads)".
CPU_DEVICE = re.compile(r"\(\d+ threads?\)$")

# Each lesson run measures the copy bandwidth anew; runs differ by a few percent, so a
# row counts as memory- or compute-bound only beyond this relative margin.
ROOF_MARGIN = 0.05
DPI = 120
BAR_GROUP_WIDTH = 0.8
LOG_PADDING = 2.5  # headroom factor above and below the data on log axes
CUDNN_STYLE = {"facecolor": "lightgrey", "edgecolor": "dimgrey", "hatch": "//"}
CUDNN_COLOUR = "dimgrey"
FAIL_COLOUR = "red"
FAIL_ALPHA = 0.35
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p", "H", "d")
# The roofline model gives each problem its own marker: every shape filled, then every
# shape hollow; only beyond that many problems do markers repeat (with a note).
MARKER_STYLES = tuple((m, True) for m in MARKERS) + tuple((m, False) for m in MARKERS)
# The harness writes gbps, gflops and roofline_pct with two decimals (common/measure/report.c):
# each value may be off by half of the last one.
CSV_HALF_UNIT = 0.005
GFLOPS_PER_TFLOPS = 1000.0
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A dashed horizontal line with its text; bars_start_here: bars grow up or down from it.
Reference = collections.namedtuple("Reference", "y text bars_start_here")


class PlainLogFormatter(ticker.LogFormatter):
    """Log-axis labels as plain numbers (0.2, 30, 60000) where matplotlib would write 2x10^-1."""

    def __call__(self, x, pos=None):
        return f"{x:g}" if super().__call__(x, pos) else ""


class CsvError(Exception):
    """A CSV the script cannot use; the message names the file."""


# ---------------------------------------------------------------- reading

def read_rows(path):
    """The rows of one CSV as dicts, numbers parsed (empty or non-finite -> None)."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            check_header(path, next(reader, None))
            return [parse_row(path, reader.line_num, fields) for fields in reader if fields]
    except OSError as e:
        raise CsvError(f"{path}: cannot read: {e.strerror or e}") from None
    except (UnicodeDecodeError, csv.Error) as e:
        raise CsvError(f"{path}: not a readable CSV: {e}") from None


def check_header(path, header):
    if header is None:
        raise CsvError(f"{path}: empty file, expected the bench CSV header line")
    if header == HEADER:
        return
    for i, expected in enumerate(HEADER):
        if i >= len(header) or header[i] != expected:
            got = repr(header[i]) if i < len(header) else "nothing"
            raise CsvError(f"{path}: not a bench CSV: header column {i + 1} is {got}, "
                           f"expected '{expected}'")
    raise CsvError(f"{path}: not a bench CSV: header has {len(header)} columns, "
                   f"expected {len(HEADER)}")


def parse_row(path, line, fields):
    if len(fields) != len(HEADER):
        raise CsvError(f"{path}:{line}: {len(fields)} fields, expected {len(HEADER)}")
    row = dict(zip(HEADER, fields))
    for column in INT_COLUMNS:
        row[column] = parse_number(path, line, column, row[column], int)
    for column in FLOAT_COLUMNS:
        row[column] = parse_number(path, line, column, row[column], float)
    if row["status"] not in STATUSES:
        raise CsvError(f"{path}:{line}: status '{row['status']}' is not PASS or FAIL")
    # A variant's series: its name, and its format when that is not float32 NCHW.
    fmt = (row["dtype"], row["layout"])
    row["series"] = row["variant"] if fmt == BASE_FORMAT else f"{row['variant']} {'/'.join(fmt)}"
    return row


def parse_number(path, line, column, text, kind):
    if kind is float and text == "":
        return None  # no roofline on the CPU, no cuDNN on this machine
    try:
        value = kind(text)
    except ValueError:
        raise CsvError(f"{path}:{line}: column {column}: '{text}' is not a number") from None
    return value if math.isfinite(value) else None


# ---------------------------------------------------------------- selecting

def is_gpu_row(row):
    return not CPU_DEVICE.search(row["device"])


def lesson_number(lesson):
    prefix = lesson.split("_", 1)[0]
    return int(prefix) if prefix.isdigit() else None


def unique(items):
    return list(dict.fromkeys(items))


def split_by_gpu(rows):
    """[(gpu name, rows)]: the rows of each GPU named in the file, each with the CPU
    rows; a file without GPU rows gives one entry named after its CPU."""
    gpus = unique(r["device"] for r in rows if is_gpu_row(r))
    if not gpus:
        return [(rows[0]["device"], rows)]
    return [(gpu, [r for r in rows if r["device"] == gpu or not is_gpu_row(r)])
            for gpu in gpus]


def latest_rows(rows):
    """One row per (lesson, series, preset, ksize, h, w): the last one, as later runs append."""
    latest = {}
    for r in rows:
        key = (r["lesson"], r["series"], r["preset"], r["ksize"], r["h"], r["w"])
        latest.pop(key, None)
        latest[key] = r
    return list(latest.values())


def with_problem_labels(rows):
    """Copies of the rows with 'problem', the x-axis category: the preset name, or
    "HxW k=R" for custom rows and for a preset seen with more than one shape."""
    shapes = {}
    for r in rows:
        shapes.setdefault(r["preset"], set()).add((r["h"], r["w"], r["ksize"]))
    labelled = []
    for r in rows:
        shape = f"{r['h']}x{r['w']} k={r['ksize']}"
        if r["preset"] == CUSTOM:
            problem = shape
        elif len(shapes[r["preset"]]) > 1:
            problem = f"{r['preset']} {shape}"
        else:
            problem = r["preset"]
        labelled.append(dict(r, problem=problem))
    return labelled


def problem_order(rows):
    """The problems in the rows: presets in the course's order, then the others."""
    def rank(r):
        known = r["preset"] in PRESET_ORDER
        position = PRESET_ORDER.index(r["preset"]) if known else len(PRESET_ORDER)
        return (position, r["preset"] == CUSTOM, r["preset"], r["h"] * r["w"], r["ksize"])
    return unique(r["problem"] for r in sorted(rows, key=rank))


def series_by_variant(rows):
    """[(series, {problem: row})] in the order the harness wrote them, cuDNN last."""
    variants = unique(r["series"] for r in rows if r["variant"] != CUDNN)
    variants += unique(r["series"] for r in rows if r["variant"] == CUDNN)
    return [(v, {r["problem"]: r for r in rows if r["series"] == v}) for v in variants]


def best_per_problem(rows, key):
    """{problem: the row with the largest key(row)}."""
    best = {}
    for r in rows:
        if r["problem"] not in best or key(r) > key(best[r["problem"]]):
            best[r["problem"]] = r
    return best


# ---------------------------------------------------------------- the roof

class Roof:
    """The roofline of one GPU as the rows themselves report it."""

    def __init__(self, bandwidth, peak, bandwidth_seen, peak_seen):
        self.bandwidth = bandwidth  # GB/s
        self.peak = peak            # GFLOP/s
        self.bandwidth_seen = bandwidth_seen  # False: only a lower bound (no memory-bound row)
        self.peak_seen = peak_seen            # False: only a lower bound (no compute-bound row)

    def bandwidth_text(self):
        return f"copy bandwidth {'' if self.bandwidth_seen else '>= '}{self.bandwidth:.0f} GB/s"

    def peak_text(self):
        tflops = self.peak / GFLOPS_PER_TFLOPS
        return f"FP32 peak {'' if self.peak_seen else '>= '}{tflops:.1f} TFLOP/s"


def derive_roof(rows):
    """The roof (bandwidth, peak) derived from the rows' numbers, or None.

    The harness writes roofline_pct = 100 * roof_time / measured_time, where
    roof_time = max(bytes / bandwidth, flops / peak). As gflops = flops / measured_time,
        roof_gflops = gflops * 100 / roofline_pct = flops / roof_time
                    = min(I * bandwidth, peak),   with I = flops / bytes = gflops / gbps,
    the roof at that row's arithmetic intensity. Divided by I it gives
    min(bandwidth, peak / I) = gbps * 100 / roofline_pct: the copy bandwidth itself for
    a memory-bound row, less for a compute-bound one, so the largest over all rows is
    the bandwidth. The roof itself never exceeds the peak and reaches it on
    compute-bound rows, so the largest roof_gflops is the peak. Without rows of one
    kind the value is only a lower bound.

    The CSV rounds its numbers, and a row far under its roof (0.73 % written for
    0.734 %) would give a roof too high by its rounding; each row therefore gives the
    smallest roof its rounded numbers allow, and the largest of those is the estimate.
    """
    points = []
    for r in rows:
        if positive(r["gflops"], r["gbps"], r["roofline_pct"]):
            pct = r["roofline_pct"] + CSV_HALF_UNIT
            points.append(((r["gflops"] - CSV_HALF_UNIT) * 100.0 / pct,
                           (r["gbps"] - CSV_HALF_UNIT) * 100.0 / pct,
                           r["gflops"] / r["gbps"]))
    if not points:
        return None
    peak = max(roof for roof, _, _ in points)
    bandwidth = max(copy for _, copy, _ in points)
    ridge = peak / bandwidth
    return Roof(bandwidth, peak,
                bandwidth_seen=any(i < ridge * (1 - ROOF_MARGIN) for _, _, i in points),
                peak_seen=any(i > ridge * (1 + ROOF_MARGIN) for _, _, i in points))


def positive(*values):
    return all(v is not None and v > 0 for v in values)


# ---------------------------------------------------------------- drawing helpers

def new_panels(problem_count, series_count=1, panels=1):
    """A figure of `panels` axes stacked above one another, sharing the problem axis."""
    width = min(20.0, max(7.0, 2.5 + problem_count * (0.3 * series_count + 0.5)))
    fig, axes = plt.subplots(panels, 1, figsize=(width, 4.8 * panels), sharex=True,
                             squeeze=False)
    for ax in axes[:, 0]:
        ax.grid(axis="y", which="major", alpha=0.3)
        ax.set_axisbelow(True)
    return fig, list(axes[:, 0])


def new_axes(problem_count, series_count=1):
    fig, axes = new_panels(problem_count, series_count)
    return fig, axes[0]


def use_log_scale(ax, axis="y"):
    getattr(ax, f"set_{axis}scale")("log")
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_formatter(PlainLogFormatter())
    target.set_minor_formatter(PlainLogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))


# Twenty colours, no two alike, so that no chart gives two variants one colour: tab10's,
# then one shade of each of tab20b's and tab20c's hue groups (lesson 05 draws 13 variants).
PALETTE = ([plt.get_cmap("tab10")(i) for i in range(10)] +
           [plt.get_cmap("tab20b")(i) for i in (0, 4, 8, 12, 16)] +
           [plt.get_cmap("tab20c")(i) for i in (2, 6, 10, 14, 18)])


def variant_colour(index, name):
    if name == CUDNN:
        return CUDNN_COLOUR
    if index >= len(PALETTE):
        raise ValueError(f"more than {len(PALETTE)} variants in one chart: no colour left "
                         f"for {name}")
    return PALETTE[index]


def bar_style(index, name, failed):
    style = dict(CUDNN_STYLE) if name == CUDNN else {"facecolor": variant_colour(index, name)}
    if failed:
        style["alpha"] = FAIL_ALPHA
    return style


def value_limits(values, log, reference):
    top = max(values + ([reference] if reference is not None else []))
    if not log:
        return 0.0, top * 1.15
    bottom = min(values + ([reference] if reference is not None else []))
    return bottom / LOG_PADDING, top * LOG_PADDING


def mark_fail(ax, x, value, base):
    """A red 'x' at the end of a FAIL bar, or at the bottom when it has no value."""
    style = {"color": FAIL_COLOUR, "fontweight": "bold", "ha": "center"}
    if value is None:
        ax.text(x, 0.02, "x", transform=ax.get_xaxis_transform(), va="bottom", **style)
    elif value >= base:
        ax.annotate("x", (x, value), xytext=(0, 1), textcoords="offset points",
                    va="bottom", **style)
    else:
        ax.annotate("x", (x, value), xytext=(0, -1), textcoords="offset points",
                    va="top", **style)


def bar_x(series_index, problem_index, series_count):
    """The centre of a bar: groups sit at 0, 1, 2... and share BAR_GROUP_WIDTH."""
    width = BAR_GROUP_WIDTH / series_count
    return problem_index - BAR_GROUP_WIDTH / 2 + (series_index + 0.5) * width


def draw_grouped_bars(ax, problems, series, value, base):
    """One group per problem, one bar per series, from `base` to the value.
    Returns the legend handles."""
    width = BAR_GROUP_WIDTH / len(series)
    handles = []
    any_fail = False
    for i, (name, by_problem) in enumerate(series):
        for j, problem in enumerate(problems):
            row = by_problem.get(problem)
            if row is None:
                continue
            x = bar_x(i, j, len(series))
            v = value(row)
            failed = row["status"] == "FAIL"
            if v is not None:
                ax.bar(x, v - base, width, bottom=base, **bar_style(i, name, failed))
            if failed:
                mark_fail(ax, x, v, base)
                any_fail = True
        handles.append(Patch(label=name, **bar_style(i, name, False)))
    if any_fail:
        handles.append(Line2D([], [], color=FAIL_COLOUR, marker="x", linestyle="none",
                              label="FAIL (wrong result)"))
    return handles


def set_problem_ticks(ax, labels):
    ax.set_xticks(range(len(labels)))
    crowded = len(labels) > 6 or any(len(label) > 10 for label in labels)
    ax.set_xticklabels(labels, rotation=30 if crowded else 0, ha="right" if crowded else "center")
    ax.set_xlim(-0.6, len(labels) - 0.4)


def legend_outside(ax, handles=None, title=None):
    """Legend right of the axes, so it never covers a bar."""
    kwargs = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "borderaxespad": 0.0,
              "fontsize": "small", "title": title, "title_fontsize": "small"}
    return ax.legend(handles=handles, **kwargs) if handles else ax.legend(**kwargs)


def draw_reference(ax, y, text):
    ax.axhline(y, color="black", linewidth=1, linestyle="--")
    ax.annotate(text, (0.005, y), xycoords=("axes fraction", "data"), xytext=(2, 3),
                textcoords="offset points", fontsize="small", zorder=5,
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1})


def lesson_devices(rows):
    """What ran the lesson's own variants (cuDNN rows only when there is nothing else)."""
    kernels = [r for r in rows if r["variant"] != CUDNN] or rows
    return ", ".join(unique(r["device"] for r in kernels))


def panels_of(rows):
    """The rows of one chart's panels: one panel, or one per precision where the lesson
    has more variants than the palette has colours (lesson 08's ladder), the lesson's
    own precisions first, then those only cuDNN ran."""
    if len(series_by_variant(rows)) <= len(PALETTE):
        return [rows]
    dtypes = unique([r["dtype"] for r in rows if r["variant"] != CUDNN] +
                    [r["dtype"] for r in rows])
    return [[r for r in rows if r["dtype"] == d] for d in dtypes]


def bar_chart(rows, value, title, ylabel, log, reference=None):
    """Grouped bars of value(row) per problem and variant, with an optional Reference
    line, a panel per precision when one would need more colours than PALETTE has; None
    when no row has a value."""
    rows = [r for r in rows if value(r) is not None or r["status"] == "FAIL"]
    values = [value(r) for r in rows if value(r) is not None]
    if not values:
        return None
    problems = problem_order(rows)
    panels = panels_of(rows)
    most = max(len(series_by_variant(panel)) for panel in panels)
    fig, axes = new_panels(len(problems), most, len(panels))
    bottom, top = value_limits(values, log, reference.y if reference else None)
    base = reference.y if reference and reference.bars_start_here else (bottom if log else 0.0)
    for ax, panel in zip(axes, panels):
        if log:
            use_log_scale(ax)
        handles = draw_grouped_bars(ax, problems, series_by_variant(panel), value, base)
        ax.set_ylim(bottom, top)
        if reference:
            draw_reference(ax, reference.y, reference.text)
        ax.set_ylabel(ylabel)
        legend_outside(ax, handles, title="variant" if len(panels) == 1 else panel[0]["dtype"])
    set_problem_ticks(axes[-1], problems)
    axes[-1].set_xlabel("problem (preset, or size and filter)")
    axes[0].set_title(title)
    return fig


# ---------------------------------------------------------------- the charts

def chart_time(lesson, rows):
    return bar_chart(rows, lambda r: positive_or_none(r["median_ms"]),
                     f"{lesson}: median time per kernel (lower is better)\n{lesson_devices(rows)}",
                     "median time (ms, log scale)", log=True)


def chart_roofline_pct(lesson, rows):
    return bar_chart(rows, lambda r: r["roofline_pct"],
                     f"{lesson}: % of the roofline (higher is better)\n{lesson_devices(rows)}",
                     "% of roofline (roofline time / measured time)", log=False,
                     reference=Reference(100.0, "roofline (100%)", False))


def chart_vs_cudnn(lesson, rows):
    kernels = [r for r in rows if r["variant"] != CUDNN]
    return bar_chart(kernels, lambda r: positive_or_none(r["vs_cudnn"]),
                     f"{lesson}: speed-up over cuDNN\n{lesson_devices(kernels)}",
                     "cuDNN time / kernel time (log scale)", log=True,
                     reference=Reference(1.0, "faster than cuDNN \u2191  (1.0 = as fast)", True))


def gbps(row):
    return row["gbps"]


def positive_or_none(value):
    return value if positive(value) else None


def chart_single_channel(gpu, rows, roof):
    """GB/s of the best PASS variant of each single-channel lesson, and of cuDNN."""
    rows = [r for r in rows if r["preset"] in SINGLE_CHANNEL_PRESETS and r["status"] == "PASS"
            and lesson_number(r["lesson"]) in SINGLE_CHANNEL_LESSONS and positive(r["gbps"])]
    kernels = [r for r in rows if r["variant"] != CUDNN]
    if not kernels:
        return None
    problems = problem_order(rows)
    series = [(lesson, best_per_problem([r for r in kernels if r["lesson"] == lesson], gbps))
              for lesson in sorted(unique(r["lesson"] for r in kernels))]
    cudnn = [r for r in rows if r["variant"] == CUDNN]
    if cudnn:  # the lessons each time cuDNN on the same problem: show its best run
        series.append((CUDNN, best_per_problem(cudnn, gbps)))
    fig, ax = new_axes(len(problems), len(series))
    handles = draw_grouped_bars(ax, problems, series, gbps, 0.0)
    label_bars_with_variant(ax, problems, series)
    top = max(r["gbps"] for r in rows)
    if roof:
        draw_reference(ax, roof.bandwidth, roof.bandwidth_text())
        top = max(top, roof.bandwidth)
    ax.set_ylim(0, top * 1.15)
    set_problem_ticks(ax, problems)
    ax.set_xlabel("problem (preset: one channel, filter k x k)")
    ax.set_ylabel("GB/s (minimum bytes / median time)")
    ax.set_title(f"Single-channel filters: the best kernel of each lesson vs cuDNN\n{gpu}")
    legend_outside(ax, handles, title="lesson (best variant)")
    return fig


def label_bars_with_variant(ax, problems, series):
    """The variant's name up the inside of its bar (long names do not fit above it)."""
    for i, (name, by_problem) in enumerate(series):
        if name == CUDNN:
            continue
        for j, problem in enumerate(problems):
            row = by_problem.get(problem)
            if row:
                ax.annotate(row["variant"], (bar_x(i, j, len(series)), 0), xytext=(0, 4),
                            textcoords="offset points", rotation=90, ha="center",
                            va="bottom", fontsize="x-small",
                            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.7,
                                  "pad": 1})


def chart_roofline_model(gpu, rows, roof):
    """Every PASS GPU row at (intensity, GFLOP/s) under the roof derived from the rows:
    colour the lesson, marker the problem, one legend for both."""
    points = [r for r in rows if is_gpu_row(r) and r["status"] == "PASS"
              and positive(r["gflops"], r["gbps"])]
    if not points or roof is None:
        return None
    lessons = sorted(unique(r["lesson"] for r in points if r["variant"] != CUDNN))
    colour = {lesson: variant_colour(i, lesson) for i, lesson in enumerate(lessons)}
    problem = problems_by_shape(points)
    problems = unique(problem.values())
    if len(problems) > len(MARKER_STYLES):
        print(f"plot.py: note: {gpu}: {len(problems)} problems, {len(MARKER_STYLES)} "
              "markers: some problems share a marker", file=sys.stderr)
    style = {p: MARKER_STYLES[i % len(MARKER_STYLES)] for i, p in enumerate(problems)}
    fig, ax = plt.subplots(figsize=(10, max(6.0, 0.21 * (len(lessons) + len(problems) + 4))))
    use_log_scale(ax, "x")
    use_log_scale(ax, "y")
    for r in points:
        c = CUDNN_COLOUR if r["variant"] == CUDNN else colour[r["lesson"]]
        shape, filled = style[problem[shape_of(r)]]
        ax.scatter(r["gflops"] / r["gbps"], r["gflops"], marker=shape, s=40, zorder=3,
                   facecolors=c if filled else "none", edgecolors="black" if filled else c,
                   linewidths=0.4 if filled else 1.2)
    # cuDNN's Winograd and FFT rows may pass the peak (fewer FLOPs than the direct count).
    ax.set_ylim(min(r["gflops"] for r in points) / LOG_PADDING,
                max([roof.peak] + [r["gflops"] for r in points]) * LOG_PADDING)
    draw_roof(ax, roof, [r["gflops"] / r["gbps"] for r in points])
    ax.set_xlabel("arithmetic intensity (FLOP / byte of minimum traffic)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(f"Roofline model: every PASS GPU row\n{gpu}")
    ax.grid(which="major", alpha=0.3)
    names = [(lesson, colour[lesson]) for lesson in lessons]
    if any(r["variant"] == CUDNN for r in points):
        names.append(("cuDNN", CUDNN_COLOUR))
    headings = (0, len(names) + 1)
    handles = [legend_heading("lesson (colour)")]
    handles += [Line2D([], [], color=c, marker="o", linestyle="none", label=name)
                for name, c in names]
    handles.append(legend_heading("problem (marker)"))
    handles += [Line2D([], [], color="black", marker=style[p][0], linestyle="none",
                       markerfacecolor="dimgrey" if style[p][1] else "none", label=p)
                for p in problems]
    texts = legend_outside(ax, handles).get_texts()
    for i in headings:
        texts[i].set_fontweight("bold")
    return fig


LABEL_GAP = 0.045  # labels of one roofline column: at least this far apart, in axes height
LABEL_SPAN = 25  # and the x range they need, as a factor of the column's intensity


def spread_labels(ax, ys):
    """y positions (data units, log axis) for labels of points at ys, in the points'
    order, at least LABEL_GAP apart, the stack centred where the points are."""
    bottom, top = (math.log10(v) for v in ax.get_ylim())
    gap = LABEL_GAP * (top - bottom)
    order = sorted(range(len(ys)), key=lambda k: ys[k])
    logs, last = [], -math.inf
    for i in order:
        last = max(math.log10(ys[i]), last + gap)
        logs.append(last)
    shift = sum(logs) / len(logs) - sum(math.log10(y) for y in ys) / len(ys)
    shift = min(shift, logs[0] - bottom - gap / 2)  # the lowest label inside the axes
    placed = {i: 10 ** (v - shift) for i, v in zip(order, logs)}
    return [placed[i] for i in range(len(ys))]


def chart_lesson_roofline(lesson, rows, roof):
    """The lesson's float32 NCHW GPU kernels and cuDNN at one problem under the roof,
    each point labelled with its variant: the problem most of them ran, the first such
    in the course's order. One problem has one arithmetic intensity, so the points
    stand in a column: how far each is below the roof is what the lesson bought."""
    points = [r for r in rows if is_gpu_row(r) and r["status"] == "PASS"
              and positive(r["gflops"], r["gbps"])]
    if roof is None or all(r["variant"] == CUDNN for r in points):
        return None
    ran = {p: len({r["variant"] for r in points if r["problem"] == p})
           for p in problem_order(points)}
    problem = max(ran, key=ran.get)
    chosen = [r for r in points if r["problem"] == problem]
    fig, ax = plt.subplots(figsize=(9, 6))
    use_log_scale(ax, "x")
    use_log_scale(ax, "y")
    intensity = chosen[0]["gflops"] / chosen[0]["gbps"]
    ys = [r["gflops"] for r in chosen]
    # Room below the points for a column of labels, and to their right, under the roof
    # (LABEL_SPAN: from the points to past the labels' end, on the log axis).
    ax.set_ylim(min(ys) / LOG_PADDING ** 2, max(ys + [roof.peak]) * LOG_PADDING)
    draw_roof(ax, roof, [intensity, intensity * LABEL_SPAN])
    for i, (r, label_y) in enumerate(zip(chosen, spread_labels(ax, ys))):
        colour = CUDNN_COLOUR if r["variant"] == CUDNN else variant_colour(i, r["variant"])
        ax.scatter(intensity, r["gflops"], s=45, color=colour, edgecolors="black",
                   linewidths=0.4, zorder=3)
        ax.annotate(f"{r['variant']}  {r['roofline_pct']:.0f} %", (intensity, r["gflops"]),
                    xytext=(intensity * 3, label_y), fontsize="small", va="center",
                    arrowprops={"arrowstyle": "-", "color": "grey", "linewidth": 0.5})
    ax.set_xlabel("arithmetic intensity (FLOP / byte of minimum traffic)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(f"{lesson} on {problem}: each kernel under the roofline (% of it)\n"
                 f"{lesson_devices(chosen)}")
    ax.grid(which="major", alpha=0.3)
    return fig


def shape_of(row):
    return (row["n"], row["cin"], row["cout"], row["h"], row["w"], row["ksize"])


def problems_by_shape(rows):
    """{shape: problem label}: rows of the same shape are one problem, named by its
    first label in the course's order (a custom 8192x8192 k=3 run is big3)."""
    label = {}
    for p in problem_order(rows):
        for r in rows:
            if r["problem"] == p:
                label.setdefault(shape_of(r), p)
    return label


def legend_heading(text):
    """A legend entry without a mark: a heading over the entries that follow."""
    return Line2D([], [], linestyle="none", label=text)


def draw_roof(ax, roof, intensities):
    ridge = roof.peak / roof.bandwidth
    lo = min(intensities + [ridge]) / LOG_PADDING
    hi = max(intensities + [ridge]) * LOG_PADDING
    ax.plot([lo, ridge, hi], [lo * roof.bandwidth, roof.peak, roof.peak],
            color="black", linewidth=1.5, zorder=2)
    ax.set_xlim(lo, hi)
    start = math.sqrt(lo * ridge)
    (x0, y0), (x1, y1) = ax.transData.transform([(start, start * roof.bandwidth),
                                                 (ridge, roof.peak)])
    ax.annotate(roof.bandwidth_text(), (start, start * roof.bandwidth), xytext=(0, 6),
                textcoords="offset points", fontsize="small", ha="center",
                rotation=math.degrees(math.atan2(y1 - y0, x1 - x0)), rotation_mode="anchor")
    ax.annotate(roof.peak_text(), (ridge, roof.peak), xytext=(4, 4),
                textcoords="offset points", fontsize="small")


def chart_unet(gpu, rows):
    """Time per U-Net layer: each lesson-07 variant, cuDNN, and the fastest CPU variant."""
    rows = [r for r in rows if r["preset"].startswith(UNET_PREFIX)]
    unet = [r for r in rows if lesson_number(r["lesson"]) == UNET_LESSON]
    cpu = [r for r in rows if lesson_number(r["lesson"]) == CPU_LESSON and not is_gpu_row(r)
           and r["status"] == "PASS" and positive(r["median_ms"])]
    shown = unet + cpu
    if not any(positive(r["median_ms"]) for r in shown):
        return None
    problems = problem_order(shown)
    series = series_by_variant(unet)
    if cpu:
        fastest = best_per_problem(cpu, key=lambda r: -r["median_ms"])
        series.append((f"CPU, fastest {cpu[0]['lesson']} variant", fastest))
    fig, ax = new_axes(len(problems), 2)
    use_log_scale(ax)
    for i, (name, by_problem) in enumerate(series):
        xs = [j for j, p in enumerate(problems) if p in by_problem]
        ys = [positive_or_none(by_problem[problems[j]]["median_ms"]) or math.nan for j in xs]
        style = {"color": variant_colour(i, name), "marker": "o"}
        if name == CUDNN:
            style.update(linestyle="--", marker="s")
        ax.plot(xs, ys, label=name, **style)
        for x, y in zip(xs, ys):
            if by_problem[problems[x]]["status"] == "FAIL":
                ax.plot(x, y, marker="x", color=FAIL_COLOUR, markersize=12, markeredgewidth=2)
    if any(r["status"] == "FAIL" for r in unet):
        ax.plot([], [], marker="x", color=FAIL_COLOUR, linestyle="none",
                label="FAIL (wrong result)")
    shapes = {r["problem"]: f"{r['n']}x{r['cin']}x{r['h']}x{r['w']}" for r in shown}
    set_problem_ticks(ax, [f"{p}\n{shapes[p]}" for p in problems])
    ax.set_xlabel("U-Net layer (preset: cin x cout; input n x cin x h x w)")
    ax.set_ylabel("median time (ms, log scale)")
    ax.set_title(f"U-Net layers: lesson 07 kernels vs cuDNN vs the CPU\n{gpu}")
    legend_outside(ax, title="variant")
    return fig


# ---------------------------------------------------------------- writing

def slugify(name):
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "unknown"


def save(fig, path, metadata=None):
    """Writes the PNG under a temporary name in the same folder, then renames it;
    metadata: PNG text chunks (provenance.metadata(), the rows the chart drew)."""
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        fig.savefig(tmp, format="png", dpi=DPI, bbox_inches="tight", metadata=metadata)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    finally:
        plt.close(fig)


def machine_charts(gpu, rows):
    """[(file name, build, note, where)]: every chart of one machine; build() returns a
    figure or None; where: the CSV rows it reads, as provenance.source() takes them
    ({column: [values]}; {} for every row of the file)."""
    slug = slugify(gpu)
    rows = with_problem_labels(latest_rows(rows))
    # The roofline charts compare like with like: float32 NCHW rows on the FP32 roof.
    base = [r for r in rows if (r["dtype"], r["layout"]) == BASE_FORMAT]
    roof = derive_roof([r for r in base if is_gpu_row(r)])
    charts = []
    for lesson in sorted(unique(r["lesson"] for r in rows)):
        lesson_rows = [r for r in rows if r["lesson"] == lesson]
        name = f"{slug}_{re.sub(r'[^A-Za-z0-9_.-]+', '-', lesson)}"
        for suffix, chart in (("time", chart_time), ("roofline_pct", chart_roofline_pct),
                              ("vs_cudnn", chart_vs_cudnn)):
            charts.append((f"{name}_{suffix}.png",
                           lambda c=chart, n=lesson, r=lesson_rows: c(n, r), "",
                           {"lesson": [lesson]}))
        # Its roof comes from every GPU row of the file, as the roofline model's.
        lesson_base = [r for r in base if r["lesson"] == lesson]
        charts.append((f"{name}_roofline.png",
                       lambda n=lesson, r=lesson_base: chart_lesson_roofline(n, r, roof), "",
                       {}))
    # The roof comes from every GPU row of the file: a chart drawing it reads them all.
    charts.append((f"{slug}_single_channel.png",
                   lambda: chart_single_channel(gpu, base, roof), "", {}))
    roof_note = (f" (roof from the rows: {roof.bandwidth_text()}, {roof.peak_text()})"
                 if roof else "")
    charts.append((f"{slug}_roofline_model.png",
                   lambda: chart_roofline_model(gpu, base, roof), roof_note, {}))
    unet_lessons = [lesson for lesson in unique(r["lesson"] for r in rows)
                    if lesson_number(lesson) in (CPU_LESSON, UNET_LESSON)]
    charts.append((f"{slug}_unet.png", lambda: chart_unet(gpu, base), "",
                   {"lesson": unet_lessons}))
    return charts


def default_csvs():
    return sorted(glob.glob(os.path.join(REPO_ROOT, "results", "*", "bench.csv")))


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Plot bench CSVs (one machine per file) as PNG charts.")
    parser.add_argument("csv", nargs="*", metavar="CSV",
                        help="bench CSV files (default: results/*/bench.csv)")
    parser.add_argument("--out", metavar="DIR", default=os.path.join(REPO_ROOT, "docs", "img"),
                        help="folder for the PNG files (default: docs/img)")
    provenance.add_shown_in(parser)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    paths = args.csv or default_csvs()
    if not paths:
        print("plot.py: no CSV given and none found at results/*/bench.csv", file=sys.stderr)
        return 2
    try:
        tables = [(path, read_rows(path)) for path in paths]
    except CsvError as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return 2
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        print(f"plot.py: --out {args.out} is a file, not a folder", file=sys.stderr)
        return 2
    shown = provenance.shown_images(args.shown_in)
    written_by = {}
    for path, rows in tables:
        if not rows:
            print(f"{path}: no rows (header only): nothing to plot")
            continue
        for gpu, machine_rows in split_by_gpu(rows):
            if gpu in written_by:
                print(f"plot.py: note: {written_by[gpu]} and {path} both hold {gpu}: "
                      f"the charts of {path} replace the others", file=sys.stderr)
            written_by[gpu] = path
            for name, build, note, where in machine_charts(gpu, machine_rows):
                if shown is not None and name not in shown:
                    continue
                fig = build()
                if fig is None:
                    continue
                target = os.path.join(args.out, name)
                try:
                    info = provenance.metadata(__file__, [provenance.source(path, where)])
                    os.makedirs(args.out, exist_ok=True)
                    save(fig, target, info)
                except provenance.ProvenanceError as e:  # the CSV changed since it was read
                    plt.close(fig)
                    print(f"plot.py: {e}", file=sys.stderr)
                    return 2
                except OSError as e:
                    print(f"plot.py: cannot write {target}: {e.strerror or e}", file=sys.stderr)
                    return 2
                print(f"wrote {target}{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
