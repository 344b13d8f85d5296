/* Lesson 04, step 3: only the block's own pixels in shared memory, the halo read
 * through the caches (the seed's kernel).
 *
 *   build/bin/04_shared_tiling --preset big3 --variant tile_cached_halo
 */
#include "kernels.h"
#include "tiling.cuh"
#include "unrolled_radius.cuh"

/* One thread per output pixel, and shared memory holds only the block's own
 * BLOCK_W x BLOCK_H input pixels. A neighbour outside them is read from global
 * memory, betting that the neighbouring block's load left it in L1 or L2. */
template <int R>
__global__ void __launch_bounds__(BLOCK_THREADS)
    conv2d_tile_cached_halo(const float *in, const float *bias, float *out, int h, int w, int ksize,
                            int first_row)
{
    __shared__ float tile[BLOCK_H][BLOCK_W];
    const int r = R == RUNTIME_RADIUS ? ksize / 2 : R;
    const int k = 2 * r + 1;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x = (int)blockIdx.x * BLOCK_W + tx;
    const int y = first_row + (int)blockIdx.y * BLOCK_H + ty;
    const size_t plane = (size_t)blockIdx.z * h * w;
    const bool in_image = x < w && y < h;
    tile[ty][tx] = in_image ? in[plane + y * w + x] : 0.0f;
    __syncthreads();

    if (!in_image)
        return;
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < k; ++i) {
#pragma unroll
        for (int j = 0; j < k; ++j) {
            /* [page: cached-halo-tap] */
            const int tile_y = ty + i - r, tile_x = tx + j - r;
            const int in_y = y + i - r, in_x = x + j - r;
            float v;
            if (tile_y >= 0 && tile_y < BLOCK_H && tile_x >= 0 && tile_x < BLOCK_W)
                v = tile[tile_y][tile_x];
            else if (in_y >= 0 && in_y < h && in_x >= 0 && in_x < w)
                v = in[plane + in_y * w + in_x];
            else
                v = 0.0f;
            acc += v * filter_const[i * k + j];
            /* [/page: cached-halo-tap] */
        }
    }
    out[plane + y * w + x] = (bias ? bias[0] : 0.0f) + acc;
}

struct tile_cached_halo {
    template <int R> static void launch(const struct conv_args *a)
    {
        launch_over_image(conv2d_tile_cached_halo<R>, dim3(BLOCK_W, BLOCK_H), BLOCK_W, BLOCK_H, a);
    }
};

extern "C" void setup_tile_cached_halo(const struct conv_args *a)
{
    copy_filter_to_constant(a);
}

extern "C" void launch_conv2d_tile_cached_halo(const struct conv_args *a)
{
    launch_for_radius<tile_cached_halo>(a->shape.ksize / 2, a,
                                        tile_cached_halo::launch<RUNTIME_RADIUS>);
}
