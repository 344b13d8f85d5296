/* Lesson 04's entry points: copy the filter into __constant__ memory once, then run
 * one of three shared-memory tilings of the convolution. */
#ifndef LESSON04_KERNELS_H
#define LESSON04_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

struct conv_args;

/* prepare(): the device-resident weights into the __constant__ filter. */
void copy_filter_to_constant(const struct conv_args *a);
/* Blocks the size of the input tile: each thread loads one input pixel. */
void launch_conv2d_tile_in(const struct conv_args *a);
/* Blocks the size of the output tile: the tile and its halo loaded in several passes. */
void launch_conv2d_tile_out(const struct conv_args *a);
/* Only the block's own pixels in shared memory; halo reads go through the caches. */
void launch_conv2d_tile_cached_halo(const struct conv_args *a);

#ifdef __cplusplus
}
#endif

#endif
