/* What both of lesson 03's kernels share: the block shape, the filter in __constant__
 * memory and the launch over the image's grid chunks. */
#ifndef LESSON03_CONSTANT_FILTER_CUH
#define LESSON03_CONSTANT_FILTER_CUH

#include "conv_args.h"
#include "conv_problem.h"
#include "cuda_check.h"
#include "grid_chunks.cuh"

/* Lesson 02's best block shape: a warp covers one 128-byte row segment. */
#define BLOCK_W 32
#define BLOCK_H 8
#define BLOCK_THREADS (BLOCK_W * BLOCK_H)

/* 31 x 31 floats = 3844 bytes of the 64 KB constant bank, whatever ksize is. A
 * __constant__ array belongs to the .cu file that defines it (the kernels are not
 * relocatable device code), so each step file has its own copy, and its setup fills it. */
/* [page: filter_const] */
static __constant__ float filter_const[MAX_KSIZE * MAX_KSIZE];
/* [/page: filter_const] */

typedef void (*const_kernel)(const float *in, const float *bias, float *out, int h, int w,
                             int ksize, int first_row);

/* [page: copy_filter] */
/* The device-resident weights into this file's filter_const. */
static void copy_filter_to_constant(const struct conv_args *a)
{
    const size_t bytes = (size_t)a->shape.ksize * a->shape.ksize * sizeof(float);
    CUDA_CHECK(
        cudaMemcpyToSymbol(filter_const, weights_f32(a), bytes, 0, cudaMemcpyDeviceToDevice));
}
/* [/page: copy_filter] */

/* One launch per grid chunk (common/ops/conv/kernel/grid_chunks.cuh): one in practice. */
static void launch_over_image(const_kernel kernel, const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    for_each_grid_chunk(s, BLOCK_W, BLOCK_H, [&](dim3 grid, int plane, int first_row) {
        const size_t offset = (size_t)plane * s->h * s->w;
        kernel<<<grid, dim3(BLOCK_W, BLOCK_H), 0, a->stream>>>(input_f32(a) + offset, a->bias,
                                                               output_f32(a) + offset, s->h, s->w,
                                                               s->ksize, first_row);
        CUDA_CHECK_LAUNCH();
    });
}

#endif
