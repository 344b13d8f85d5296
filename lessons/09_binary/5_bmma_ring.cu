/* Lesson 09, variant "bmma_ring": bmma with its stages copied by cp.async into a ring of
 * STAGES = 3 shared buffers (BMMA_RING, bmma_tile.cuh). In bmma a warp waits for its own
 * loads before it can store them, and then at a barrier for every other warp's, twice a
 * k-step, while the tensor cores idle: the 9 k-steps of a 3x3 filter on C = 256 are 9
 * round trips to L2 in a row. Here the copies of k-steps s + 1 and s + 2 are in flight
 * while the tensor cores work on step s: they go from global to shared memory without
 * registers, one barrier per step says that step s has landed and that step s - 1's
 * buffer is free to refill. The same lesson as 07's implicit_gemm_async, on bits.
 *
 *   build/bin/09_binary --preset bnn-b16c256s28 --variant bmma_ring
 */
#include "bmma_tile.cuh"
#include "kernels.h"

extern "C" void launch_conv2d_bmma_ring(const struct conv_args *a)
{
    launch_bmma<bmma_and, fp32_values, BMMA_RING>(a);
}
