/* Launchers of lesson 02's kernels: one thread per output pixel, everything read
 * from global memory. Block shape is a launch parameter so main.c can compare them. */
#ifndef LESSON02_KERNELS_H
#define LESSON02_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

struct conv_args;

/* threadIdx.x walks along a row: a warp reads consecutive addresses (1_naive.cu). */
void launch_conv2d_naive(const struct conv_args *a, int block_x, int block_y);
/* threadIdx.x walks down a column: a warp reads one float from each of 32 rows
 * (2_uncoalesced.cu). */
void launch_conv2d_naive_uncoalesced(const struct conv_args *a, int block_x, int block_y);

#ifdef __cplusplus
}
#endif

#endif
