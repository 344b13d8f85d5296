/* The library baseline: cudnnConvolutionForward on the same problem, fp32 with
 * tensor-core math off (CUDNN_FMA_MATH, so no TF32), the fastest algorithm that
 * cudnnFindConvolutionForwardAlgorithm reports. The bias is not part of the
 * timed call (it would be a second kernel): cuDNN's time is for the convolution
 * alone, which can only flatter cuDNN. Built against a stub when cuDNN is absent. */
#ifndef CUDNN_BASELINE_H
#define CUDNN_BASELINE_H

#include <stdbool.h>

#include "conv_problem.h"

struct cudnn_conv;

bool cudnn_available(void);
/* Chooses the algorithm and allocates its workspace; NULL with *why on failure. */
struct cudnn_conv *cudnn_conv_create(const struct conv_shape *s, const char **why);
/* Enqueues one forward convolution (no bias) on the default stream. */
void cudnn_conv_run(struct cudnn_conv *c, const float *in, const float *w, float *out);
const char *cudnn_conv_algorithm(const struct cudnn_conv *c);
void cudnn_conv_destroy(struct cudnn_conv *c);

#endif
