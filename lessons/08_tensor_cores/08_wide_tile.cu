/* Lesson 08, step 8, variants "wgmma_fp16", "wgmma_bf16" and "wgmma_tf32": step 7's
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
 * The same kernel on fp32 data in TF32 (wgmma.m64nNk8.tf32: 32 channels per 128-byte
 * row) is wgmma_tf32, PyTorch's default precision for fp32 convolutions.
 *
 *   build/bin/08_tensor_cores --preset unet-256x256 --variant wgmma_fp16
 */
#include "kernels.h"
#include "tma_conv.cuh"
#include "wgmma_steps.h"

/* [page: wide-tile-launch] */
template <typename Op> static void launch(const struct conv_args *a)
{
    if (!chunks_are_vectors(&a->shape, sizeof(typename Op::elem), a->input, a->weights))
        launch_wgmma_cp_async<Op>(a);
    else if (a->shape.cout >= TMA_WIDE_COUT)
        launch_warp_specialised<Op, 256, 1>(a);
    else
        launch_warp_specialised<Op, 128, 1>(a);
}
/* [/page: wide-tile-launch] */

extern "C" void launch_conv2d_wgmma_fp16(const struct conv_args *a)
{
    launch<mma_fp16>(a);
}

extern "C" void launch_conv2d_wgmma_bf16(const struct conv_args *a)
{
    launch<mma_bf16>(a);
}

extern "C" void launch_conv2d_wgmma_tf32(const struct conv_args *a)
{
    launch<mma_tf32>(a);
}
