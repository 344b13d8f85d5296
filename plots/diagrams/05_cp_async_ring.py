"""Draws lesson 05's cp.async ring (strip_ring) to docs/img/05_cp_async_ring.png.

    python3 plots/diagrams/05_cp_async_ring.py

conv2d_ring_window with RING_STAGES = 4: a block's input rows pass through a ring of 4
shared-memory rows. Before the walk the block starts the copies of rows 0, 1 and 2. At
step t every thread waits until its copies of row t have landed (wait_copies<2>), the
block passes one __syncthreads() (row t has landed for everyone, and everyone is done
with row t - 1), the copy of row t + 3 starts into the slot row t - 1 leaves, and the
FMAs read row t from shared memory. Three rows are always on their way, and none of
them holds a register.
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle  # noqa: E402
from diagram import frame, save  # noqa: E402

STAGES = 4
STEPS = 8
COMPUTE_COLOUR = "#4c72b0"
FLIGHT_COLOUR = "#f2b134"
ISSUED_COLOUR = "#fbe3a6"
MEMORY_COLOUR = "#8fbc8f"
REGISTER_COLOUR = "#b39ddb"
OUT_NAME = "05_cp_async_ring.png"


def box(ax, x, y, w, h, colour, text=None, size=8, hatch=None, text_colour="black"):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=colour, edgecolor="white",
                           linewidth=1.0, hatch=hatch))
    if text:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=size,
                color=text_colour)


def arrow(ax, start, end, text=None):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=10,
                                 color="#555555", linewidth=1.2))
    if text:
        ax.text((start[0] + end[0]) / 2, (start[1] + end[1]) / 2 + 0.25, text,
                ha="center", va="bottom", fontsize=8)


def path(ax):
    """Where a row goes: DRAM -> shared ring (cp.async) -> registers (16-byte loads)."""
    y = STAGES + 1.3
    box(ax, 0, y, 3.4, 1, MEMORY_COLOUR, "input row in DRAM / L2", size=8)
    box(ax, 6.2, y, 3.4, 1, FLIGHT_COLOUR, "shared ring, 4 rows", size=8)
    box(ax, 12.4, y, 4.2, 1, REGISTER_COLOUR, "registers: acc[K][OUTS]", size=8)
    arrow(ax, (3.45, y + 0.5), (6.15, y + 0.5), "cp.async: no register")
    arrow(ax, (9.65, y + 0.5), (12.35, y + 0.5), "LDS.128, row t only")


def ring(ax):
    """Slot (rows) against step t (columns): what each slot holds after the barrier."""
    for t in range(STEPS):
        ax.text(2 * t + 1, STAGES + 0.3, f"step {t}", ha="center", fontsize=8.5)
        for slot in range(STAGES):
            y = STAGES - 1 - slot
            row = t + (slot - t) % STAGES  # the row of the walk this slot holds now
            if row == t:
                box(ax, 2 * t, y, 2, 1, COMPUTE_COLOUR, f"row {row}\nFMAs read it",
                    size=7, text_colour="white")
            elif row == t + STAGES - 1:
                box(ax, 2 * t, y, 2, 1, ISSUED_COLOUR, f"row {row}\ncopy started",
                    size=7, hatch="..")
            else:
                box(ax, 2 * t, y, 2, 1, FLIGHT_COLOUR, f"row {row}\non its way", size=7)
    for slot in range(STAGES):
        ax.text(-0.3, STAGES - 1 - slot + 0.5, f"slot {slot}", ha="right", va="center",
                fontsize=8.5)
    ax.text(0, -0.35, "per step t: wait_copies<2> (my copies of row t landed) -> "
            "__syncthreads (row t landed for all; all done with row t-1)\n"
            "-> cp.async of row t+3 into the slot row t-1 leaves -> K x OUTS FMAs with row t "
            "-> store output row t-2R", fontsize=8.5, va="top")


def main():
    fig, ax = plt.subplots(figsize=(11, 4.4))
    path(ax)
    ring(ax)
    frame(ax, (-2, 2 * STEPS + 0.5), (-1.6, STAGES + 2.6))
    fig.legend(handles=[
        Patch(facecolor=COMPUTE_COLOUR, label="row t: the FMAs read it from shared memory"),
        Patch(facecolor=FLIGHT_COLOUR, label="rows t+1, t+2: copies on their way or landed"),
        Patch(facecolor=ISSUED_COLOUR, hatch="..", label="row t+3: copy started this step"),
    ], loc="upper center", bbox_to_anchor=(0.5, 0.93), ncol=3, fontsize=8.5, frameon=False)
    fig.suptitle("strip_ring: a ring of 4 shared rows filled by cp.async, 3 rows always in "
                 "flight", fontsize=12)
    fig.subplots_adjust(left=0.02, right=0.98, top=0.86, bottom=0.02)
    save(fig, OUT_NAME)


if __name__ == "__main__":
    main()
