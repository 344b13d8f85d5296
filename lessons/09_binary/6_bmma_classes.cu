/* Lesson 09, variant "bmma_classes": bmma_ring with the border correction O(1) per
 * output (BMMA_CLASSES, bmma_tile.cuh). A pixel's window depends only on its row's and
 * its column's distance from the edges, counted up to r: along an axis of `size` pixels
 * there are min(size, ksize) window classes, 9 for a 3x3 filter on any image of 3 x 3
 * or more (binary_ops.cuh). So everything the sum needs that depends on the window and
 * the channel but not on the input folds into one integer per (window class, channel),
 * the form's value at zero counts:
 *   AND: sum = base - 2 popc(x) + 4 popc(x AND w),  base = taps C - 2 inside_weight_pop
 *   XOR: sum = base - 2 popc(x XOR w),              base = taps C + 2 outside_weight_pop
 * setup counts the table (untimed, once per layer: a few KB), each pixel row's class is
 * counted once per block with its y (pixel_rows), and the epilogue reads one pair of
 * bases per 2 outputs where bmma_ring's loop over the inside taps read up to 9: on a
 * 28-wide image most groups of 8 pixel rows a warp handles hold a border pixel, so that
 * loop cost nearly every warp.
 *
 *   build/bin/09_binary --preset bnn-b16c256s28 --variant bmma_classes
 */
#include "bmma_tile.cuh"
#include "kernels.h"

extern "C" size_t bmma_scratch_bytes(const struct conv_shape *s)
{
    return base_table_ints(s) * sizeof(int);
}

extern "C" void setup_conv2d_bmma_classes(const struct conv_args *a)
{
    count_bases<bmma_and>(a, (const uint32_t *)a->weights, (int *)a->scratch);
}

extern "C" void launch_conv2d_bmma_classes(const struct conv_args *a)
{
    launch_bmma<bmma_and, fp32_values, BMMA_CLASSES>(a);
}
