/* The float64 gold reference, computed on the CPU. Small problems are checked at
 * every output; large ones at a sample: every border pixel of a few output planes
 * (where padding bugs live) plus thousands of random outputs. */
#ifndef GOLD_H
#define GOLD_H

#include <stdbool.h>
#include <stdint.h>

#include "conv_problem.h"

/* Above this many multiply-adds, the reference is computed at a sample of outputs. */
#define GOLD_FULL_MAX_MACS (1.0 * (1 << 27))
#define GOLD_RANDOM_SAMPLES 8192

struct gold {
    size_t count;      /* outputs checked */
    size_t *index;     /* flat NCHW output index of each; NULL means all, in order */
    double *value;     /* reference value */
    double *magnitude; /* |bias| + sum |w*x|: the scale of any rounding error */
    bool sampled;
};

/* One reference output at flat NCHW index `at`; *magnitude receives its error scale. */
double gold_output_at(const struct conv_shape *s, const float *in, const float *w,
                      const float *bias, size_t at, double *magnitude);
/* True when the problem is too large for a full reference: it is sampled. */
bool gold_is_sampled(const struct conv_shape *s);
/* Full or sampled reference; the sample is drawn from `seed`. Memory it cannot get
 * ends the run (alloc.h). */
void gold_compute(struct gold *g, const struct conv_shape *s, const float *in, const float *w,
                  const float *bias, uint64_t seed);
void gold_free(struct gold *g);

#endif
