/* Lesson 10, variant shared_box: the window sum of every spatial lag as a separable
 * box filter over shared-memory tiles of gamma (box_tile.cuh), adding c[c0] * S into
 * each of the Co output blocks. Against thread_per_output it cuts the reads of each
 * gamma value from k^2 (one per window that covers it) to about 1.3 (the tile's halo)
 * and the multiply-adds per output from 2*Ci*k^2 to about 2*Ci + 2k; the output
 * traffic, 2 * Co * Q^2 floats per batch element, stays. */
#include "box_tile.cuh"

extern "C" void covariance_shared_box(const struct cov_args *a)
{
    launch_cov_box<BOX_BLOCKS>(a);
}
