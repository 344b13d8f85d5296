/* Lesson 02: the first GPU convolution. One thread computes one output pixel, reading
 * its ksize x ksize neighbours and the filter straight from global memory; the only
 * knobs are the block shape and which image axis threadIdx.x walks along.
 *
 *   build/bin/02_gpu_naive --preset big3      (or --preset seed000, --ksize 7, ...)
 */
#include "conv_args.h"
#include "conv_problem.h"
#include "cuda_check.h"
#include "grid_chunks.cuh"
#include "kernels.h"

/* The biggest block any variant launches; tells ptxas how many registers it may use. */
#define MAX_BLOCK_THREADS 1024

typedef void (*naive_kernel)(const float *in, const float *weights, const float *bias, float *out,
                             int h, int w, int ksize, int first_row);

/* Output pixel (x, y) of one plane: zero-padded cross-correlation. */
__device__ float conv_at(const float *plane, const float *weights, int h, int w, int ksize, int x,
                         int y)
{
    const int r = ksize / 2;
    float acc = 0.0f;
    for (int i = 0; i < ksize; ++i) {
        const int in_y = y + i - r;
        if (in_y < 0 || in_y >= h)
            continue;
        for (int j = 0; j < ksize; ++j) {
            const int in_x = x + j - r;
            if (in_x >= 0 && in_x < w)
                acc += plane[in_y * w + in_x] * weights[i * ksize + j];
        }
    }
    return acc;
}

/* threadIdx.x -> x: the 32 threads of a warp read 32 neighbouring floats of one row,
 * which the memory system serves with a few 32-byte sectors. */
__global__ void __launch_bounds__(MAX_BLOCK_THREADS)
    conv2d_naive(const float *in, const float *weights, const float *bias, float *out, int h, int w,
                 int ksize, int first_row)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = first_row + blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    const size_t plane = (size_t)blockIdx.z * h * w;
    const float acc = conv_at(in + plane, weights, h, w, ksize, x, y);
    out[plane + y * w + x] = (bias ? bias[0] : 0.0f) + acc;
}

/* The same computation with the axes swapped, threadIdx.x -> y: a warp's 32 reads
 * land in 32 different rows, one sector each, and so do its 32 writes. */
__global__ void __launch_bounds__(MAX_BLOCK_THREADS)
    conv2d_naive_uncoalesced(const float *in, const float *weights, const float *bias, float *out,
                             int h, int w, int ksize, int first_row)
{
    const int x = blockIdx.x * blockDim.y + threadIdx.y;
    const int y = first_row + blockIdx.y * blockDim.x + threadIdx.x;
    if (x >= w || y >= h)
        return;
    const size_t plane = (size_t)blockIdx.z * h * w;
    const float acc = conv_at(in + plane, weights, h, w, ksize, x, y);
    out[plane + y * w + x] = (bias ? bias[0] : 0.0f) + acc;
}

/* One launch per grid chunk (common/ops/conv/kernel/grid_chunks.cuh): one in practice. */
static void launch_over_image(naive_kernel kernel, dim3 block, int tile_w, int tile_h,
                              const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    for_each_grid_chunk(s, tile_w, tile_h, [&](dim3 grid, int plane, int first_row) {
        const size_t offset = (size_t)plane * s->h * s->w;
        kernel<<<grid, block, 0, a->stream>>>(input_f32(a) + offset, weights_f32(a), a->bias,
                                              output_f32(a) + offset, s->h, s->w, s->ksize,
                                              first_row);
        CUDA_CHECK_LAUNCH();
    });
}

extern "C" void launch_conv2d_naive(const struct conv_args *a, int block_x, int block_y)
{
    launch_over_image(conv2d_naive, dim3(block_x, block_y), block_x, block_y, a);
}

/* A block of block_x x block_y threads covers block_y columns and block_x rows. */
extern "C" void launch_conv2d_naive_uncoalesced(const struct conv_args *a, int block_x, int block_y)
{
    launch_over_image(conv2d_naive_uncoalesced, dim3(block_x, block_y), block_y, block_x, a);
}
