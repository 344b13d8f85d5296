/* big_layer's input drawn on the GPU that holds it (layer_values.h). */
#ifndef DRAW_H
#define DRAW_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#include "conv_problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rows [r0, r0 + rows) of images [n0, n0 + images) of the layer's NHWC fp16 input
 * (shape s), into `to` on the current GPU: each image's rows contiguous, one image
 * `image_stride` elements after the other; on stream. */
void draw_input_rows(void *to, size_t image_stride, int n0, int images, int r0, int rows,
                     const struct conv_shape *s, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
