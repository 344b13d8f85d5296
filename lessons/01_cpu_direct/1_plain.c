/* The convolution exactly as the formula reads: for every output, sum over input
 * channels and filter taps, skipping taps that fall outside the image. Correct and
 * slow: the bounds check sits in the innermost loop, which runs only ksize steps,
 * and each step reads a different input row, so the compiler cannot vectorise it. */
#include <stddef.h>

#include "kernels.h"

/* [page: plain] */
void conv_plain(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    const int r = s->ksize / 2;

    for (int n = 0; n < s->n; n++)
        for (int k = 0; k < s->cout; k++)
            for (int y = 0; y < s->h; y++)
                for (int x = 0; x < s->w; x++) {
                    float sum = a->bias ? a->bias[k] : 0.0f;
                    for (int c = 0; c < s->cin; c++)
                        for (int i = 0; i < s->ksize; i++)
                            for (int j = 0; j < s->ksize; j++) {
                                const int iy = y + i - r;
                                const int ix = x + j - r;
                                if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w)
                                    continue;
                                const size_t in_at =
                                    (((size_t)n * s->cin + c) * s->h + iy) * s->w + ix;
                                const size_t w_at =
                                    (((size_t)k * s->cin + c) * s->ksize + i) * s->ksize + j;
                                sum += input_f32(a)[in_at] * weights_f32(a)[w_at];
                            }
                    output_f32(a)[(((size_t)n * s->cout + k) * s->h + y) * s->w + x] = sum;
                }
}
/* [/page: plain] */
