/* Lesson 02: the first GPU convolution. One thread computes one output pixel, reading
 * its ksize x ksize neighbours and the filter straight from global memory; the only
 * knob here is the block shape.
 *
 *   build/bin/02_gpu_naive --preset big3      (or --preset seed000, --ksize 7, ...)
 */
#include "kernels.h"
#include "naive.cuh"

/* threadIdx.x -> x: the 32 threads of a warp read 32 neighbouring floats of one row,
 * which the memory system serves with a few 32-byte sectors. */
/* [page: naive-kernel] */
__global__ void __launch_bounds__(MAX_BLOCK_THREADS)
    conv2d_naive(const float *in, const float *weights, const float *bias, float *out, int h, int w,
                 int ksize, int first_row)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = first_row + blockIdx.y * blockDim.y + threadIdx.y;
    store_conv_at(in, weights, bias, out, h, w, ksize, x, y);
}
/* [/page: naive-kernel] */

/* [page: naive-launch] */
extern "C" void launch_conv2d_naive(const struct conv_args *a, int block_x, int block_y)
{
    launch_over_image(conv2d_naive, dim3(block_x, block_y), block_x, block_y, a);
}
/* [/page: naive-launch] */
