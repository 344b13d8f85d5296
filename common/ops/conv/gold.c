#include "gold.h"

#include <math.h>

struct gold_tensor gold_input(const struct conv_shape *s, enum layout l, const float *in)
{
    const size_t plane = (size_t)s->h * s->w;
    if (l == LAYOUT_NHWC)
        return (struct gold_tensor){in, plane * s->cin, 1, (size_t)s->w * s->cin, s->cin, 0, 0};
    return (struct gold_tensor){in, plane * s->cin, plane, s->w, 1, 0, 0};
}

struct gold_tensor gold_weights(const struct conv_shape *s, enum layout l, const float *w)
{
    const size_t taps = (size_t)s->ksize * s->ksize;
    if (l == LAYOUT_NHWC)
        return (struct gold_tensor){w, taps * s->cin, 1, (size_t)s->ksize * s->cin, s->cin, 0, 0};
    return (struct gold_tensor){w, taps * s->cin, taps, s->ksize, 1, 0, 0};
}

double gold_output_of(const struct conv_shape *s, const struct gold_tensor *in,
                      const struct gold_tensor *w, const float *bias, int n, int k, int y, int x,
                      double *magnitude)
{
    const int r = s->ksize / 2;
    double sum = bias ? bias[k] : 0.0;
    double mag = fabs(sum);
    for (int c = 0; c < s->cin; c++) {
        const float *plane = in->data + (size_t)n * in->n + (size_t)c * in->c;
        const float *taps = w->data + (size_t)k * w->n + (size_t)c * w->c;
        for (int i = 0; i < s->ksize; i++) {
            int yy = y + i - r;
            if (yy < 0 || yy >= s->h)
                continue;
            const float *row = plane + (size_t)(yy - in->y0) * in->row;
            for (int j = 0; j < s->ksize; j++) {
                int xx = x + j - r;
                if (xx < 0 || xx >= s->w)
                    continue;
                double term = (double)row[(size_t)(xx - in->x0) * in->col] *
                              taps[(size_t)i * w->row + (size_t)j * w->col];
                sum += term;
                mag += fabs(term);
            }
        }
    }
    if (magnitude)
        *magnitude = mag;
    return sum;
}

double gold_output_in(const struct conv_shape *s, enum layout l, const float *in, const float *w,
                      const float *bias, int n, int k, int y, int x, double *magnitude)
{
    const struct gold_tensor input = gold_input(s, l, in), weights = gold_weights(s, l, w);
    return gold_output_of(s, &input, &weights, bias, n, k, y, x, magnitude);
}

double gold_output_at(const struct conv_shape *s, const float *in, const float *w,
                      const float *bias, size_t at, double *magnitude)
{
    const int x = (int)(at % s->w);
    const int y = (int)(at / s->w % s->h);
    const int k = (int)(at / ((size_t)s->w * s->h) % s->cout);
    const int n = (int)(at / ((size_t)s->w * s->h * s->cout));
    return gold_output_in(s, LAYOUT_NCHW, in, w, bias, n, k, y, x, magnitude);
}

bool gold_is_sampled(const struct conv_shape *s)
{
    return conv_macs(s) > GOLD_FULL_MAX_TERMS;
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
