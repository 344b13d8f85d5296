/* The convolution's float64 gold reference, computed on the CPU at the outputs its
 * plan picks (reference.h): all of a small problem, a sample of a large one. */
#ifndef GOLD_H
#define GOLD_H

#include <stdbool.h>
#include <stdint.h>

#include "conv_problem.h"
#include "reference.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Above this many multiply-adds, the reference is computed at a sample of outputs. */
#define GOLD_FULL_MAX_MACS (1.0 * (1 << 27))

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
