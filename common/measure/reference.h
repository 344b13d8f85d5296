/* A float64 reference at a plan of outputs: every output of a small problem, or a
 * sample of a large one (every border pixel of a few output planes, where padding
 * bugs live, plus thousands of random outputs). Any op whose outputs are planes of
 * h x w pixels plans its check here and fills the values from its own gold; an op
 * whose outputs share work per site (a pixel's channels, one sum scaled per channel)
 * plans the sites and checks every output at each. */
#ifndef REFERENCE_H
#define REFERENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GOLD_RANDOM_SAMPLES 8192
/* Above this many float64 terms (multiply-adds) a full reference takes seconds on a
 * small CPU: the check plans a sample. */
#define GOLD_FULL_MAX_TERMS (1.0 * (1 << 27))

struct gold {
    size_t count;      /* outputs checked */
    size_t *index;     /* flat output index of each (plane-major); NULL means all, in order */
    double *value;     /* reference value */
    double *magnitude; /* the scale of any rounding error (sum of |terms|) */
    bool sampled;
};

/* Plans the outputs of `planes` planes of h x w to check: all of them, or with
 * `sampled` the border pixels of the first, the last and one random plane plus
 * GOLD_RANDOM_SAMPLES random outputs, drawn from `seed`. Allocates value and
 * magnitude for the op to fill (index i at output g->index[i], or i). Memory it
 * cannot get ends the run (alloc.h). */
void gold_plan(struct gold *g, size_t planes, int h, int w, bool sampled, uint64_t seed);
/* Output i of the plan: its flat index. */
static inline size_t gold_output(const struct gold *g, size_t i)
{
    return g->index ? g->index[i] : i;
}
void gold_free(struct gold *g);

#ifdef __cplusplus
}
#endif

#endif
