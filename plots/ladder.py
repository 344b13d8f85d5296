#!/usr/bin/env python3
"""A lesson's ladder: the median time of each step beside cuDNN, one panel per layer.

Reads:  a bench CSV of one ladder run (defaults: lesson 08,
        results/h200/08_ladder/bench_step16.csv; lesson 09,
        results/h200/09_ladder/bench.csv), the PASS rows of the lesson's ladder variants
        and its cuDNN rows at the reference's precision and layout (fp16 NHWC), on the
        few layers the chart shows. When a row was measured several times, the last wins.
Writes: docs/img/<NN>_ladder.png: per layer, one horizontal bar per step in the order of
        the lesson's table (lessons/<NN>_*/main.c), its median time in us, labelled with
        its speed-up over the step before (a branch, over the step it branches off), and
        cuDNN's time in the same run as a dashed line. The PNG records the CSV rows it
        read, the lesson's on those layers, in its metadata (plots/provenance.py).
Exit codes: 0 done; 2 an unknown lesson, the CSV is missing or lacks a row the chart needs.

    python3 plots/ladder.py 08|09 [CSV]
"""
import csv
import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import ticker  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

import provenance  # noqa: E402  (plots/ is on the path)

sys.path.insert(0, str(Path(__file__).resolve().parent / "diagrams"))
from diagram import save  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
# Distinct colours, one per step (black is cuDNN's line).
COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown",
           "tab:pink", "tab:olive", "tab:cyan", "tab:grey", "gold", "navy", "lime", "teal")
# Per lesson: its folder, default CSV, the ladder (variant, what the step adds, the step
# it is measured against: None for the one before), the layers shown, the reference
# (cuDNN's dtype and layout), the x scale and what the steps compute.
LESSONS = {
    "08": {
        "lesson": "08_tensor_cores",
        "csv": REPO / "results" / "h200" / "08_ladder" / "bench_step16.csv",
        "steps": (
            ("wmma_fp16", "WMMA API, one tile at a time", None),
            ("mma_fp16_tiles", "mma.sync, 64x64 warp tiles", None),
            ("mma_fp16_ldmatrix", "+ ldmatrix, swizzled tiles", None),
            ("mma_fp16", "+ 4-stage cp.async ring", None),
            ("wgmma_fp16_cp_async", "Hopper wgmma fed by cp.async", None),
            ("wgmma_fp16_tma", "+ TMA, mbarriers", None),
            ("wgmma_fp16_ws", "+ warp specialisation", None),
            ("wgmma_fp16_wide", "+ 128x256 tiles from 256 out channels", None),
            ("wgmma_fp16_2blocks", "step 7, two blocks per SM", "wgmma_fp16_ws"),
            ("wgmma_fp16_pingpong", "persistent, ping-pong consumers", "wgmma_fp16_wide"),
            ("wgmma_fp16_narrow", "+ 128x64 tiles below 65 out channels", None),
            None,  # step 12, few_channels_fp16: the first layer only (C*R*S <= 32)
            ("wgmma_fp16_halo", "C <= 64: the input once per tile", "wgmma_fp16_narrow"),
            ("wgmma_fp16_staged", "step 11, stores through shared memory", "wgmma_fp16_narrow"),
            None,  # step 15, wgmma_3xtf32: fp32 accuracy, not an fp16 step
            ("wgmma_fp16_persistent", "step 8's tile, persistent, staged stores", "wgmma_fp16_staged"),
        ),
        "presets": ("unet-64x64", "unet-128x128", "unet-1024x1024"),
        "reference": ("fp16", "nhwc"),
        "log_x": False,
        "panel_width": 3.4,
        "what": "fp16 implicit GEMM, NHWC, 3x3, batch 4",
        "title": "Lesson 08: the fp16 tensor-core ladder, step by step, against cuDNN",
    },
    "09": {
        "lesson": "09_binary",
        "csv": REPO / "results" / "h200" / "09_ladder" / "bench.csv",
        "steps": (
            ("float_sign", "lesson 07's fp32 GEMM on +1/-1 floats", None),
            ("seed_layout", "seed 002's design: packed, no reuse", None),
            ("packed_xnor", "XOR + popc, weights in shared memory", None),
            ("bmma", "bit tensor cores (mma .and.popc)", None),
            ("bmma_ring", "+ cp.async ring of 3 stages", None),
            ("bmma_classes", "+ border correction per window class", None),
            ("bmma_rows", "+ stages of a filter row's 3 taps", None),
            ("bmma_and", "+ epilogue tables in shared memory", None),
            ("bmma_fused", "+ sign epilogue: packed bits out", None),
        ),
        "presets": ("bnn-b16c256s28", "bnn-b64c512s14"),
        "reference": ("fp16", "nhwc"),
        "log_x": True,
        "panel_width": 4.0,
        "what": ("+1/-1 conv, 3x3, then alpha and bias; step 1 reads +1/-1 floats,\n"
                 "steps 2-9 read bits, 32 channels to a word, packed before the timed run"),
        "title": "Lesson 09: the binary-convolution ladder, step by step, against cuDNN fp16",
    },
}


def read_rows(path, lesson, presets):
    """{(variant, preset, dtype, layout): row} of the PASS rows (the last of each wins)."""
    rows = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if (row["lesson"] == lesson and row["preset"] in presets
                    and row["status"] == "PASS"):
                rows[(row["variant"], row["preset"], row["dtype"], row["layout"])] = row
    return rows


def find(rows, variant, preset, dtype=None, layout=None):
    """The row of variant on preset (at dtype/layout when given), or None."""
    hits = [r for (v, p, d, lay), r in rows.items() if v == variant and p == preset
            and (dtype is None or d == dtype) and (layout is None or lay == layout)]
    return hits[-1] if hits else None


def layer_title(row):
    n, cin, cout, h, w = (int(row[c]) for c in ("n", "cin", "cout", "h", "w"))
    return f"{row['preset']}\n{n} x {h}x{w}, {cin} -> {cout} channels"


def micro(ms):
    return float(ms) * 1000.0


def fmt_us(us):
    return f"{us:.1f} \N{MICRO SIGN}s" if us < 100 else f"{us:.0f} \N{MICRO SIGN}s"


def ladder_steps(spec):
    """[(number, variant, what, number of the step it is measured against)] of the
    lesson's steps; a step the chart's layers do not run is None in the spec: it keeps
    its number and is not drawn."""
    numbered = list(enumerate(spec["steps"], 1))
    numbers = {step[0]: n for n, step in numbered if step}
    return [(n, step[0], step[1], numbers[step[2]] if step[2] else (n - 1 or None))
            for n, step in numbered if step]


def draw_panel(ax, spec, steps, rows, preset, ref_us):
    times = {n: micro(find(rows, v, preset)["median_ms"]) for n, v, _, _ in steps}
    ys = range(len(steps))
    ax.barh(ys, [times[n] for n, _, _, _ in steps], color=COLOURS[:len(steps)], height=0.7,
            zorder=2)
    ax.axvline(ref_us, color="black", linestyle="--", linewidth=1.2, zorder=3)
    for y, (n, _, _, before) in zip(ys, steps):
        label, colour = fmt_us(times[n]), "black"
        if before is not None:
            speedup = times[before] / times[n]
            label += f"   {speedup:.2f}x"
            if before != n - 1:
                label += f" vs {before}"
            if speedup < 1.0:
                colour = "tab:red"
        ax.annotate(label, (times[n], y), xytext=(4, 0), textcoords="offset points",
                    va="center", fontsize=8.5, color=colour, zorder=4,
                    bbox={"boxstyle": "square,pad=0.1", "facecolor": "white",
                          "edgecolor": "none"})
    longest = max(times.values())
    if spec["log_x"]:
        ax.set_xscale("log")
        low = 10.0 ** math.floor(math.log10(min(list(times.values()) + [ref_us])))
        ax.set_xlim(low, longest * 12)
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: f"{x:g}"))
    else:
        ax.set_xlim(0, longest * 1.45)
    ax.set_ylim(len(steps) - 0.4, -0.6)  # step 1 on top
    ax.set_xlabel("median time per layer, \N{MICRO SIGN}s"
                  + (", log scale" if spec["log_x"] else "") + " (shorter is faster)")
    dtype, layout = spec["reference"]
    ax.set_title(layer_title(find(rows, steps[0][1], preset))
                 + f"\ncuDNN {dtype} {layout.upper()}: {fmt_us(ref_us)}", fontsize=9.5)
    ax.grid(True, axis="x", which="major", alpha=0.3, zorder=0)


def main():
    if len(sys.argv) not in (2, 3) or sys.argv[1] not in LESSONS:
        print(f"usage: ladder.py {'|'.join(LESSONS)} [CSV]", file=sys.stderr)
        return 2
    number = sys.argv[1]
    spec = LESSONS[number]
    path = Path(sys.argv[2]) if len(sys.argv) == 3 else spec["csv"]
    if not path.is_file():
        print(f"ladder.py: {path}: no such file", file=sys.stderr)
        return 2
    rows = read_rows(path, spec["lesson"], spec["presets"])
    steps = ladder_steps(spec)
    dtype, layout = spec["reference"]
    refs = {}
    for preset in spec["presets"]:
        missing = [v for _, v, _, _ in steps if find(rows, v, preset) is None]
        ref = find(rows, "cudnn", preset, dtype, layout)
        if ref is None:
            missing.append(f"cudnn {dtype} {layout}")
        if missing:
            print(f"ladder.py: {path}: no PASS row of {', '.join(missing)} on {preset}",
                  file=sys.stderr)
            return 2
        refs[preset] = micro(ref["median_ms"])
    device = find(rows, "cudnn", spec["presets"][0], dtype, layout)["device"]

    width = 2.9 + spec["panel_width"] * len(spec["presets"])
    fig, axes = plt.subplots(1, len(spec["presets"]), figsize=(width, 5.4), sharey=True)
    for ax, preset in zip(axes, spec["presets"]):
        draw_panel(ax, spec, steps, rows, preset, refs[preset])
    axes[0].set_yticks(range(len(steps)),
                       [f"{n}  {v}\n{what}" for n, v, what, _ in steps], fontsize=8.5)
    for ax in axes[1:]:
        ax.tick_params(axis="y", length=0)
    fig.suptitle(f"{spec['title']} ({device})\n{spec['what']}", fontsize=11.5)
    handles = [Line2D([], [], color="black", linestyle="--", label=f"cuDNN {dtype} "
                      f"{layout.upper()}, same run (its fastest algorithm)")]
    fig.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.01, 0.0), frameon=False,
               fontsize=8.5)
    against = [f"step {n} against step {before}" for n, _, _, before in steps
               if before is not None and before != n - 1]
    note = ("bar label: median time, then the speed-up over the step before"
            + (f" ({', '.join(against)})" if against else "") + "; red: slower than it")
    fig.text(0.99, 0.045, note, ha="right", va="bottom", fontsize=8.5)
    fig.text(0.99, 0.005, f"{provenance.repo_path(path)}: rows of the same run",
             ha="right", va="bottom", fontsize=8, color="dimgrey")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    where = {"lesson": [spec["lesson"]], "preset": list(spec["presets"])}
    save(fig, f"{number}_ladder.png",
         metadata=provenance.metadata(__file__, [provenance.source(path, where)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
