/* Lesson 08, step 8, variant "wgmma_fp16_wide": step 7's
 * warp-specialised kernel with 128 x 256 tiles where the layer has 256 output channels
 * or more (128 x 128 below: there a 256-wide tile would multiply the TMA's zeros past
 * the last channel for much of its width), CUTLASS's default Hopper GEMM tile.
 *   - Per step a block loads A (16 KB) and B (BN x 128 bytes), so BN = 256 does twice
 *     the multiplies for 1.5 times the bytes.
 *   - The fixed costs of a step (barrier waits, descriptor arithmetic, issuing the
 *     wgmmas) buy twice the tensor work, and half as many blocks pay the pipeline's fill
 *     and the epilogue.
 *   - Each consumer thread holds 128 fp32 accumulators (wgmma.m64n256): the registers
 *     step 7's setmaxnreg moved to the consumers.
 *
 *   build/bin/08_tensor_cores --preset unet-256x256 --variant wgmma_fp16_wide
 */
#include "kernels.h"
#include "tma_conv.cuh"
#include "wgmma_steps.h"

template <typename Op> void launch_wide_tile(const struct conv_args *a)
{
    if (!chunks_are_vectors(&a->shape, sizeof(typename Op::elem), a->input, a->weights))
        launch_wgmma_cp_async<Op>(a);
    else if (a->shape.cout >= TMA_WIDE_COUT)
        launch_warp_specialised<Op, 256, 1>(a);
    else
        launch_warp_specialised<Op, 128, 1>(a);
}

template void launch_wide_tile<mma_fp16>(const struct conv_args *a);
template void launch_wide_tile<mma_bf16>(const struct conv_args *a);
template void launch_wide_tile<mma_tf32>(const struct conv_args *a);

extern "C" void launch_conv2d_wgmma_fp16_wide(const struct conv_args *a)
{
    launch_wide_tile<mma_fp16>(a);
}
