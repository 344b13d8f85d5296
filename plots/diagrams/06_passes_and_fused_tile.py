"""Draws lesson 06's two passes and fused tile to docs/img/06_passes_and_fused_tile.png.

    python3 plots/diagrams/06_passes_and_fused_tile.py

(a) two_pass: the row pass writes a whole intermediate image to DRAM and the column
pass reads it back: 16 bytes per pixel. (b) fused_smem: one block's tile in one kernel.
Phase 1 row-filters the tile's rows and r rows above and below it into shared memory
(mid); after a barrier, phase 2 column-filters mid into the output tile: 8 bytes per
pixel. Drawn small (a 16 x 8 output tile, radius 2); the kernel's tile is 128 x 64
outputs and its rows are loaded with the halo rounded up to 4 columns.
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle  # noqa: E402
from diagram import frame, save  # noqa: E402

R = 2
HALO = 4  # R rounded up to 4 columns, as the 16-byte loads need
TILE_W, TILE_H = 16, 8
INPUT_COLOUR = "#8fbc8f"
MID_COLOUR = "#f2b134"
OUTPUT_COLOUR = "#4c72b0"
HALO_COLOUR = "#d9d9d9"
DRAM_COLOUR = "#e6a1a1"
OUT_NAME = "06_passes_and_fused_tile.png"


def grid(ax, x0, y0, w, h, colour_at, label=None):
    """A w x h block of pixels with its top-left at (x0, y0), row 0 on top."""
    for y in range(h):
        for x in range(w):
            colour, hatch = colour_at(x, y)
            ax.add_patch(Rectangle((x0 + x, y0 - y - 1), 1, 1, facecolor=colour,
                                   edgecolor="white", linewidth=0.6, hatch=hatch))
    ax.add_patch(Rectangle((x0, y0 - h), w, h, fill=False, edgecolor="black", linewidth=1.2))
    if label:
        ax.text(x0 + w / 2, y0 + 0.5, label, ha="center", va="bottom", fontsize=9)


def arrow(ax, start, end, text, colour="#555555"):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=11,
                                 color=colour, linewidth=1.4))
    ax.text((start[0] + end[0]) / 2, max(start[1], end[1]) + 0.4, text, ha="center",
            va="bottom", fontsize=8.5)


def two_pass(ax):
    size = 8
    plain = lambda colour: (lambda x, y: (colour, None))  # noqa: E731
    grid(ax, 0, 0, size, size, plain(INPUT_COLOUR), "in (DRAM)")
    grid(ax, 14, 0, size, size, plain(DRAM_COLOUR), "mid (DRAM)")
    grid(ax, 28, 0, size, size, plain(OUTPUT_COLOUR), "out (DRAM)")
    arrow(ax, (size + 0.4, -size / 2), (13.6, -size / 2),
          "row_pass\nread 4 B, write 4 B")
    arrow(ax, (22.4, -size / 2), (27.6, -size / 2), "column_pass\nread 4 B, write 4 B")
    ax.text(37, -size / 2, "two launches,\n16 bytes per pixel\nthrough DRAM", va="center",
            fontsize=9)
    frame(ax, (-1, 46), (-size - 1, 2.2))
    ax.set_title("(a) two_pass: the intermediate image goes to DRAM and back", loc="left",
                 fontsize=11)


def fused(ax):
    in_w, rows = TILE_W + 2 * HALO, TILE_H + 2 * R

    def input_colour(x, y):
        inside_cols = HALO - R <= x < HALO + TILE_W + R
        if not inside_cols:
            return HALO_COLOUR, "///"
        return INPUT_COLOUR, None

    def mid_colour(x, y):
        return (MID_COLOUR, "..") if y < R or y >= R + TILE_H else (MID_COLOUR, None)

    grid(ax, 0, 0, in_w, rows, input_colour, "input rows the block loads")
    grid(ax, in_w + 5, 0, TILE_W, rows, mid_colour, "mid: shared memory")
    grid(ax, in_w + TILE_W + 12, -R, TILE_W, TILE_H, lambda x, y: (OUTPUT_COLOUR, None),
         "output tile")
    arrow(ax, (in_w + 0.4, -rows / 2), (in_w + 4.6, -rows / 2), "phase 1:\nrow pass")
    arrow(ax, (in_w + TILE_W + 5.4, -rows / 2), (in_w + TILE_W + 11.6, -rows / 2),
          "barrier, then\nphase 2:\ncolumn pass")
    ax.text(0, -rows - 0.8,
            f"TILE_H + 2r = {rows} rows of {in_w} floats (halo r = {R} rounded up to "
            f"{HALO} columns: hatched, loaded and unused)\n"
            f"mid: {rows} rows x {TILE_W} values; the dotted {R} rows above and below "
            f"are row-filtered here and again by the neighbouring tiles\n"
            "mid never goes to DRAM: the minimum traffic is 8 bytes per pixel (the halo "
            "rows and columns the neighbouring tiles load again mostly come from L2);\n"
            "rows outside the image load as zeros, which is the 2-D convolution's padding",
            va="top", fontsize=8.5)
    frame(ax, (-1, in_w + 2 * TILE_W + 14), (-rows - 4.2, 2.2))
    ax.set_title(f"(b) fused_smem: one block's tile, drawn {TILE_W} x {TILE_H} "
                 "(the kernel's is 128 x 64)", loc="left", fontsize=11)


def main():
    fig, axes = plt.subplots(2, 1, figsize=(11, 7.6), gridspec_kw={"height_ratios": [10, 17]})
    two_pass(axes[0])
    fused(axes[1])
    fig.legend(handles=[
        Patch(facecolor=INPUT_COLOUR, label="input"),
        Patch(facecolor=MID_COLOUR, label="row-filtered (mid)"),
        Patch(facecolor=OUTPUT_COLOUR, label="output"),
        Patch(facecolor=DRAM_COLOUR, label="intermediate written to DRAM"),
    ], loc="upper center", bbox_to_anchor=(0.5, 0.95), ncol=4, fontsize=8.5, frameon=False)
    fig.suptitle(f"A separable {2 * R + 1}x{2 * R + 1} filter: two passes through DRAM, "
                 "or one fused tile", fontsize=12)
    fig.subplots_adjust(left=0.02, right=0.98, top=0.89, bottom=0.02, hspace=0.2)
    save(fig, OUT_NAME)


if __name__ == "__main__":
    main()
