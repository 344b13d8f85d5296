/* Lesson 02, step 2: step 1's kernel with the image axes swapped, to see what
 * coalescing is worth.
 *
 *   build/bin/02_gpu_naive --preset big3 --variant uncoalesced
 */
#include "kernels.h"
#include "naive.cuh"

/* threadIdx.x -> y: a warp's 32 reads land in 32 different rows, one sector each,
 * and so do its 32 writes. */
__global__ void __launch_bounds__(MAX_BLOCK_THREADS)
    conv2d_naive_uncoalesced(const float *in, const float *weights, const float *bias, float *out,
                             int h, int w, int ksize, int first_row)
{
    /* [page: uncoalesced-index] */
    const int x = blockIdx.x * blockDim.y + threadIdx.y;
    const int y = first_row + blockIdx.y * blockDim.x + threadIdx.x;
    /* [/page: uncoalesced-index] */
    store_conv_at(in, weights, bias, out, h, w, ksize, x, y);
}

/* [page: uncoalesced-launch] */
/* A block of block_x x block_y threads covers block_y columns and block_x rows. */
extern "C" void launch_conv2d_naive_uncoalesced(const struct conv_args *a, int block_x, int block_y)
{
    launch_over_image(conv2d_naive_uncoalesced, dim3(block_x, block_y), block_y, block_x, a);
}
/* [/page: uncoalesced-launch] */
