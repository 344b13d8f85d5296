/* What lesson 04's three tilings share: the output tile of a 32x8 block, the filter in
 * __constant__ memory, the taps over a shared tile and the launch over the image's grid
 * chunks. */
#ifndef LESSON04_TILING_CUH
#define LESSON04_TILING_CUH

#include "conv_args.h"
#include "conv_problem.h"
#include "cuda_check.h"
#include "grid_chunks.cuh"

/* tile_out and tile_cached_halo: a block is a 32x8 output tile, lesson 03's shape. */
#define BLOCK_W 32
#define BLOCK_H 8
#define BLOCK_THREADS (BLOCK_W * BLOCK_H)
/* Template argument for "radius known only at run time": the same kernel body
 * serves the unrolled instantiations and the fallback for ksize 17..31. */
#define RUNTIME_RADIUS (-1)

/* A __constant__ array belongs to the .cu file that defines it (the kernels are not
 * relocatable device code), so each step file has its own copy, and its setup fills it. */
static __constant__ float filter_const[MAX_KSIZE * MAX_KSIZE];

typedef void (*tiled_kernel)(const float *in, const float *bias, float *out, int h, int w,
                             int ksize, int first_row);

/* tile_in and tile_out: the filter over the window whose top-left corner is tile[y][x],
 * a tile row being W floats; the tile holds the zero padding, so no bounds test. */
/* [page: taps-over-tile] */
template <int W>
__device__ __forceinline__ float taps_over_tile(const float (*tile)[W], int y, int x, int k)
{
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < k; ++i)
#pragma unroll
        for (int j = 0; j < k; ++j)
            acc += tile[y + i][x + j] * filter_const[i * k + j];
    return acc;
}
/* [/page: taps-over-tile] */

/* The device-resident weights into this file's filter_const. */
static void copy_filter_to_constant(const struct conv_args *a)
{
    const size_t bytes = (size_t)a->shape.ksize * a->shape.ksize * sizeof(float);
    CUDA_CHECK(
        cudaMemcpyToSymbol(filter_const, weights_f32(a), bytes, 0, cudaMemcpyDeviceToDevice));
}

/* One launch per grid chunk (common/ops/conv/kernel/grid_chunks.cuh): one in practice. */
static void launch_over_image(tiled_kernel kernel, dim3 block, int tile_w, int tile_h,
                              const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    for_each_grid_chunk(s, tile_w, tile_h, [&](dim3 grid, int plane, int first_row) {
        const size_t offset = (size_t)plane * s->h * s->w;
        kernel<<<grid, block, 0, a->stream>>>(input_f32(a) + offset, a->bias,
                                              output_f32(a) + offset, s->h, s->w, s->ksize,
                                              first_row);
        CUDA_CHECK_LAUNCH();
    });
}

#endif
