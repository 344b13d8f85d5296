/* Step 3 of lesson 08: a warp's fragments by ldmatrix from XOR-swizzled tiles.
 *
 * Step 2 (02_mma_sync.cu) reads its fragments one 32-bit word per lane per register:
 * 32 shared-memory loads per k-step of a 64 x 64 warp tile (16 for A, 16 for B), and
 * the 8 rows a load reads at one column share banks, a 4-way conflict with 64-byte
 * rows. ldmatrix.x4 loads four 8x8 matrices of 16-byte rows for the whole warp in one
 * instruction, each lane naming one row, and hands every lane the words the mma
 * wants: 8 instructions per k-step for the same bytes. With the tile's chunks
 * XOR-swizzled (tile_chunk<CHUNKS, true>, gemm_tiles.cuh) the 8 rows of each matrix
 * lie in 8 different bank groups: no conflict. */
#ifndef LDMATRIX_FRAGMENTS_CUH
#define LDMATRIX_FRAGMENTS_CUH

#include <stdint.h>

#include "gemm_tiles.cuh"

struct ldmatrix_fragments {
    static constexpr bool SWIZZLED = true;

    /* k-step `step` (2 chunks of k) of a stage: MT fragments of A from rows wm.. of
     * a_tile, NT of B from rows wn.. of b_tile (B^T: a row per output channel). */
    template <int CHUNKS, int MT, int NT>
    static __device__ __forceinline__ void load(uint32_t (&a)[MT][4], uint32_t (&b)[NT][2],
                                                const uint4 *a_tile, const uint4 *b_tile, int wm,
                                                int wn, int step)
    {
        /* [page: ldmatrix-a] */
        const int lane = threadIdx.x % 32;
        /* A: lanes 0-15 point at rows 0-15 of the first chunk of the step, lanes 16-31
         * at the same rows of the second: the four 8x8 matrices of the 16x(32 bytes)
         * fragment, in the order the mma wants them. */
#pragma unroll
        for (int i = 0; i < MT; i++) {
            const int row = wm + i * 16 + lane % 16, chunk = step * KSTEP_CHUNKS + lane / 16;
            ldmatrix_x4(a[i], a_tile + tile_chunk<CHUNKS, true>(row, chunk));
        }
        /* [/page: ldmatrix-a] */
        /* B: one ldmatrix.x4 holds two 8-channel fragments: channels 0-7 (both chunks),
         * then channels 8-15. */
#pragma unroll
        for (int j = 0; j < NT; j += 2) {
            uint32_t r[4];
            const int row = wn + j * 8 + lane % 8 + lane / 16 * 8;
            const int chunk = step * KSTEP_CHUNKS + lane / 8 % 2;
            ldmatrix_x4(r, b_tile + tile_chunk<CHUNKS, true>(row, chunk));
            b[j][0] = r[0];
            b[j][1] = r[1];
            b[j + 1][0] = r[2];
            b[j + 1][1] = r[3];
        }
    }
};

#endif
