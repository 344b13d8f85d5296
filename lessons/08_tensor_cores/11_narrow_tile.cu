/* Lesson 08, step 11, variant "wgmma_fp16_narrow": step 10 with
 * a tile as narrow as the layer. Below 65 output channels a 128-wide tile is half padding:
 * the wgmmas multiply zeros in B's rows 64..127 at the full cost (Nsight Compute on
 * unet-64x64: 2.36 M wgmma instructions, twice the layer's work). There the block's
 * tiles are 128 x 64 (wgmma.m64n64, 32 accumulators per 64 rows, 8 stages of 24 KB);
 * from 65 channels on, step 10's 128 x 128. On fp16, bf16 and TF32; with STAGED, step
 * 14's tiles, whose output leaves through shared memory.
 *
 *   build/bin/08_tensor_cores --preset unet-64x64 --variant wgmma_fp16_narrow
 */
#include "kernels.h"
#include "tma_conv.cuh"
#include "wgmma_steps.h"

template <typename Op, bool STAGED> void launch_narrow_tile(const struct conv_args *a)
{
    if (!chunks_are_vectors(&a->shape, sizeof(typename Op::elem), a->input, a->weights))
        launch_wgmma_cp_async<Op>(a);
    else if (a->shape.cout <= NARROW_COUT)
        launch_pingpong<Op, 64, STAGED>(a);
    else
        launch_pingpong<Op, 128, STAGED>(a);
}

#define NARROW_TILE_LAUNCHERS(Op)                                                                  \
    template void launch_narrow_tile<Op, false>(const struct conv_args *a);                        \
    template void launch_narrow_tile<Op, true>(const struct conv_args *a);
NARROW_TILE_LAUNCHERS(mma_fp16)
NARROW_TILE_LAUNCHERS(mma_bf16)
NARROW_TILE_LAUNCHERS(mma_tf32)

extern "C" void launch_conv2d_wgmma_fp16_narrow(const struct conv_args *a)
{
    launch_narrow_tile<mma_fp16>(a);
}
