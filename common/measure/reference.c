#include "reference.h"

#include <stdlib.h>

#include "alloc.h"
#include "rng.h"

/* Output planes whose every border pixel is checked when sampling: the first,
 * the last and one drawn at random. */
#define GOLD_BORDER_PLANES 3

/* The border pixels of each distinct picked plane, then random outputs (a random one
 * may repeat a border one: that does no harm). */
static size_t sample_indices(size_t planes, int h, int w, uint64_t seed, size_t *index)
{
    struct rng r = rng_seeded(seed ^ 0x5eedc0de);
    const size_t plane_size = (size_t)h * w;
    size_t picked[GOLD_BORDER_PLANES] = {0, planes - 1, rng_below(&r, planes)};
    size_t count = 0;
    for (int p = 0; p < GOLD_BORDER_PLANES; p++) {
        bool seen = false;
        for (int q = 0; q < p; q++)
            seen = seen || picked[q] == picked[p];
        if (seen)
            continue;
        size_t base = picked[p] * plane_size;
        for (int x = 0; x < w; x++) {
            index[count++] = base + x;
            if (h > 1)
                index[count++] = base + (size_t)(h - 1) * w + x;
        }
        for (int y = 1; y < h - 1; y++) {
            index[count++] = base + (size_t)y * w;
            if (w > 1)
                index[count++] = base + (size_t)y * w + w - 1;
        }
    }
    for (int i = 0; i < GOLD_RANDOM_SAMPLES; i++)
        index[count++] = rng_below(&r, planes * plane_size);
    return count;
}

void gold_plan(struct gold *g, size_t planes, int h, int w, bool sampled, uint64_t seed)
{
    g->sampled = sampled;
    g->index = NULL;
    if (sampled) {
        const size_t capacity =
            GOLD_BORDER_PLANES * (2 * (size_t)h + 2 * (size_t)w) + GOLD_RANDOM_SAMPLES;
        g->index = host_alloc(capacity * sizeof *g->index, "the reference's samples");
        g->count = sample_indices(planes, h, w, seed, g->index);
    } else {
        g->count = planes * h * w;
    }
    g->value = host_alloc(g->count * sizeof *g->value, "the float64 reference");
    g->magnitude = host_alloc(g->count * sizeof *g->magnitude, "the float64 reference");
}

void gold_free(struct gold *g)
{
    free(g->index);
    free(g->value);
    free(g->magnitude);
    g->index = NULL;
    g->value = g->magnitude = NULL;
    g->count = 0;
}
