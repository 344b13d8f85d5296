/* Lesson 08, step 3, variant "mma_fp16_ldmatrix": step 2's kernel with its fragments
 * loaded by ldmatrix from XOR-swizzled tiles (ldmatrix_fragments.cuh): 8 instructions
 * per k-step where step 2 issued 32, and no bank conflicts. Still one tile in shared
 * memory at a time: the next step overlaps the copies with the multiplies.
 *
 *   build/bin/08_tensor_cores --preset unet-256x256 --variant mma_fp16_ldmatrix
 */
#include "kernels.h"
#include "ldmatrix_fragments.cuh"
#include "mma_sync.cuh"

extern "C" void launch_conv2d_mma_fp16_ldmatrix(const struct conv_args *a)
{
    launch_one_tile<ldmatrix_fragments>(a);
}
