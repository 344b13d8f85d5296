/* Lesson 03: the filter moves to __constant__ memory, where one read serves a whole
 * warp (every thread wants the same tap at the same time).
 *
 *   build/bin/03_constant_memory --preset big3      (or --preset big7, --ksize 21, ...)
 */
#include "constant_filter.cuh"
#include "kernels.h"

/* Lesson 02's kernel with the filter read from constant memory. */
/* [page: conv2d_const] */
__global__ void __launch_bounds__(BLOCK_THREADS)
    conv2d_const(const float *in, const float *bias, float *out, int h, int w, int ksize,
                 int first_row)
{
    const int x = blockIdx.x * BLOCK_W + threadIdx.x;
    const int y = first_row + blockIdx.y * BLOCK_H + threadIdx.y;
    if (x >= w || y >= h)
        return;
    const size_t plane = (size_t)blockIdx.z * h * w;
    const int r = ksize / 2;
    float acc = 0.0f;
    for (int i = 0; i < ksize; ++i) {
        const int in_y = y + i - r;
        if (in_y < 0 || in_y >= h)
            continue;
        for (int j = 0; j < ksize; ++j) {
            const int in_x = x + j - r;
            if (in_x >= 0 && in_x < w)
                acc += in[plane + in_y * w + in_x] * filter_const[i * ksize + j];
        }
    }
    out[plane + y * w + x] = (bias ? bias[0] : 0.0f) + acc;
}
/* [/page: conv2d_const] */

extern "C" void setup_const_runtime(const struct conv_args *a)
{
    copy_filter_to_constant(a);
}

extern "C" void launch_conv2d_const(const struct conv_args *a)
{
    launch_over_image(conv2d_const, a);
}
