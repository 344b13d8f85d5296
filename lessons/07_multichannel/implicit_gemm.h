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
conv_launcher setup_conv2d_implicit_gemm, launch_conv2d_implicit_gemm;

/* The steps from that GEMM to one fed by cp.async copies into a three-stage
 * shared-memory ring, one idea each (5_implicit_gemm_async.cu); all use the matrix
 * setup_conv2d_implicit_gemm builds. One pixel column per thread (_column), then one
 * border test per tap (_tap), cp.async copies (_cp), slices 16 rows deep (_bk16) and
 * a ring of three stages (_async). */
conv_launcher launch_conv2d_implicit_gemm_column, launch_conv2d_implicit_gemm_tap,
    launch_conv2d_implicit_gemm_cp, launch_conv2d_implicit_gemm_bk16,
    launch_conv2d_implicit_gemm_async;

#ifdef __cplusplus
}
#endif

#endif
