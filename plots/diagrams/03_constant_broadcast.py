"""Draws lesson 03's constant-memory broadcast to docs/img/03_constant_broadcast.png.

    python3 plots/diagrams/03_constant_broadcast.py

One warp (32 threads) at one filter tap (i, j). (a) Lesson 02: the tap is a load from
global memory, the same address for all 32 threads, issued next to the input load of
the same tap. (b) Lesson 03: the tap comes from the constant cache, one read broadcast
to the warp; only the input load goes through L1. (c) The trap: threads that read
different constant addresses get their reads one after another.
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402
from diagram import frame, save  # noqa: E402

LANES = 32
THREAD_COLOUR = "#4c72b0"
INPUT_COLOUR = "#8fbc8f"
FILTER_COLOUR = "#f2b134"
SERIAL_COLOUR = "#e6a1a1"
OUT_NAME = "03_constant_broadcast.png"


def box(ax, x, y, w, h, colour, text=None, size=8, text_colour="black"):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=colour, edgecolor="white", linewidth=0.8))
    if text:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=size,
                color=text_colour)


def arrow(ax, start, end, colour="#555555", width=0.8):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=7,
                                 color=colour, linewidth=width, shrinkA=0, shrinkB=0))


def warp(ax, y):
    """The 32 lanes of one warp as a row of cells, lane 0 on the left."""
    for lane in range(LANES):
        box(ax, lane, y, 1, 1, THREAD_COLOUR)
    ax.text(-0.6, y + 0.5, "warp", ha="right", va="center", fontsize=9)
    ax.text(0.5, y + 1.25, "t0", ha="center", fontsize=7)
    ax.text(LANES - 0.5, y + 1.25, "t31", ha="center", fontsize=7)


def input_row(ax, y, caption):
    """The 32 neighbouring input floats the warp reads for this tap: 4 or 5 sectors."""
    for lane in range(LANES):
        box(ax, lane, y, 1, 1, INPUT_COLOUR)
    for sector in range(0, LANES, 8):
        ax.add_patch(Rectangle((sector, y), 8, 1, fill=False, edgecolor="black",
                               linewidth=1.0))
    ax.text(LANES + 0.6, y + 0.5, caption, va="center", fontsize=8.5)


def panel_global(ax):
    warp(ax, 3)
    input_row(ax, 0, "in[y+i-r][x+j-r ...]: 32 floats,\n4 or 5 sectors through L1")
    box(ax, 13, 6, 6, 1, FILTER_COLOUR, "weights[i*ksize+j]", size=7.5)
    ax.text(LANES + 0.6, 6.5, "the tap: one address, but its own\nload instruction "
            "through L1", va="center", fontsize=8.5)
    for lane in (0, 8, 16, 24, 31):
        arrow(ax, (lane + 0.5, 1.05), (lane + 0.5, 2.95), colour="#6b8e6b")
        arrow(ax, (16, 5.95), (lane + 0.5, 4.05), colour="#b8860b", width=0.6)
    ax.set_title("(a) lesson 02: filter in global memory, 2 loads per tap", loc="left",
                 fontsize=11)


def panel_broadcast(ax):
    warp(ax, 3)
    input_row(ax, 0, "in[...]: the one load left per tap")
    box(ax, 13, 6, 6, 1, FILTER_COLOUR, "filter_const[i*K+j]", size=7.5)
    ax.text(LANES + 0.6, 6.5, "constant cache: one read,\nbroadcast to all 32 lanes",
            va="center", fontsize=8.5)
    ax.plot([16, 16], [6, 5], color="#b8860b", linewidth=1.6)
    ax.plot([0.5, LANES - 0.5], [5, 5], color="#b8860b", linewidth=1.6)
    for lane in range(LANES):
        arrow(ax, (lane + 0.5, 5), (lane + 0.5, 4.05), colour="#b8860b", width=0.6)
    for lane in (0, 8, 16, 24, 31):
        arrow(ax, (lane + 0.5, 1.05), (lane + 0.5, 2.95), colour="#6b8e6b")
    ax.set_title("(b) lesson 03: __constant__ filter, the same address in every lane",
                 loc="left", fontsize=11)


def panel_serialised(ax):
    warp(ax, 3)
    for lane in range(LANES):
        box(ax, lane, 6, 1, 1, SERIAL_COLOUR, str(lane) if lane % 4 == 0 else None,
            size=6.5)
        if lane % 4 == 0:
            arrow(ax, (lane + 0.5, 5.95), (lane + 0.5, 4.05), colour="#c44e52", width=0.6)
    ax.text(LANES + 0.6, 6.5, "c[threadIdx.x]: 32 addresses,\nread one after another",
            va="center", fontsize=8.5)
    ax.text(LANES + 0.6, 3.5, "the same instruction\ncosts up to 32 reads", va="center",
            fontsize=8.5)
    ax.set_title("(c) the trap: constant memory indexed by thread", loc="left", fontsize=11)


def main():
    fig, axes = plt.subplots(3, 1, figsize=(10, 7.2))
    panel_global(axes[0])
    panel_broadcast(axes[1])
    panel_serialised(axes[2])
    for ax in axes:
        frame(ax, (-4, LANES + 12), (-0.4, 7.6))
    fig.suptitle("One warp at one filter tap (i, j): where the 32 threads' operands come "
                 "from (arrows: data)", fontsize=12)
    fig.subplots_adjust(left=0.02, right=0.98, top=0.91, bottom=0.02, hspace=0.3)
    save(fig, OUT_NAME)


if __name__ == "__main__":
    main()
