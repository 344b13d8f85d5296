"""Draws lesson 12's split by rows to docs/img/12_slabs_and_halos.png.

    python3 plots/diagrams/12_slabs_and_halos.py

(a) One image of 12 rows over two GPUs, a 3x3 filter (halo of 1 row): each GPU owns a
band of rows and holds, above or below it, the halo rows its neighbour owns, which the
exchange fills. (b) What each GPU does in a run, as a timeline (a sketch, not a
measurement): rows_blocking exchanges, then computes its band; rows_overlap computes
the interior while the halo travels on a high-priority stream, then the edge rows.
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch, Rectangle  # noqa: E402
from diagram import save  # noqa: E402

ROWS, COLS, HALO = 12, 10, 1
GPU_COLOURS = ("#4c72b0", "#55a868")
HALO_COLOUR = "#f2b134"
EDGE_COLOUR = "#c44e52"
EXCHANGE_COLOUR = "#8172b2"
OUT_NAME = "12_slabs_and_halos.png"


def band(ax, x0, first, rows, colour, label, hatch=None):
    ax.add_patch(Rectangle((x0, -first - rows), COLS, rows, facecolor=colour,
                           edgecolor="white", linewidth=0.8, hatch=hatch))
    ax.text(x0 + COLS / 2, -first - rows / 2, label, ha="center", va="center", fontsize=9,
            color="white" if hatch is None else "black")


def slabs(ax):
    half = ROWS // 2
    ax.text(COLS / 2, 1.2, "the image", ha="center", fontsize=10)
    band(ax, 0, 0, half, GPU_COLOURS[0], "rows 0-5: GPU 0")
    band(ax, 0, half, half, GPU_COLOURS[1], "rows 6-11: GPU 1")
    gap, between = 4, 6
    for g, (first, rows) in enumerate(((0, half), (half, half))):
        x0 = COLS + gap + g * (COLS + between)
        ax.text(x0 + COLS / 2, 1.2, f"GPU {g} holds", ha="center", fontsize=10)
        band(ax, x0, first, rows, GPU_COLOURS[g], "its band")
        halo_row = first + rows if g == 0 else first - HALO
        band(ax, x0, halo_row, HALO, HALO_COLOUR, f"row {halo_row}", hatch="//")
    left, right = COLS + gap + COLS, COLS + gap + COLS + between
    ax.annotate("", xy=(left + 0.2, -half - 0.5), xytext=(right - 0.2, -half - 0.5),
                arrowprops=dict(arrowstyle="->", color=EXCHANGE_COLOUR, lw=2))
    ax.annotate("", xy=(right - 0.2, -half + 0.5), xytext=(left + 0.2, -half + 0.5),
                arrowprops=dict(arrowstyle="->", color=EXCHANGE_COLOUR, lw=2))
    ax.text((left + right) / 2, -half - 3.0, "the exchange:\nrow 5 down,\nrow 6 up",
            ha="center", fontsize=9, color=EXCHANGE_COLOUR)
    ax.set_xlim(-0.5, 3 * COLS + gap + between + 1)
    ax.set_ylim(-ROWS - 2.5, 2.2)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title("(a) a band of rows per GPU, and the halo it borrows", fontsize=11)


def bar(ax, y, start, length, colour, text, hatch=None):
    ax.add_patch(Rectangle((start, y), length, 0.8, facecolor=colour, edgecolor="white",
                           hatch=hatch))
    ax.text(start + length / 2, y + 0.4, text, ha="center", va="center", fontsize=8,
            color="white" if hatch is None else "black")


def timelines(ax):
    exchange, band_time, edges, copy = 2.0, 10.0, 0.8, 0.3
    bar(ax, 3, 0, exchange, EXCHANGE_COLOUR, "halo")
    bar(ax, 3, exchange, band_time, GPU_COLOURS[0], "band, halo included")
    ax.text(-0.3, 3.4, "rows_blocking", ha="right", va="center", fontsize=9)
    interior = band_time - edges
    bar(ax, 1.4, 0, exchange, EXCHANGE_COLOUR, "halo")
    bar(ax, 1.4, exchange, edges, EDGE_COLOUR, "")
    bar(ax, 1.4, interior, copy, EDGE_COLOUR, "", hatch="//")
    ax.text(-0.3, 1.8, "rows_overlap, comm", ha="right", va="center", fontsize=9)
    bar(ax, 0.4, 0, interior, GPU_COLOURS[0], "interior (no halo needed)")
    ax.text(-0.3, 0.8, "rows_overlap, compute", ha="right", va="center", fontsize=9)
    ax.set_xlim(-7, band_time + exchange + 0.5)
    ax.set_ylim(0, 5.2)
    ax.axis("off")
    ax.legend(handles=[Patch(color=EXCHANGE_COLOUR, label="NCCL send/receive"),
                       Patch(color=EDGE_COLOUR, label="edge rows, which read the halo"),
                       Patch(facecolor=EDGE_COLOUR, hatch="//",
                             label="their copy, once the interior is done")],
              loc="upper right", ncol=3, fontsize=8, frameon=False)
    ax.set_title("(b) one GPU's run: the exchange before the band, or under the interior",
                 fontsize=11)


def main():
    fig, (a, b) = plt.subplots(2, 1, figsize=(9, 8), gridspec_kw={"height_ratios": [3, 1.4]})
    slabs(a)
    timelines(b)
    fig.tight_layout()
    save(fig, OUT_NAME)


if __name__ == "__main__":
    main()
