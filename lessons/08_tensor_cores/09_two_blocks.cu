/* Lesson 08, step 9, variant "wgmma_fp16_2blocks": step 7's warp-specialised kernel
 * (128 x 128 tiles), two blocks per SM. With one block per SM, every block's life
 * begins with a pipeline fill (the first loads' latency, with nothing to multiply) and
 * ends with an epilogue (accumulators to global memory) during which that SM's tensor
 * cores idle; the fewer k-steps a tile has, the larger that share (unet-64x128: 9
 * steps of 64 channels per tile). With two blocks per SM, one block's fill and epilogue
 * run while the other multiplies.
 *   - The price: half the shared memory and half the registers each. A ring of 3 stages
 *     of 32 KB per block (97 KB), so the loads run at most 1 step ahead of the wgmmas in
 *     flight. The producer shrinks to one warp, so that 2 x 288 threads get 112
 *     registers each, enough for a consumer's 64 accumulators (with a producer
 *     warpgroup, 80 each would be too few for the wgmma, even with setmaxnreg: ptxas
 *     allocates for the whole kernel).
 *   - The wide 128 x 256 tile does not fit twice: its accumulators alone are 128
 *     registers per consumer thread.
 *
 *   build/bin/08_tensor_cores --preset unet-64x128 --variant wgmma_fp16_2blocks
 */
#include "kernels.h"
#include "tma_conv.cuh"
#include "wgmma_steps.h"

extern "C" void launch_conv2d_wgmma_fp16_2blocks(const struct conv_args *a)
{
    if (!chunks_are_vectors(&a->shape, sizeof(__half), a->input, a->weights))
        launch_wgmma_cp_async<mma_fp16>(a);
    else
        launch_warp_specialised<mma_fp16, 128, 2>(a);
}
