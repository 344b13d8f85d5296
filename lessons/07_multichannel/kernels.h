/* The launchers of lesson 07, one file per idea. Each enqueues its kernel on
 * a->stream for the shape in a->shape; a->input, weights, bias and output are
 * device pointers, bias is NULL when the layer has none. */
#ifndef KERNELS_H
#define KERNELS_H

#include "conv_args.h"
#include "implicit_gemm.h" /* steps 4 and 5 */

#ifdef __cplusplus
extern "C" {
#endif

/* One thread per output, every operand read from global memory (1_direct.cu). */
conv_launcher launch_conv2d_direct;

/* An input tile + halo in shared memory, reused by a block of output channels
 * (2_smem_input.cu). */
conv_launcher launch_conv2d_smem_input;

/* Each thread holds 8 output channels x 4 pixels in registers; weights staged in
 * shared memory per input-channel chunk (3_reg_block.cu). */
conv_launcher launch_conv2d_reg_block;

#ifdef __cplusplus
}
#endif

#endif
