/* How steps 2 and 3 of lesson 07 (2_smem_input.cu, 3_reg_block.cu) share the output
 * among blocks: a block computes a tile of pixels for a group of output channels of one
 * image. The launcher's grid and the kernel's reading of blockIdx are written here
 * together, so they cannot disagree. */
#ifndef LESSON07_CHANNEL_TILE_CUH
#define LESSON07_CHANNEL_TILE_CUH

#include "conv_args.h"
#include "conv_problem.h"
#include "grid_chunks.cuh"

/* A block's share of the output: tile_w x tile_h pixels from (x0, y0), output channels
 * from k0, of image n. */
struct channel_tile {
    int x0, y0; /* the tile's first pixel */
    int k0;     /* its first output channel */
    int n;      /* its image */
};

/* This block's tile: blockIdx.x numbers the tiles of an image row by row, blockIdx.y the
 * groups of `channels` output channels, blockIdx.z the image. */
static __device__ __forceinline__ struct channel_tile
this_block_tile(const struct conv_shape *s, int tile_w, int tile_h, int channels)
{
    const int tiles_x = ceil_div(s->w, tile_w);
    struct channel_tile t;
    t.x0 = blockIdx.x % tiles_x * tile_w;
    t.y0 = blockIdx.x / tiles_x * tile_h;
    t.k0 = blockIdx.y * channels;
    t.n = blockIdx.z;
    return t;
}

/* Calls launch(grid, input, output, part) for each run of images that gridDim.z can
 * hold (one in practice): grid has one block per tile and group of output channels of
 * each image, input and output point at the run's first image and part is the shape of
 * the run. */
template <typename Launch>
void for_each_tile_grid(const struct conv_args *a, int tile_w, int tile_h, int channels,
                        Launch launch)
{
    const struct conv_shape *s = &a->shape;
    for_each_batch_chunk(s->n, [&](int first, int images) {
        struct conv_shape part = *s;
        part.n = images;
        const dim3 grid(ceil_div(s->w, tile_w) * ceil_div(s->h, tile_h),
                        ceil_div(s->cout, channels), images);
        launch(grid, input_f32(a) + (size_t)first * s->cin * s->h * s->w,
               output_f32(a) + (size_t)first * s->cout * s->h * s->w, part);
    });
}

#endif
