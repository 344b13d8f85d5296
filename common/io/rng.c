#include "rng.h"

struct rng rng_seeded(uint64_t seed)
{
    struct rng r = {seed};
    return r;
}

uint64_t rng_next(struct rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double rng_uniform(struct rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

size_t rng_below(struct rng *r, size_t bound)
{
    return (size_t)(rng_uniform(r) * (double)bound);
}

void fill_uniform(float *x, size_t count, float lo, float hi, struct rng *r)
{
    for (size_t i = 0; i < count; i++)
        x[i] = lo + (hi - lo) * (float)rng_uniform(r);
}
