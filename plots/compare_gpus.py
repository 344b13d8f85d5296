#!/usr/bin/env python3
"""Compare two GPUs' bench CSVs through each kernel's speed-up over cuDNN.

A time measured on one machine is never divided by a time from the other: every
number shown is a row's own vs_cudnn (cuDNN time / kernel time, both from the same
run, same precision and layout), and the two GPUs are compared by those ratios.

Reads:  two CSV files with the harness's header (see plots/plot.py), each holding one
        machine's runs. The GPU name comes from the device column of its GPU rows;
        lesson 01 and CPU rows are ignored. When a row was measured several times, the
        last wins.
Matches rows by (lesson, variant, preset, dtype, layout) and the problem's shape
        (n, cin, cout, h, w, ksize: what tells "custom" problems apart), PASS in both
        files with a vs_cudnn value in both; cuDNN's own rows are skipped.
Writes: into --out (default docs/img), after the slugs of the two GPU names:
          compare_<slugA>_<slugB>_<lesson>.png  per lesson: on each problem the lesson's
              fastest variant on each GPU (its PASS rows with a ratio), two bars: its
              speed-up over cuDNN on GPU A and on GPU B; one panel per dtype/layout
          compare_<slugA>_<slugB>.md  the matched rows whose ratio changes by more than
              --threshold (|B/A - 1|), per lesson by size of change, and a summary line
              per lesson; the same Markdown is printed on stdout (--no-table: neither
              written nor printed)
        One line per written file on stdout. Each file is written to a temporary name
        and renamed, so a reader never sees half a file. Each PNG records the CSV rows
        it drew, the lesson's rows of both files, in its metadata (plots/provenance.py).
        With --shown-in DIR only the charts a Markdown page under DIR shows
        (img/NAME.png) are written.
Exit codes: 0 done; 2 a CSV is missing, unreadable, has another header, a malformed
row, no GPU rows or rows of several GPUs, or --out cannot be written (one line on
stderr naming the file).

    python3 plots/compare_gpus.py A.csv B.csv [--out DIR] [--threshold 0.10] [--no-table]
                                  [--shown-in PAGES_DIR]
"""
import argparse
import math
import os
import re
import sys
import tempfile

import plot  # the CSV reader and drawing conventions (also selects matplotlib's Agg)
import provenance
from plot import CUDNN, CUSTOM, PRESET_ORDER, CsvError, is_gpu_row, lesson_number, slugify

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

PROG = "compare_gpus.py"
CPU_LESSON = 1
DEFAULT_THRESHOLD = 0.10
GPU_COLOURS = ("tab:blue", "tab:orange")
LABEL_COLOURS = ("navy", "saddlebrown")
LOG_RANGE = 8.0     # log y axis when the largest bar / smallest bar (or 1.0) exceeds this
LOG_PADDING = 1.8   # headroom factor above and below the bars on a log axis
FONT_SIZE = 13      # for a projector
BAR_PAIR_WIDTH = 0.8


class OutError(Exception):
    """--out cannot be written; the message names the path."""


# ---------------------------------------------------------------- reading

def read_machine(path):
    """(GPU name, {key: row}): the file's GPU rows of lessons other than 01, the last
    row of each key; CsvError when the file holds no GPU rows or several GPUs."""
    rows = [r for r in plot.read_rows(path) if is_gpu_row(r)]
    gpus = plot.unique(r["device"] for r in rows)
    if not gpus:
        raise CsvError(f"{path}: no GPU rows (only a header or CPU rows): nothing to compare")
    if len(gpus) > 1:
        raise CsvError(f"{path}: rows of {len(gpus)} GPUs ({', '.join(gpus)}): "
                       "give one machine's CSV")
    latest = {}
    for r in rows:
        if lesson_number(r["lesson"]) == CPU_LESSON:
            continue
        latest.pop(row_key(r), None)  # the last measurement wins, in its own position
        latest[row_key(r)] = r
    return gpus[0], latest


def shape_of(row):
    return (row["n"], row["cin"], row["cout"], row["h"], row["w"], row["ksize"])


def problem_of(row):
    return (row["preset"],) + shape_of(row)


def fmt_of(row):
    return (row["dtype"], row["layout"])


def row_key(row):
    return (row["lesson"], row["variant"]) + fmt_of(row) + problem_of(row)


def ratio(row):
    """The row's speed-up over cuDNN, or None (FAIL, no cuDNN row, not positive)."""
    v = row["vs_cudnn"]
    return v if row["status"] == "PASS" and v is not None and v > 0 else None


def kernel_rows(rows):
    return {k: r for k, r in rows.items() if r["variant"] != CUDNN}


# ---------------------------------------------------------------- problems

def problem_rank(problem):
    preset, n, cin, cout, h, w, ksize = problem
    position = PRESET_ORDER.index(preset) if preset in PRESET_ORDER else len(PRESET_ORDER)
    return (position, preset == CUSTOM, n * cin * cout * h * w * ksize * ksize, preset, problem)


def problem_labels(problems):
    """{problem: label}: the preset's name, or its shape for custom problems and for a
    preset seen with more than one shape."""
    shapes = {}
    for p in problems:
        shapes.setdefault(p[0], set()).add(p[1:])
    labels = {}
    for p in problems:
        preset, n, cin, cout, h, w, ksize = p
        if n == cin == cout == 1:
            shape = f"{h}x{w} k={ksize}"
        else:
            shape = f"{n}x{cin}x{h}x{w}\u2192{cout} k={ksize}"
        if preset == CUSTOM:
            labels[p] = shape
        elif len(shapes[preset]) > 1:
            labels[p] = f"{preset} {shape}"
        else:
            labels[p] = preset
    return labels


# ---------------------------------------------------------------- matching

def compare(rows_a, rows_b):
    """[{lesson, matched: [(key, row a, row b)], only_a, only_b}] per lesson of either file."""
    kernels_a, kernels_b = kernel_rows(rows_a), kernel_rows(rows_b)
    lessons = sorted(set(r["lesson"] for r in kernels_a.values())
                     | set(r["lesson"] for r in kernels_b.values()))
    result = []
    for lesson in lessons:
        with_a = {k for k, r in kernels_a.items() if r["lesson"] == lesson and ratio(r)}
        with_b = {k for k, r in kernels_b.items() if r["lesson"] == lesson and ratio(r)}
        matched = [(k, kernels_a[k], kernels_b[k]) for k in with_a & with_b]
        result.append({"lesson": lesson, "matched": matched,
                       "in_a": any(r["lesson"] == lesson for r in kernels_a.values()),
                       "in_b": any(r["lesson"] == lesson for r in kernels_b.values()),
                       "only_a": len(with_a - with_b), "only_b": len(with_b - with_a)})
    return result


def change(a, b):
    return b / a - 1.0


def beyond(matched, threshold):
    """The matched rows whose ratio changes by more than threshold, largest change first."""
    rows = [(k, ra, rb) for k, ra, rb in matched
            if abs(change(ratio(ra), ratio(rb))) > threshold]
    # Changes equal to the printed precision rank alike, then by problem and variant.
    return sorted(rows, key=lambda m: (-round(abs(change(ratio(m[1]), ratio(m[2]))), 4),
                                       problem_rank(problem_of(m[1])), m[1]["variant"],
                                       fmt_of(m[1])))


# ---------------------------------------------------------------- Markdown

def md_cell(text):
    return str(text).replace("|", "\\|")


def markdown(gpu_a, gpu_b, path_a, path_b, lessons, threshold):
    names = gpu_names(gpu_a, gpu_b)
    pct = f"{threshold * 100:g} %"
    lines = [f"# Speed-up over cuDNN: {names[0]} (A) against {names[1]} (B)", "",
             f"A: `{path_a}`, B: `{path_b}`. Each ratio is a row's own vs_cudnn (cuDNN time / "
             "kernel time within one run, same precision and layout); rows are matched by "
             "lesson, variant, problem, dtype and layout, PASS on both GPUs.", "",
             f"## Rows whose ratio changes by more than {pct} (|B/A - 1| > {threshold:g})", ""]
    table = []
    for entry in lessons:
        for key, ra, rb in beyond(entry["matched"], threshold):
            a, b = ratio(ra), ratio(rb)
            label = problem_labels([problem_of(ra)])[problem_of(ra)]
            table.append(f"| {md_cell(entry['lesson'])} | {md_cell(ra['variant'])} | "
                         f"{md_cell(label)} | {md_cell('/'.join(fmt_of(ra)))} | "
                         f"{a:#.4g} | {b:#.4g} | {change(a, b) * 100:+.1f} % |")
    if table:
        lines += [f"| lesson | variant | problem | dtype/layout | vs cuDNN on A ({names[0]}) "
                  f"| vs cuDNN on B ({names[1]}) | change B/A - 1 |",
                  "|---|---|---|---|---:|---:|---:|"] + table
    else:
        lines.append(f"No matched row changes by more than {pct}.")
    lines += ["", "## Per lesson", ""]
    for entry in lessons:
        lines.append(f"- {summary(entry, threshold)}")
    return "\n".join(lines) + "\n"


def summary(entry, threshold):
    lesson = entry["lesson"]
    if not entry["in_a"] or not entry["in_b"]:
        return f"{lesson}: only on {'A' if entry['in_a'] else 'B'}, nothing to match"
    n = len(entry["matched"])
    text = (f"{lesson}: {n} row{'' if n == 1 else 's'} matched, "
            f"{len(beyond(entry['matched'], threshold))} beyond {threshold * 100:g} %")
    unmatched = [f"{entry[k]} with a ratio only on {k[-1].upper()}"
                 for k in ("only_a", "only_b") if entry[k]]
    if unmatched:
        text += f" ({', '.join(unmatched)})"
    elif n == 0:
        text += " (no PASS row with a vs_cudnn value)"
    return text


# ---------------------------------------------------------------- the chart

def gpu_names(gpu_a, gpu_b):
    """The legend's names: the GPUs' own, marked A and B when both files name one GPU."""
    return (gpu_a, gpu_b) if gpu_a != gpu_b else (f"{gpu_a} (A)", f"{gpu_b} (B)")


def fastest(rows):
    """{(dtype, layout): {problem: the row with the largest ratio}} of one GPU."""
    best = {}
    for r in rows:
        group = best.setdefault(fmt_of(r), {})
        p = problem_of(r)
        if p not in group or ratio(r) > ratio(group[p]):
            group[p] = r
    return best


def chart_lesson(lesson, gpu_a, gpu_b, rows_a, rows_b):
    """One panel per dtype/layout: per problem, the fastest variant's ratio on A and on
    B side by side; None when no problem has a ratio on both GPUs."""
    pick = [[r for r in rows.values() if r["lesson"] == lesson and r["variant"] != CUDNN
             and ratio(r)] for rows in (rows_a, rows_b)]
    best_a, best_b = fastest(pick[0]), fastest(pick[1])
    panels = []
    for fmt in plot.unique(list(best_a) + list(best_b)):
        both = set(best_a.get(fmt, {})) & set(best_b.get(fmt, {}))
        if both:
            panels.append((fmt, sorted(both, key=problem_rank)))
    if not panels:
        return None
    names = gpu_names(gpu_a, gpu_b)
    with plt.rc_context({"font.size": FONT_SIZE}):
        cols = 1 if len(panels) == 1 else 2
        rows = math.ceil(len(panels) / cols)
        most = max(len(problems) for _, problems in panels)
        width = min(12.0, max(7.0, 1.5 + 0.8 * most))
        fig, axes = plt.subplots(rows, cols, figsize=(width * cols, 4.8 * rows + 1.4),
                                 squeeze=False, layout="constrained")
        for ax, (fmt, problems) in zip(axes.flat, panels):
            draw_panel(ax, problems, best_a[fmt], best_b[fmt])
            if len(panels) > 1 or fmt != ("fp32", "nchw"):
                ax.set_title(" / ".join(fmt), fontweight="bold")
        for ax in list(axes.flat)[len(panels):]:
            ax.set_visible(False)
        handles = [Patch(facecolor=GPU_COLOURS[0], label=f"A: {names[0]}"),
                   Patch(facecolor=GPU_COLOURS[1], label=f"B: {names[1]}"),
                   Line2D([], [], color="black", linestyle="--", label="cuDNN (1.0)")]
        fig.suptitle(f"{lesson}: the fastest variant per problem, speed-up over cuDNN on "
                     "each GPU\n(each ratio from one GPU's own run; higher is better; "
                     "bold names: the GPUs' fastest variants differ)", fontsize=FONT_SIZE + 1)
        fig.legend(handles=handles, loc="outside lower center", ncol=3, frameon=False)
    return fig


def draw_panel(ax, problems, best_a, best_b):
    values = [ratio(best[p]) for best in (best_a, best_b) for p in problems]
    low, high = min(values + [1.0]), max(values + [1.0])
    log = high / low > LOG_RANGE
    if log:
        plot.use_log_scale(ax)
        base = 1.0
        # Room below 1.0 only for bars that go down there.
        ax.set_ylim(low / (LOG_PADDING if low < 1.0 else 1.25), high * LOG_PADDING)
    else:
        base = 0.0
        ax.set_ylim(0.0, high * 1.12)
    width = BAR_PAIR_WIDTH / 2
    for j, p in enumerate(problems):
        ra, rb = best_a[p], best_b[p]
        for i, r in enumerate((ra, rb)):
            ax.bar(j + (i - 0.5) * width, ratio(r) - base, width * 0.95, bottom=base,
                   color=GPU_COLOURS[i], zorder=2)
        foot = min(base, ratio(ra), ratio(rb))
        if ra["variant"] == rb["variant"]:
            variant_label(ax, j, foot, ra["variant"], "black")
        else:
            for i, r in enumerate((ra, rb)):
                variant_label(ax, j + (i - 0.5) * width, foot, r["variant"], LABEL_COLOURS[i],
                              bold=True)
    ax.axhline(1.0, color="black", linewidth=1.3, linestyle="--", zorder=3)
    ax.grid(axis="y", which="major", alpha=0.3)
    ax.set_axisbelow(True)
    labels = problem_labels(problems)
    plot.set_problem_ticks(ax, [labels[p] for p in problems])
    ax.set_ylabel("cuDNN time / kernel time" + (" (log)" if log else ""))


def variant_label(ax, x, y, text, colour, bold=False):
    """The variant's name up its bar (or bar pair), from the lower end y of the bars."""
    ax.annotate(text, (x, y), xytext=(0, 4),
                textcoords="offset points", rotation=90, ha="center", va="bottom",
                fontsize=FONT_SIZE - 2, color=colour, zorder=4,
                fontweight="bold" if bold else "normal",
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.75, "pad": 1})


# ---------------------------------------------------------------- writing

def check_out(out):
    """Creates --out if needed and proves a file can be made in it."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise OutError(f"--out {out} is a file, not a folder")
    try:
        os.makedirs(out, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".compare_gpus.", suffix=".tmp", dir=out)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise OutError(f"--out {out}: cannot write: {e.strerror or e}") from None


def write_text(path, text):
    """Writes under a temporary name in the same folder, then renames it."""
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def threshold_arg(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a finite number >= 0")
    return value


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog=PROG, description="Compare two GPUs' bench CSVs through each kernel's "
        "speed-up over cuDNN (ratios within each run, never times across runs).")
    parser.add_argument("csv_a", metavar="A.csv", help="bench CSV of GPU A")
    parser.add_argument("csv_b", metavar="B.csv", help="bench CSV of GPU B")
    parser.add_argument("--out", metavar="DIR", default=os.path.join(plot.REPO_ROOT, "docs", "img"),
                        help="folder for the PNG and Markdown files (default: docs/img)")
    parser.add_argument("--threshold", type=threshold_arg, default=DEFAULT_THRESHOLD,
                        help="list rows whose ratio changes by more than this, relative "
                        f"(|B/A - 1|; default {DEFAULT_THRESHOLD:g})")
    parser.add_argument("--no-table", action="store_true",
                        help="no Markdown table, neither written nor printed: the charts "
                        "alone (`make plots`)")
    provenance.add_shown_in(parser)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    try:
        gpu_a, rows_a = read_machine(args.csv_a)
        gpu_b, rows_b = read_machine(args.csv_b)
        check_out(args.out)
    except (CsvError, OutError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    stem = f"compare_{slugify(gpu_a)}_{slugify(gpu_b)}"
    lessons = compare(rows_a, rows_b)
    text = markdown(gpu_a, gpu_b, args.csv_a, args.csv_b, lessons, args.threshold)
    shown = provenance.shown_images(args.shown_in)
    written = []
    try:
        for entry in lessons:
            if not entry["in_a"] or not entry["in_b"]:
                continue
            name = f"{stem}_{slugify_lesson(entry['lesson'])}.png"
            if shown is not None and name not in shown:
                continue
            where = {"lesson": [entry["lesson"]]}
            info = provenance.metadata(__file__, [provenance.source(args.csv_a, where),
                                                  provenance.source(args.csv_b, where)])
            fig = chart_lesson(entry["lesson"], gpu_a, gpu_b, rows_a, rows_b)
            if fig is None:
                continue
            plot.save(fig, os.path.join(args.out, name), info)
            written.append(os.path.join(args.out, name))
        if not args.no_table:
            target = os.path.join(args.out, f"{stem}.md")
            write_text(target, text)
            written.append(target)
    except provenance.ProvenanceError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"{PROG}: cannot write {e.filename or args.out}: {e.strerror or e}",
              file=sys.stderr)
        return 2
    if not args.no_table:
        sys.stdout.write(text)
        print()
    for target in written:
        print(f"wrote {target}")
    return 0


def slugify_lesson(lesson):
    """The lesson as plot.py writes it into file names."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", lesson)


if __name__ == "__main__":
    sys.exit(main())
