/* The convolution's float64 gold reference, computed on the CPU at the outputs its
 * plan picks (reference.h): all of a small problem, a sample of a large one. One loop
 * serves every layout: it reads the input and the weights through strides. */
#ifndef GOLD_H
#define GOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conv_problem.h"
#include "reference.h"
#include "tensor_format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A 4-D tensor as the gold reads it: element (a, b, y, x), in NCHW terms (the input's
 * n, c, y, x; the weights' k, c, i, j), at data[a*n + b*c + (y-y0)*row + (x-x0)*col].
 * The origin (y0, x0) is 0 for a whole tensor, and the first pixel of a window for an
 * input that exists only around one output. */
struct gold_tensor {
    const float *data;
    size_t n, c, row, col; /* strides, in elements */
    int y0, x0;
};

/* A whole input (N x C x H x W) or weights (K x C x R x S) tensor in layout l, NCHW or
 * NHWC (tensor_format.h). */
struct gold_tensor gold_input(const struct conv_shape *s, enum layout l, const float *in);
struct gold_tensor gold_weights(const struct conv_shape *s, enum layout l, const float *w);
/* Output (n, k, y, x): bias[k] (none when bias is NULL) plus the taps inside the image;
 * *magnitude (if not NULL) receives its error scale, |bias| + sum |w * in|. */
double gold_output_of(const struct conv_shape *s, const struct gold_tensor *in,
                      const struct gold_tensor *w, const float *bias, int n, int k, int y, int x,
                      double *magnitude);
/* The same on whole tensors in layout l. */
double gold_output_in(const struct conv_shape *s, enum layout l, const float *in, const float *w,
                      const float *bias, int n, int k, int y, int x, double *magnitude);
/* One reference output at flat NCHW index `at`; *magnitude receives its error scale. */
double gold_output_at(const struct conv_shape *s, const float *in, const float *w,
                      const float *bias, size_t at, double *magnitude);
/* True when the problem is too large for a full reference: it is sampled. */
bool gold_is_sampled(const struct conv_shape *s);
/* Full or sampled reference; the sample is drawn from `seed`. Memory it cannot get
 * ends the run (alloc.h). */
void gold_compute(struct gold *g, const struct conv_shape *s, const float *in, const float *w,
                  const float *bias, uint64_t seed);

#ifdef __cplusplus
}
#endif

#endif
