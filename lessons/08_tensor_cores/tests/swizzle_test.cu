/* The property the swizzle of gemm_tiles.cuh exists for, checked on the host: the 8
 * consecutive tile rows that one ldmatrix 8x8 matrix reads at one chunk column lie in
 * 8 different 16-byte bank groups, and every row keeps its
 * chunks (a permutation within the row). The unswizzled tile of wmma_fp16 must show
 * its 4-way conflict, so the check can fail. Exit 0 when all hold, 1 otherwise. */
#include <stdio.h>

#include "gemm_tiles.cuh"

#define BANK_GROUPS 8 /* 32 banks of 4 bytes: 8 groups of 16 bytes */
#define ROWS_CHECKED 256

/* Distinct bank groups among the 8 rows from first_row at chunk column chunk. */
template <int CHUNKS, bool SWIZZLE> static int groups_hit(int first_row, int chunk)
{
    bool hit[BANK_GROUPS] = {false};
    int count = 0;
    for (int r = first_row; r < first_row + 8; r++) {
        const int group = tile_chunk<CHUNKS, SWIZZLE>(r, chunk) % BANK_GROUPS;
        count += !hit[group];
        hit[group] = true;
    }
    return count;
}

/* Every row's chunks land on that row's CHUNKS positions, each once. */
template <int CHUNKS> static bool rows_are_permuted(void)
{
    for (int r = 0; r < ROWS_CHECKED; r++) {
        bool used[CHUNKS] = {false};
        for (int c = 0; c < CHUNKS; c++) {
            const int at = tile_chunk<CHUNKS, true>(r, c) - r * CHUNKS;
            if (at < 0 || at >= CHUNKS || used[at])
                return false;
            used[at] = true;
        }
    }
    return true;
}

template <int CHUNKS> static bool conflict_free(void)
{
    for (int first = 0; first < ROWS_CHECKED; first += 8)
        for (int c = 0; c < CHUNKS; c++)
            if (groups_hit<CHUNKS, true>(first, c) != BANK_GROUPS)
                return false;
    return true;
}

static int failures = 0;

static void expect(bool ok, const char *what)
{
    printf("%s: %s\n", ok ? "PASS" : "FAIL", what);
    failures += !ok;
}

int main(void)
{
    expect(conflict_free<2>() && rows_are_permuted<2>(), "32-byte rows, swizzled");
    expect(conflict_free<4>() && rows_are_permuted<4>(), "64-byte rows (mma_*), swizzled");
    expect(conflict_free<8>() && rows_are_permuted<8>(), "128-byte rows, swizzled");
    expect(groups_hit<4, false>(0, 0) == 2, "64-byte rows unswizzled (wmma_fp16): 2 groups, 4-way");
    return failures ? 1 : 0;
}
