/* A small deterministic random number generator (splitmix64), so that a printed
 * seed reproduces every input on every machine. */
#ifndef RNG_H
#define RNG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rng {
    uint64_t state;
};

struct rng rng_seeded(uint64_t seed);
uint64_t rng_next(struct rng *r);
double rng_uniform(struct rng *r);                 /* [0, 1) */
size_t rng_below(struct rng *r, size_t bound);     /* [0, bound) */
/* Fill with uniform values in [lo, hi). */
void fill_uniform(float *x, size_t count, float lo, float hi, struct rng *r);

#ifdef __cplusplus
}
#endif

#endif
