/* The same sums in a different order: one output row at a time, each filter tap
 * adds weight * (a shifted input row) to the whole output row. The innermost loop
 * then walks contiguous memory with no branch, which gcc turns into SIMD code
 * (check with -fopt-info-vec), and the output row stays in L1 while all
 * cin * ksize^2 taps are added to it. */
#include <stddef.h>

#include "kernels.h"

/* dst += weight * src over len floats: the loop that vectorises. Not fmaf: on a
 * target without an FMA instruction (x86-64's baseline, which the portable build
 * uses) fmaf is a call into the C library per element, and the loop no longer
 * vectorises. The build lets gcc fuse the multiply and add where the CPU can. */
/* [page: add_scaled_row] */
static void add_scaled_row(float *restrict dst, const float *restrict src, float weight, int len)
{
    for (int t = 0; t < len; t++)
        dst[t] += weight * src[t];
}
/* [/page: add_scaled_row] */

static int max_int(int p, int q)
{
    return p > q ? p : q;
}

static int min_int(int p, int q)
{
    return p < q ? p : q;
}

/* [page: conv_rows] */
void conv_rows(const struct conv_args *a, int n, int k, int y0, int y1)
{
    const struct conv_shape *s = &a->shape;
    const int r = s->ksize / 2;
    const size_t plane = (size_t)s->h * s->w;
    const float *in_n = input_f32(a) + (size_t)n * s->cin * plane;
    const float *w_k = weights_f32(a) + (size_t)k * s->cin * s->ksize * s->ksize;
    float *out_plane = output_f32(a) + ((size_t)n * s->cout + k) * plane;
    const float bias = a->bias ? a->bias[k] : 0.0f;

    for (int y = y0; y < y1; y++) {
        float *out_row = out_plane + (size_t)y * s->w;
        for (int x = 0; x < s->w; x++)
            out_row[x] = bias;
        /* Filter rows that fall above or below the image add nothing: skip them
         * whole instead of testing every pixel. */
        const int i0 = max_int(0, r - y);
        const int i1 = min_int(s->ksize, s->h + r - y);
        for (int c = 0; c < s->cin; c++) {
            const float *in_c = in_n + (size_t)c * plane;
            const float *w_c = w_k + (size_t)c * s->ksize * s->ksize;
            for (int i = i0; i < i1; i++) {
                const float *in_row = in_c + (size_t)(y + i - r) * s->w;
                for (int j = 0; j < s->ksize; j++) {
                    /* Tap j reads input column x + j - r: only outputs x in
                     * [x0, x1) read inside the row, the rest would read padding. */
                    const int x0 = max_int(0, r - j);
                    const int x1 = min_int(s->w, s->w + r - j);
                    if (x1 > x0)
                        add_scaled_row(out_row + x0, in_row + x0 + j - r, w_c[i * s->ksize + j],
                                       x1 - x0);
                }
            }
        }
    }
}
/* [/page: conv_rows] */

void conv_reordered(const struct conv_args *a)
{
    for (int n = 0; n < a->shape.n; n++)
        for (int k = 0; k < a->shape.cout; k++)
            conv_rows(a, n, k, 0, a->shape.h);
}
