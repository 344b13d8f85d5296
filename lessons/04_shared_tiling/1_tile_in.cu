/* Lesson 04: a block copies the input pixels it shares into shared memory once, so
 * the ksize^2 reads of each output hit shared memory instead of global memory. Three
 * ways to cut the image into tiles, all with the filter in __constant__ memory; the
 * first, blocks the size of the input tile.
 *
 *   build/bin/04_shared_tiling --preset big3      (or --preset seed000, --ksize 9, ...)
 */
#include "kernels.h"
#include "tiling.cuh"
#include "unrolled_radius.cuh"

/* A block is a 32x32 input tile, big enough to keep a 2x2 output tile inside the
 * largest halo (radius 15). */
#define IN_TILE 32
#define IN_TILE_THREADS (IN_TILE * IN_TILE)

/* One thread per input pixel of the tile. All of them load; only the inner
 * (IN_TILE - 2r)^2 compute, so the halo threads idle through the arithmetic. */
/* [page: tile-in-kernel] */
template <int R>
__global__ void __launch_bounds__(IN_TILE_THREADS)
    conv2d_tile_in(const float *in, const float *bias, float *out, int h, int w, int ksize,
                   int first_row)
{
    __shared__ float tile[IN_TILE][IN_TILE];
    const int r = R == RUNTIME_RADIUS ? ksize / 2 : R;
    const int k = 2 * r + 1;
    const int out_tile = IN_TILE - 2 * r;
    /* int copies: threadIdx is unsigned, and tx - r must be able to go below zero. */
    const int tx = threadIdx.x, ty = threadIdx.y;
    /* The input tile starts r pixels before the block's first output. */
    const int x = (int)blockIdx.x * out_tile + tx - r;
    const int y = first_row + (int)blockIdx.y * out_tile + ty - r;
    const size_t plane = (size_t)blockIdx.z * h * w;
    const bool in_image = x >= 0 && x < w && y >= 0 && y < h;
    tile[ty][tx] = in_image ? in[plane + y * w + x] : 0.0f;
    __syncthreads();

    const bool computes = tx >= r && tx < r + out_tile && ty >= r && ty < r + out_tile;
    if (!computes || !in_image)
        return;
    const float acc = taps_over_tile(tile, ty - r, tx - r, k);
    out[plane + y * w + x] = (bias ? bias[0] : 0.0f) + acc;
}
/* [/page: tile-in-kernel] */

struct tile_in {
    template <int R> static void launch(const struct conv_args *a)
    {
        const int out_tile = IN_TILE - 2 * (a->shape.ksize / 2);
        launch_over_image(conv2d_tile_in<R>, dim3(IN_TILE, IN_TILE), out_tile, out_tile, a);
    }
};

extern "C" void setup_tile_in(const struct conv_args *a)
{
    copy_filter_to_constant(a);
}

/* [page: tile-in-launch] */
extern "C" void launch_conv2d_tile_in(const struct conv_args *a)
{
    launch_for_radius<tile_in>(a->shape.ksize / 2, a, tile_in::launch<RUNTIME_RADIUS>);
}
/* [/page: tile-in-launch] */
