/* Lesson 08, step 17, variant "wgmma_fp16_multicast": step 16 in clusters of two blocks.
 * Two blocks that multiply the same output channels for neighbouring pixel rectangles
 * need the same weights at every step: 32 KB of B a step at fp16 and BN = 256, two
 * thirds of the stage. Launched as a cluster (two SMs of one GPC that can reach each
 * other's shared memory), each block's producer loads half of B, its rank's 128 rows,
 * with one multicast TMA load that writes them into both blocks' stages and counts
 * their bytes on both blocks' `full` barriers (tma_loader, tma_conv.cuh): the weights
 * cross from L2 once per cluster, and a block's stage brings 32 KB from L2 instead of
 * 48. The price: a stage can be refilled only when the consumers of both blocks have
 * given it back (each warp arrives on both blocks' `empty` barriers), so the pair runs
 * in step, and both blocks walk the same steps: every tap, none skipped at the borders
 * (walk_tile). The kernel is step 16's with CLUSTER = 2 (16_persistent_wide.cu).
 *
 *   build/bin/08_tensor_cores --preset unet-512x512 --variant wgmma_fp16_multicast
 */
#include "kernels.h"
#include "tma_conv.cuh"
#include "wgmma_steps.h"

extern "C" void launch_conv2d_wgmma_fp16_multicast(const struct conv_args *a)
{
    launch_persistent_wide<mma_fp16, 2>(a);
}
