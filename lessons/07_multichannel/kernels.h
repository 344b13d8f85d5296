/* The launchers of lesson 07, one file per idea. Each enqueues its kernel on
 * a->stream for the shape in a->shape; a->input, weights, bias and output are
 * device pointers, bias is NULL when the layer has none. */
#ifndef KERNELS_H
#define KERNELS_H

#include "conv_args.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One thread per output, every operand read from global memory (conv_direct.cu). */
void launch_conv2d_direct(const struct conv_args *a);

/* An input tile + halo in shared memory, reused by a block of output channels
 * (conv_smem_input.cu). */
void launch_conv2d_smem_input(const struct conv_args *a);

/* Each thread holds 8 output channels x 4 pixels in registers; weights staged in
 * shared memory per input-channel chunk (conv_reg_block.cu). */
void launch_conv2d_reg_block(const struct conv_args *a);

/* The convolution as a GEMM whose right-hand matrix is gathered on the fly
 * (conv_implicit_gemm.cu). setup lays the weights out as a [cin*ksize^2][cout]
 * matrix in the variant's scratch memory; run reads only that copy of the weights. */
size_t implicit_gemm_scratch_bytes(const struct conv_shape *s);
void setup_conv2d_implicit_gemm(const struct conv_args *a);
void launch_conv2d_implicit_gemm(const struct conv_args *a);

/* The steps from that GEMM to one fed by cp.async copies into a three-stage
 * shared-memory ring, one idea each (conv_implicit_gemm_async.cu); all use the matrix
 * setup_conv2d_implicit_gemm builds. One pixel column per thread: */
void launch_conv2d_implicit_gemm_column(const struct conv_args *a);
/* ... one border test per tap: */
void launch_conv2d_implicit_gemm_tap(const struct conv_args *a);
/* ... cp.async copies: */
void launch_conv2d_implicit_gemm_cp(const struct conv_args *a);
/* ... slices 16 rows deep: */
void launch_conv2d_implicit_gemm_bk16(const struct conv_args *a);
/* ... a ring of three stages. */
void launch_conv2d_implicit_gemm_async(const struct conv_args *a);

#ifdef __cplusplus
}
#endif

#endif
