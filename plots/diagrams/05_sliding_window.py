"""Draws lesson 05's register windows to docs/img/05_sliding_window.png.

    python3 plots/diagrams/05_sliding_window.py

For a 5x5 filter (R = 2). (a) The horizontal window of conv2d_row_tile with 16-byte
loads: one thread loads OUTS + 2*HALO = 16 floats of an input row as four float4s
(HALO = R rounded up to 4) and output m reads floats m + 2 .. m + 6 of them. (b) The
vertical window of conv2d_sliding_window: the thread walks down its strip's input rows
once; input row t meets output row u with filter row i = t - u, so each row that arrives
is added into K = 5 output rows at once. The kernels use strips of up to 32 rows; six
are drawn.
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch, Rectangle  # noqa: E402
from diagram import frame, save  # noqa: E402

R = 2
K = 2 * R + 1
VEC = 4
HALO = (R + VEC - 1) // VEC * VEC
OUTS = 8
SPAN = OUTS + 2 * HALO
STRIP_ROWS = 6

INPUT_COLOUR = "#8fbc8f"
UNUSED_COLOUR = "#d9d9d9"
OUTPUT_COLOUR = "#4c72b0"
WINDOW_COLOUR = "#f2b134"
NOW_COLOUR = "#c44e52"
OUT_NAME = "05_sliding_window.png"


def cell(ax, x, y, colour, text=None, hatch=None, size=8, text_colour="black"):
    ax.add_patch(Rectangle((x, y), 1, 1, facecolor=colour, edgecolor="white",
                           linewidth=0.8, hatch=hatch))
    if text is not None:
        ax.text(x + 0.5, y + 0.5, text, ha="center", va="center", fontsize=size,
                color=text_colour)


def horizontal(ax):
    """(a) one thread's row segment in registers and the outputs that read it."""
    used_lo, used_hi = HALO - R, HALO + R + OUTS - 1
    for e in range(SPAN):
        used = used_lo <= e <= used_hi
        cell(ax, e, 3, INPUT_COLOUR if used else UNUSED_COLOUR, str(e),
             hatch=None if used else "///")
    for q in range(SPAN // VEC):
        ax.add_patch(Rectangle((q * VEC, 3), VEC, 1, fill=False, edgecolor="black",
                               linewidth=1.4))
        ax.text(q * VEC + VEC / 2, 4.25, f"float4 {q}", ha="center", fontsize=8)
    for m in range(OUTS):
        cell(ax, HALO + m, 0, OUTPUT_COLOUR, f"out {m}", size=7, text_colour="white")
    for m, y in ((0, 1.35), (OUTS - 1, 2.05)):
        first = HALO - R + m
        ax.add_patch(Rectangle((first, y), K, 0.45, facecolor=WINDOW_COLOUR,
                               edgecolor="black", linewidth=0.8))
        ax.text(first + K / 2, y + 0.22, f"out {m}: floats {first}..{first + K - 1}",
                ha="center", va="center", fontsize=7.5)
    ax.text(SPAN + 0.5, 3.5, "one input row,\nin registers:\n4 loads of 16 bytes",
            va="center", fontsize=8.5)
    ax.text(SPAN + 0.5, 0.5, f"{OUTS} outputs of\nthe thread", va="center", fontsize=8.5)
    frame(ax, (-0.5, SPAN + 6), (-0.6, 5))
    ax.set_title(f"(a) horizontal window: {OUTS} outputs share one row segment "
                 f"({K}x{K}, HALO = {HALO})", loc="left", fontsize=11)


def vertical(ax):
    """(b) input row t (columns) against output row u (rows): filter row t - u."""
    steps = STRIP_ROWS + 2 * R
    now = 5
    for t in range(steps):
        ax.text(t + 0.5, STRIP_ROWS + 0.3, str(t), ha="center", fontsize=8)
        for u in range(STRIP_ROWS):
            i = t - u
            y = STRIP_ROWS - 1 - u
            if 0 <= i < K:
                colour = NOW_COLOUR if t == now else WINDOW_COLOUR
                cell(ax, t, y, colour, f"i={i}", size=7,
                     text_colour="white" if t == now else "black")
                if i == 0:
                    ax.plot([t, t], [y, y + 1], color="#2f6f2f", linewidth=2.5)
                if i == K - 1:
                    ax.plot([t + 1, t + 1], [y, y + 1], color="black", linewidth=2.5)
            else:
                cell(ax, t, y, "#f4f4f4")
    for u in range(STRIP_ROWS):
        ax.text(-0.3, STRIP_ROWS - 1 - u + 0.5, f"out row {u}", ha="right", va="center",
                fontsize=8)
    ax.text(steps / 2, STRIP_ROWS + 0.9, "input row t of the walk (image row y0 - R + t)",
            ha="center", fontsize=9)
    ax.text(steps + 0.4, STRIP_ROWS - 1,
            f"red: row t = {now} just loaded,\nadded into {K} output rows\n"
            f"with filter rows {K - 1} .. 0",
            va="top", fontsize=8.5, color=NOW_COLOUR)
    ax.text(steps + 0.4, 2.2,
            "green edge: the row starts\n(bias + filter row 0)\n"
            "black edge: the row is done\n(filter row K-1), stored",
            va="top", fontsize=8.5)
    frame(ax, (-3.2, steps + 7.5), (-0.6, STRIP_ROWS + 1.4))
    ax.set_title(f"(b) vertical window: each input row loaded once, {K} accumulator rows "
                 "live at once", loc="left", fontsize=11)


def main():
    fig, axes = plt.subplots(2, 1, figsize=(10, 7.6),
                             gridspec_kw={"height_ratios": [5.6, STRIP_ROWS + 2]})
    horizontal(axes[0])
    vertical(axes[1])
    fig.legend(handles=[
        Patch(facecolor=INPUT_COLOUR, label="input float in registers"),
        Patch(facecolor=UNUSED_COLOUR, hatch="///", label="loaded, not used (halo rounded to 4)"),
        Patch(facecolor=WINDOW_COLOUR, label="a window: the floats / rows one output reads"),
    ], loc="upper center", bbox_to_anchor=(0.5, 0.955), ncol=3, fontsize=8.5, frameon=False)
    fig.suptitle(f"Register tiling for a {K}x{K} filter: one thread's windows", fontsize=12)
    fig.subplots_adjust(left=0.02, right=0.98, top=0.88, bottom=0.02, hspace=0.25)
    save(fig, OUT_NAME)


if __name__ == "__main__":
    main()
