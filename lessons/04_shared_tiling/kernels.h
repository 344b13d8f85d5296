/* Lesson 04's entry points: copy the filter into __constant__ memory once, then run
 * one of three shared-memory tilings of the convolution. Each step file has its own
 * __constant__ filter, which its setup fills. */
#ifndef LESSON04_KERNELS_H
#define LESSON04_KERNELS_H

#include "conv_args.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Blocks the size of the input tile: each thread loads one input pixel (1_tile_in.cu). */
conv_launcher setup_tile_in, launch_conv2d_tile_in;
/* Blocks the size of the output tile: the tile and its halo loaded in several passes
 * (2_tile_out.cu). */
conv_launcher setup_tile_out, launch_conv2d_tile_out;
/* Only the block's own pixels in shared memory; halo reads go through the caches
 * (3_tile_cached_halo.cu). */
conv_launcher setup_tile_cached_halo, launch_conv2d_tile_cached_halo;

#ifdef __cplusplus
}
#endif

#endif
