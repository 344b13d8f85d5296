/* What both of lesson 02's kernels share: one output pixel computed straight from
 * global memory and stored, and the launch over the image's grid chunks. */
#ifndef LESSON02_NAIVE_CUH
#define LESSON02_NAIVE_CUH

#include "conv_args.h"
#include "conv_problem.h"
#include "cuda_check.h"
#include "grid_chunks.cuh"

/* The biggest block any variant launches; tells ptxas how many registers it may use. */
#define MAX_BLOCK_THREADS 1024

typedef void (*naive_kernel)(const float *in, const float *weights, const float *bias, float *out,
                             int h, int w, int ksize, int first_row);

/* [page: conv-at] */
/* Output pixel (x, y) of one plane: zero-padded cross-correlation. */
static __device__ float conv_at(const float *plane, const float *weights, int h, int w, int ksize,
                                int x, int y)
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
/* [/page: conv-at] */

/* [page: store-conv-at] */
/* Output pixel (x, y) of plane blockIdx.z, plus bias[0] when there is a bias; nothing
 * when (x, y) is outside the image (the last blocks of a row or column are partial). */
static __device__ void store_conv_at(const float *in, const float *weights, const float *bias,
                                     float *out, int h, int w, int ksize, int x, int y)
{
    if (x >= w || y >= h)
        return;
    const size_t plane = (size_t)blockIdx.z * h * w;
    const float acc = conv_at(in + plane, weights, h, w, ksize, x, y);
    out[plane + y * w + x] = (bias ? bias[0] : 0.0f) + acc;
}
/* [/page: store-conv-at] */

/* [page: launch-over-image] */
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
/* [/page: launch-over-image] */

#endif
