/* Lesson 04, step 2: blocks the size of the output tile, so that no thread idles
 * while computing.
 *
 *   build/bin/04_shared_tiling --preset big3 --variant tile_out
 */
#include "kernels.h"
#include "tiling.cuh"
#include "unrolled_radius.cuh"

#define MAX_RADIUS (MAX_KSIZE / 2)

/* One thread per output pixel. The (BLOCK_H + 2r) x (BLOCK_W + 2r) input tile has
 * more pixels than the block has threads, so the block loads it in several passes
 * of BLOCK_W x BLOCK_H. */
template <int R>
__global__ void __launch_bounds__(BLOCK_THREADS)
    conv2d_tile_out(const float *in, const float *bias, float *out, int h, int w, int ksize,
                    int first_row)
{
    /* [page: tile-out-load] */
    /* The run-time fallback sizes its tile for the largest radius: 9.4 KB. */
    constexpr int TILE_R = R == RUNTIME_RADIUS ? MAX_RADIUS : R;
    __shared__ float tile[BLOCK_H + 2 * TILE_R][BLOCK_W + 2 * TILE_R];
    const int r = R == RUNTIME_RADIUS ? ksize / 2 : R;
    const int k = 2 * r + 1;
    const int x0 = (int)blockIdx.x * BLOCK_W;
    const int y0 = first_row + (int)blockIdx.y * BLOCK_H;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const size_t plane = (size_t)blockIdx.z * h * w;
    for (int load_y = ty; load_y < BLOCK_H + 2 * r; load_y += BLOCK_H) {
        const int y = y0 + load_y - r;
        for (int load_x = tx; load_x < BLOCK_W + 2 * r; load_x += BLOCK_W) {
            const int x = x0 + load_x - r;
            const bool in_image = x >= 0 && x < w && y >= 0 && y < h;
            tile[load_y][load_x] = in_image ? in[plane + y * w + x] : 0.0f;
        }
    }
    __syncthreads();
    /* [/page: tile-out-load] */

    const int x = x0 + tx, y = y0 + ty;
    if (x >= w || y >= h)
        return;
    const float acc = taps_over_tile(tile, ty, tx, k);
    out[plane + y * w + x] = (bias ? bias[0] : 0.0f) + acc;
}

struct tile_out {
    template <int R> static void launch(const struct conv_args *a)
    {
        launch_over_image(conv2d_tile_out<R>, dim3(BLOCK_W, BLOCK_H), BLOCK_W, BLOCK_H, a);
    }
};

extern "C" void setup_tile_out(const struct conv_args *a)
{
    copy_filter_to_constant(a);
}

extern "C" void launch_conv2d_tile_out(const struct conv_args *a)
{
    launch_for_radius<tile_out>(a->shape.ksize / 2, a, tile_out::launch<RUNTIME_RADIUS>);
}
