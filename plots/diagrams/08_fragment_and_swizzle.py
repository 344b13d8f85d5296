"""Draws lesson 08's two pictures to docs/img/08_fragment.png and docs/img/08_swizzle.png.

    python3 plots/diagrams/08_fragment_and_swizzle.py

08_fragment.png: the A operand of one mma.sync.m16n8k16 (fp16): a 16 x 16 tile held by
the 32 lanes of a warp, 8 halves each in 4 registers. Lane l holds rows l/4 and l/4+8,
columns 2(l%4), 2(l%4)+1 and the same 8 further on (the PTX ISA's fragment layout). One
ldmatrix.x4 loads the whole fragment: lanes 0-15 point at rows 0-15 of the first 16
bytes, lanes 16-31 at the same rows of the next 16.

08_swizzle.png: a tile row of the mma kernels is 64 bytes (4 chunks of 16 bytes), so a
128-byte line of shared memory (the 32 banks) holds two rows. ldmatrix reads one chunk
from each of 8 consecutive rows; in a plain row-major tile those 8 chunks fall in only
2 of the 8 bank groups (a 4-way conflict). Storing chunk c of row r at position
c ^ ((r / 2) % 4) puts them in 8 different groups.
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402
from diagram import save  # noqa: E402

ROWS, COLS = 16, 16
CHUNKS = 4
SWIZZLE_ROWS = 8
READ_COLOUR = "#dd8452"
IDLE_COLOUR = "#e8e8e8"


def fragment():
    fig, ax = plt.subplots(figsize=(8.6, 6.2))
    cmap = plt.get_cmap("tab20")
    for row in range(ROWS):
        for col in range(COLS):
            lane = (row % 8) * 4 + (col % 8) // 2
            reg = (row // 8) + 2 * (col // 8)
            ax.add_patch(Rectangle((col, ROWS - 1 - row), 1, 1, facecolor=cmap(lane % 20),
                                   edgecolor="white", linewidth=0.8))
            ax.text(col + 0.5, ROWS - 1 - row + 0.5, f"{lane}\nr{reg}", ha="center",
                    va="center", fontsize=6)
    ax.plot([8, 8], [0, ROWS], color="black", linewidth=1.6)
    ax.plot([0, COLS], [8, 8], color="black", linewidth=1.6)
    ax.set_xlim(-0.2, COLS + 0.2)
    ax.set_ylim(-1.8, ROWS + 0.9)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title("One warp's A fragment of mma.m16n8k16 (16 pixels x 16 k, fp16):\n"
                 "each cell shows the lane that holds it and its register", fontsize=10)
    ax.text(0, -0.4, "k (channels of one tap) ->\n"
            "the four 8x8 quarters are registers r0-r3, loaded by one ldmatrix.x4",
            fontsize=8.5, va="top")
    ax.text(-0.4, ROWS - 0.5, "pixel\nrows", fontsize=8.5, ha="right", va="top")
    fig.tight_layout()
    save(fig, "08_fragment.png")


def tile(ax, x0, title, swizzled):
    for row in range(SWIZZLE_ROWS):
        for pos in range(CHUNKS):
            chunk = pos ^ ((row // 2) % CHUNKS) if swizzled else pos
            group = (row * CHUNKS + pos) % 8  # 16-byte bank group of this position
            read = chunk == 0
            ax.add_patch(Rectangle((x0 + pos, SWIZZLE_ROWS - 1 - row), 1, 1,
                                   facecolor=READ_COLOUR if read else IDLE_COLOUR,
                                   edgecolor="white", linewidth=1))
            ax.text(x0 + pos + 0.5, SWIZZLE_ROWS - 1 - row + 0.5, f"c{chunk}\ng{group}",
                    ha="center", va="center", fontsize=7)
        ax.text(x0 - 0.15, SWIZZLE_ROWS - 1 - row + 0.5, f"row {row}", ha="right",
                va="center", fontsize=7.5)
    # XOR is its own inverse: chunk 0 of a row sits at position (row / 2) % 4.
    groups = {(row * CHUNKS + ((row // 2) % CHUNKS if swizzled else 0)) % 8
              for row in range(SWIZZLE_ROWS)}
    ax.text(x0 + CHUNKS / 2, SWIZZLE_ROWS + 0.3, title, ha="center", fontsize=9)
    ax.text(x0 + CHUNKS / 2, -0.35, f"c0 of rows 0-7: {len(groups)} bank groups,\n"
            f"{'conflict-free' if len(groups) == 8 else f'{8 // len(groups)}-way conflict'}",
            ha="center", va="top", fontsize=8.5)


def swizzle():
    fig, ax = plt.subplots(figsize=(9.0, 4.6))
    tile(ax, 0, "row-major (wmma_fp16)", swizzled=False)
    tile(ax, CHUNKS + 3.5, "swizzled (mma_*): c at c ^ (row/2 % 4)", swizzled=True)
    ax.set_xlim(-1.2, 2 * CHUNKS + 3.7)
    ax.set_ylim(-1.6, SWIZZLE_ROWS + 0.8)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.suptitle("Eight tile rows of 64 bytes: where ldmatrix's 8 reads of chunk c0 land\n"
                 "(cN: the chunk stored there; gN: its bank group, banks 4N to 4N+3)",
                 fontsize=10)
    fig.tight_layout()
    save(fig, "08_swizzle.png")


def main():
    fragment()
    swizzle()


if __name__ == "__main__":
    main()
