"""Draws lesson 04's three tilings (tile + halo) to docs/img/04_tiles.png.

    python3 plots/diagrams/04_tiles.py

Small sizes so every cell is visible: radius 2, an 8x8-thread input tile for (a)
and an 8x4 output tile for (b) and (c). The kernels use radius ksize/2, 32x32
threads for (a) and 32x8 for (b) and (c); the shapes of the pictures stay the same.
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch, Rectangle  # noqa: E402
from diagram import frame, save  # noqa: E402

RADIUS = 2
IN_TILE = 8  # (a): threads per side of the block = input tile
BLOCK_W, BLOCK_H = 8, 4  # (b), (c): threads of the block = output tile

OUTPUT_COLOUR = "#4c72b0"
HALO_COLOUR = "#f2b134"
PASS_COLOURS = ["#8fbc8f", "#b39ddb", "#e6a1a1", "#9fd3d6"]
GLOBAL_COLOUR = "#d9d9d9"

OUT_NAME = "04_tiles.png"


def cell(ax, x, y, colour, hatch=None, alpha=1.0):
    """One pixel at column x, row y (row 0 at the top)."""
    ax.add_patch(Rectangle((x, -y - 1), 1, 1, facecolor=colour, edgecolor="white",
                           linewidth=0.8, hatch=hatch, alpha=alpha))


def outline(ax, x, y, w, h, style="-", colour="black", width=2.0):
    ax.add_patch(Rectangle((x, -y - h), w, h, fill=False, edgecolor=colour,
                           linestyle=style, linewidth=width))


def finish(ax, title, w, h, caption):
    frame(ax, (-0.5, w + 0.5), (-h - 0.5, 0.5))
    ax.set_title(title, fontsize=11, loc="left")
    ax.text(0, -h - 1.0, caption, fontsize=8.5, va="top", family="monospace")


def tile_in(ax):
    """(a) every thread loads one input pixel; only the inner ones compute."""
    out_tile = IN_TILE - 2 * RADIUS
    for y in range(IN_TILE):
        for x in range(IN_TILE):
            inner = RADIUS <= x < RADIUS + out_tile and RADIUS <= y < RADIUS + out_tile
            cell(ax, x, y, OUTPUT_COLOUR if inner else HALO_COLOUR)
    outline(ax, 0, 0, IN_TILE, IN_TILE)
    outline(ax, RADIUS, RADIUS, out_tile, out_tile, style="--", colour="white")
    idle = IN_TILE * IN_TILE - out_tile * out_tile
    finish(ax, "(a) tile_in: block = input tile", IN_TILE, IN_TILE,
           f"{IN_TILE}x{IN_TILE} threads, 1 load each\n"
           f"{out_tile}x{out_tile} compute, {idle} idle\n"
           "code: 32x32 threads,\n(32-2r)^2 compute")


def tile_out(ax):
    """(b) the input tile is bigger than the block: it is loaded in passes."""
    tile_w, tile_h = BLOCK_W + 2 * RADIUS, BLOCK_H + 2 * RADIUS
    for y in range(tile_h):
        for x in range(tile_w):
            load_pass = (y // BLOCK_H) * 2 + x // BLOCK_W
            cell(ax, x, y, PASS_COLOURS[load_pass % len(PASS_COLOURS)])
    outline(ax, 0, 0, tile_w, tile_h)
    outline(ax, RADIUS, RADIUS, BLOCK_W, BLOCK_H, style="--", colour=OUTPUT_COLOUR, width=2.5)
    finish(ax, "(b) tile_out: block = output tile", tile_w, tile_h,
           f"{BLOCK_W}x{BLOCK_H} threads load {tile_w}x{tile_h} pixels\n"
           "in 4 passes (colours), then all\n32 threads compute (blue dashes)\n"
           "code: 32x8 threads")


def tile_cached_halo(ax):
    """(c) only the block's own pixels in shared memory; the halo is read from L1/L2."""
    tile_w, tile_h = BLOCK_W + 2 * RADIUS, BLOCK_H + 2 * RADIUS
    for y in range(tile_h):
        for x in range(tile_w):
            inner = RADIUS <= x < RADIUS + BLOCK_W and RADIUS <= y < RADIUS + BLOCK_H
            if inner:
                cell(ax, x, y, OUTPUT_COLOUR)
            else:
                cell(ax, x, y, GLOBAL_COLOUR, hatch="///")
    outline(ax, RADIUS, RADIUS, BLOCK_W, BLOCK_H)
    # The window of the block's top-left output: part shared memory, part cache.
    outline(ax, 0, 0, 2 * RADIUS + 1, 2 * RADIUS + 1, colour="#c44e52", width=2.0)
    finish(ax, "(c) tile_cached_halo: halo from cache", tile_w, tile_h,
           f"{BLOCK_W}x{BLOCK_H} in shared memory; hatched\n"
           "halo read from global (L1/L2):\nneighbour blocks' pixels\n"
           "red: one output's window,\npartly shared, partly global")


def main():
    fig, axes = plt.subplots(1, 3, figsize=(13, 5.6),
                             gridspec_kw={"width_ratios": [IN_TILE, BLOCK_W + 2 * RADIUS,
                                                           BLOCK_W + 2 * RADIUS]})
    tile_in(axes[0])
    tile_out(axes[1])
    tile_cached_halo(axes[2])
    fig.legend(handles=[
        Patch(facecolor=OUTPUT_COLOUR, label="pixel whose thread computes an output"),
        Patch(facecolor=HALO_COLOUR, label="halo: loaded, thread idle while computing"),
        Patch(facecolor=GLOBAL_COLOUR, hatch="///", label="halo read from global memory"),
    ], loc="upper center", bbox_to_anchor=(0.5, 0.94), ncol=3, fontsize=9, frameon=False)
    fig.suptitle(f"Shared-memory tiles for a {2 * RADIUS + 1}x{2 * RADIUS + 1} filter "
                 f"(radius {RADIUS})", fontsize=12)
    fig.subplots_adjust(left=0.02, right=0.98, top=0.84, bottom=0.02, wspace=0.12)
    save(fig, OUT_NAME)


if __name__ == "__main__":
    main()
