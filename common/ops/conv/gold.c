#include "gold.h"

#include <math.h>

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

bool gold_is_sampled(const struct conv_shape *s)
{
    return conv_macs(s) > GOLD_FULL_MAX_MACS;
}

void gold_compute(struct gold *g, const struct conv_shape *s, const float *in, const float *w,
                  const float *bias, uint64_t seed)
{
    gold_plan(g, (size_t)s->n * s->cout, s->h, s->w, gold_is_sampled(s), seed);
    const long long count = (long long)g->count;
#pragma omp parallel for schedule(dynamic, 256)
    for (long long i = 0; i < count; i++)
        g->value[i] = gold_output_at(s, in, w, bias, gold_output(g, (size_t)i), &g->magnitude[i]);
}
