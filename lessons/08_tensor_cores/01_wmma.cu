/* Lesson 08, variant "wmma_fp16": the implicit GEMM of gemm_tiles.cuh on tensor
 * cores through the WMMA API, the simplest way there: a warp declares 16x16x16
 * fragments, loads them from shared memory with load_matrix_sync and multiplies
 * with mma_sync; the library hides which lane holds what.
 *
 * It is slow, for reasons the next variant removes one by one:
 *   - small tiles: a block computes 64 x 64 outputs, a warp 32 x 32 (2 x 2
 *     fragments), so each fragment loaded feeds only two multiplies;
 *   - one tile in shared memory at a time: the block loads it, waits for it, then
 *     computes, and the tensor cores idle during every load;
 *   - plain row-major tiles: the rows a fragment load reads at one column share
 *     banks (rows of 64 bytes: 4-way conflicts).
 *
 *   build/bin/08_tensor_cores --preset unet-256x256 --variant wmma_fp16
 */
#include <mma.h>

#include "cuda_check.h"
#include "gemm_tiles.cuh"
#include "grid_chunks.cuh"
#include "kernels.h"

#define WMMA_BM 64    /* pixels per block */
#define WMMA_BN 64    /* output channels per block */
#define WMMA_CHUNKS 4 /* 32 halves of k per tile row */
#define WMMA_THREADS 128
#define WMMA_WARP_TILE 32 /* each of the 2 x 2 warps: 32 x 32 outputs */
#define WMMA_K 16
#define WMMA_BK (WMMA_CHUNKS * 8)

using namespace nvcuda;

template <bool VECTOR>
__global__ void __launch_bounds__(WMMA_THREADS)
    conv2d_wmma(const __half *__restrict__ input, const __half *__restrict__ weights,
                const float *__restrict__ bias, __half *__restrict__ output, struct conv_shape s,
                int first_tile)
{
    typedef tile_loader<uint16_t, WMMA_BM, WMMA_BN, WMMA_CHUNKS, WMMA_THREADS> loader_t;
    constexpr int FRAGS = WMMA_WARP_TILE / 16;
    /* load_matrix_sync and store_matrix_sync want 32-byte aligned addresses. */
    __shared__ __align__(32) uint4 a_tile[WMMA_BM * WMMA_CHUNKS];
    __shared__ __align__(32) uint4 b_tile[WMMA_BN * WMMA_CHUNKS];
    __shared__ __align__(32) float staged[WMMA_BM][WMMA_BN];

    const int warp = threadIdx.x / 32;
    const int wm = warp / 2 * WMMA_WARP_TILE, wn = warp % 2 * WMMA_WARP_TILE;
    const int p0 = (first_tile + blockIdx.y) * WMMA_BM, j0 = blockIdx.x * WMMA_BN;
    loader_t load(reinterpret_cast<const uint16_t *>(input),
                  reinterpret_cast<const uint16_t *>(weights), s, p0, j0);
    const __half *a_halves = reinterpret_cast<const __half *>(a_tile);
    const __half *b_halves = reinterpret_cast<const __half *>(b_tile);

    wmma::fragment<wmma::accumulator, 16, 16, WMMA_K, float> acc[FRAGS][FRAGS];
    for (int i = 0; i < FRAGS; i++)
        for (int j = 0; j < FRAGS; j++)
            wmma::fill_fragment(acc[i][j], 0.0f);

    for (int t = 0; t < ceil_div(load.depth, loader_t::BK); t++) {
        load.template load<VECTOR, false>(a_tile, b_tile);
        load.template advance<VECTOR>();
        commit_copies();
        wait_copies<0>();
        __syncthreads();
        /* [page: wmma-one-tile] */
        for (int k = 0; k < WMMA_BK; k += WMMA_K) {
            /* A is pixels x k, row-major; B^T is channels x k, which is B (k x
             * channels) in column-major order. Leading dimension: a tile row. */
            wmma::fragment<wmma::matrix_a, 16, 16, WMMA_K, __half, wmma::row_major> a[FRAGS];
            wmma::fragment<wmma::matrix_b, 16, 16, WMMA_K, __half, wmma::col_major> b[FRAGS];
            for (int i = 0; i < FRAGS; i++)
                wmma::load_matrix_sync(a[i], a_halves + (wm + i * 16) * WMMA_BK + k, WMMA_BK);
            for (int j = 0; j < FRAGS; j++)
                wmma::load_matrix_sync(b[j], b_halves + (wn + j * 16) * WMMA_BK + k, WMMA_BK);
            for (int i = 0; i < FRAGS; i++)
                for (int j = 0; j < FRAGS; j++)
                    wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
        }
        /* [/page: wmma-one-tile] */
        __syncthreads(); /* the tile is read before the next load overwrites it */
    }

    /* Which lane holds which accumulator is opaque: store the fragments to shared
     * memory, then write the tile out with the bias, channels contiguous. */
    for (int i = 0; i < FRAGS; i++)
        for (int j = 0; j < FRAGS; j++)
            wmma::store_matrix_sync(&staged[wm + i * 16][wn + j * 16], acc[i][j], WMMA_BN,
                                    wmma::mem_row_major);
    __syncthreads();
    const int pixels = s.n * s.h * s.w;
    for (int e = threadIdx.x; e < WMMA_BM * WMMA_BN; e += WMMA_THREADS) {
        const int row = e / WMMA_BN, col = e % WMMA_BN;
        const int p = p0 + row, ch = j0 + col;
        if (p < pixels && ch < s.cout)
            output[(size_t)p * s.cout + ch] =
                __float2half_rn(staged[row][col] + (bias ? bias[ch] : 0.0f));
    }
}

extern "C" void launch_conv2d_wmma_fp16(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    const __half *input = static_cast<const __half *>(a->input);
    const __half *weights = static_cast<const __half *>(a->weights);
    const bool vector = chunks_are_vectors(s, sizeof(__half), input, weights);
    const int pixel_tiles = ceil_div(s->n * s->h * s->w, WMMA_BM);
    for (int first = 0; first < pixel_tiles; first += MAX_GRID_YZ) {
        const dim3 grid(ceil_div(s->cout, WMMA_BN), min(pixel_tiles - first, MAX_GRID_YZ));
        if (vector)
            conv2d_wmma<true><<<grid, WMMA_THREADS, 0, a->stream>>>(
                input, weights, a->bias, static_cast<__half *>(a->output), *s, first);
        else
            conv2d_wmma<false><<<grid, WMMA_THREADS, 0, a->stream>>>(
                input, weights, a->bias, static_cast<__half *>(a->output), *s, first);
        CUDA_CHECK_LAUNCH();
    }
}
