/* Steps 4 and 5 of lesson 07, the fp32 implicit GEMM: the library 07_implicit_gemm,
 * which lesson 09 links too (its float_sign variant runs it on +1/-1 floats). Each
 * launcher enqueues its kernel on a->stream, as kernels.h's do. */
#ifndef IMPLICIT_GEMM_H
#define IMPLICIT_GEMM_H

#include "conv_args.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The convolution as a GEMM whose right-hand matrix is gathered on the fly
 * (4_implicit_gemm.cu). setup lays the weights out as a [cin*ksize^2][cout]
 * matrix in the variant's scratch memory; run reads only that copy of the weights. */
size_t implicit_gemm_scratch_bytes(const struct conv_shape *s);
void setup_conv2d_implicit_gemm(const struct conv_args *a);
void launch_conv2d_implicit_gemm(const struct conv_args *a);

/* The steps from that GEMM to one fed by cp.async copies into a three-stage
 * shared-memory ring, one idea each (5_implicit_gemm_async.cu); all use the matrix
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
