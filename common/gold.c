#include "gold.h"

#include <math.h>
#include <stdlib.h>

#include "alloc.h"
#include "rng.h"

/* Output planes whose every border pixel is checked when sampling: the first,
 * the last and one drawn at random. */
#define GOLD_BORDER_PLANES 3

double gold_output_at(const struct conv_shape *s, const float *in, const float *w,
                      const float *bias, size_t at, double *magnitude)
{
    const int x = (int)(at % s->w);
    const int y = (int)(at / s->w % s->h);
    const int k = (int)(at / ((size_t)s->w * s->h) % s->cout);
    const int n = (int)(at / ((size_t)s->w * s->h * s->cout));
    const int r = s->ksize / 2;
    double sum = bias ? bias[k] : 0.0;
    double mag = fabs(sum);
    for (int c = 0; c < s->cin; c++) {
        const float *plane = in + ((size_t)n * s->cin + c) * s->h * s->w;
        const float *taps = w + ((size_t)k * s->cin + c) * s->ksize * s->ksize;
        for (int i = 0; i < s->ksize; i++) {
            int yy = y + i - r;
            if (yy < 0 || yy >= s->h)
                continue;
            for (int j = 0; j < s->ksize; j++) {
                int xx = x + j - r;
                if (xx < 0 || xx >= s->w)
                    continue;
                double term = (double)plane[(size_t)yy * s->w + xx] * taps[i * s->ksize + j];
                sum += term;
                mag += fabs(term);
            }
        }
    }
    *magnitude = mag;
    return sum;
}

/* Border pixels of a few planes, then random outputs; duplicates do no harm. */
static size_t sample_indices(const struct conv_shape *s, uint64_t seed, size_t *index)
{
    struct rng r = rng_seeded(seed ^ 0x5eedc0de);
    const size_t plane_size = (size_t)s->h * s->w;
    const size_t planes = (size_t)s->n * s->cout;
    size_t picked[GOLD_BORDER_PLANES] = {0, planes - 1, rng_below(&r, planes)};
    size_t count = 0;
    for (int p = 0; p < GOLD_BORDER_PLANES; p++) {
        size_t base = picked[p] * plane_size;
        for (int x = 0; x < s->w; x++) {
            index[count++] = base + x;
            if (s->h > 1)
                index[count++] = base + (size_t)(s->h - 1) * s->w + x;
        }
        for (int y = 1; y < s->h - 1; y++) {
            index[count++] = base + (size_t)y * s->w;
            if (s->w > 1)
                index[count++] = base + (size_t)y * s->w + s->w - 1;
        }
    }
    for (int i = 0; i < GOLD_RANDOM_SAMPLES; i++)
        index[count++] = rng_below(&r, planes * plane_size);
    return count;
}

static size_t sample_capacity(const struct conv_shape *s)
{
    size_t border = 2 * (size_t)s->h + 2 * (size_t)s->w;
    return GOLD_BORDER_PLANES * border + GOLD_RANDOM_SAMPLES;
}

bool gold_is_sampled(const struct conv_shape *s)
{
    return conv_macs(s) > GOLD_FULL_MAX_MACS;
}

void gold_compute(struct gold *g, const struct conv_shape *s, const float *in, const float *w,
                  const float *bias, uint64_t seed)
{
    g->sampled = gold_is_sampled(s);
    g->index = NULL;
    if (g->sampled) {
        g->index = host_alloc(sample_capacity(s) * sizeof *g->index, "the reference's samples");
        g->count = sample_indices(s, seed, g->index);
    } else {
        g->count = output_count(s);
    }
    g->value = host_alloc(g->count * sizeof *g->value, "the float64 reference");
    g->magnitude = host_alloc(g->count * sizeof *g->magnitude, "the float64 reference");
    const long long count = (long long)g->count;
#pragma omp parallel for schedule(dynamic, 256)
    for (long long i = 0; i < count; i++) {
        size_t at = g->index ? g->index[i] : (size_t)i;
        g->value[i] = gold_output_at(s, in, w, bias, at, &g->magnitude[i]);
    }
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
