/* Lesson 09, variant "bmma_wgmma": bmma_and on Hopper's warpgroup MMA (BMMA_WGMMA,
 * bmma_tile.cuh). mma.sync m16n8k256 tops out at 38952 bit-ops per clock per SM on the
 * H200, wgmma m64n128k256 at 58317 (tools/mma_rate, tools/wgmma_rate). Each warpgroup
 * of the block (warps 0-3 and 4-7, the block's two halves of 32 channels) issues, per
 * tap and per 16-row fragment of its warps, one wgmma.m64n32k256 .and.popc: its 4 warps
 * give it their A fragments, loaded by ldmatrix from the stage as before (with the row
 * of zeros where a tap falls outside the image), and it reads the 32 channels' B rows
 * from shared memory itself, laid out as its descriptor says. The rest of the kernel,
 * the border correction and the epilogue among it, is bmma_and's. sm_90a code: on a
 * build without 90, or another GPU, the variant reports why it does not run.
 *
 *   build/bin/09_binary --preset bnn-b16c256s28 --variant bmma_wgmma
 */
#include "bmma_tile.cuh"
#include "kernels.h"

extern "C" int bmma_wgmma_code_cc(void)
{
    return wgmma_built_cc();
}

extern "C" void launch_conv2d_bmma_wgmma(const struct conv_args *a)
{
    /* scratch holds the table of bases (6_bmma_classes.cu, setup_conv2d_bmma_classes). */
    launch_bmma<bmma_and, fp32_values, BMMA_WGMMA>(a);
}
