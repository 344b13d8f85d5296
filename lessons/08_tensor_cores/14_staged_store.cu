/* Lesson 08, step 14, variant "wgmma_fp16_staged": step 11 with step 13's epilogue.
 * Steps 10 and 11 store a tile from the accumulators, 4 bytes a thread, a warp's store
 * 8 rows of 16 bytes; the two warpgroups take turns so that one's stores overlap the
 * other's multiplies, but the stores are many instructions and partial sectors, and on
 * the layers whose tiles have few steps of k they are not hidden. With no stores at all
 * step 10's kernel ran 1.38 times faster on unet-128x128, 1.44 on unet-128x256, 1.10 on
 * unet-256x256 and 1.08 on unet-1024x1024 (H200, the notes). Here each consumer
 * warpgroup stores a tile's two 64-row halves through a buffer of 64 rows x BN channels
 * (16 KB at fp16 and BN = 128) with TMA stores (store_rows_tma, tma_conv.cuh), step 10's
 * kernel with STAGED; the ring keeps its stages but for TF32 at BN = 128 (5 of 32 KB).
 * Where the TMA cannot store the output (rows of channels not whole 16-byte chunks),
 * step 11.
 *
 *   build/bin/08_tensor_cores --preset unet-128x128 --variant wgmma_fp16_staged
 */
#include "kernels.h"
#include "tma_conv.cuh"
#include "wgmma_steps.h"

template <typename Op> void launch_staged_store(const struct conv_args *a)
{
    if (output_is_tma_storable<typename Op::out>(a))
        launch_narrow_tile<Op, true>(a);
    else
        launch_narrow_tile<Op, false>(a);
}

template void launch_staged_store<mma_fp16>(const struct conv_args *a);
template void launch_staged_store<mma_bf16>(const struct conv_args *a);
template void launch_staged_store<mma_tf32>(const struct conv_args *a);

extern "C" void launch_conv2d_wgmma_fp16_staged(const struct conv_args *a)
{
    launch_staged_store<mma_fp16>(a);
}
