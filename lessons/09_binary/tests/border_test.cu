/* The border correction of lesson 09's kernels, on the host: a random binary layer is
 * packed as the harness packs it, each kernel's way of turning popcounts into sums of
 * x * w (binary_ops.cuh) is applied at every output, and the result is checked
 * against the harness's float64 gold; the tensor-core kernels' form takes the weight
 * counts from the pixel's window class, as their setup counts them. The same counts without the
 * correction (the outside taps read as zero words, that is as -1) must fail the check. Sizes:
 * channel counts around a word, a filter larger than the image.
 *
 *   build/lessons/09_binary/tests/09_border_test
 */
#include <stdio.h>
#include <stdlib.h>

#include "binary_ops.cuh"
#include "gold.h"
#include "rng.h"
#include "verify.h"
#include "xnor_scale.h"

enum form {
    MISMATCHES,
    XOR_ALL_TAPS,
    AND_ALL_TAPS,
    XOR_CLASS_BASE,
    AND_CLASS_BASE,
    XOR_UNCORRECTED
};
static const char *const form_names[] = {"mismatches over valid taps",
                                         "xor over all taps",
                                         "and over all taps",
                                         "xor, base of the window class",
                                         "and, base of the window class",
                                         "xor, no correction"};

struct layer {
    struct conv_shape s;
    int words;
    float *x, *w, *alpha, *bias;
    uint32_t *x_bits, *w_bits; /* NHWC words, KRSC words */
    struct gold g;
};

static int popcount(uint32_t v)
{
    return __builtin_popcount(v);
}

static void layer_make(struct layer *l, struct conv_shape s)
{
    l->s = s;
    l->words = WORDS_PER_PIXEL(s.cin);
    struct rng r = rng_seeded(5);
    size_t nx = input_count(&s), nw = weight_count(&s);
    l->x = (float *)malloc(nx * sizeof(float));
    l->w = (float *)malloc(nw * sizeof(float));
    float *real = (float *)malloc(nw * sizeof(float));
    l->alpha = (float *)malloc(s.cout * sizeof(float));
    l->bias = (float *)malloc(s.cout * sizeof(float));
    fill_uniform(l->x, nx, -1, 1, &r);
    fill_uniform(real, nw, -1, 1, &r);
    fill_uniform(l->bias, s.cout, -1, 1, &r);
    for (size_t i = 0; i < nx; i++)
        l->x[i] = dtype_round(DTYPE_BINARY, l->x[i]);
    xnor_scale_weights(&s, real, l->alpha, l->w);
    free(real);
    struct dims4 xd = {s.n, s.cin, s.h, s.w}, wd = {s.cout, s.cin, s.ksize, s.ksize};
    l->x_bits = (uint32_t *)malloc(tensor_bytes(xd, DTYPE_BINARY, LAYOUT_BITS));
    l->w_bits = (uint32_t *)malloc(tensor_bytes(wd, DTYPE_BINARY, LAYOUT_BITS));
    tensor_from_nchw(l->x, xd, DTYPE_BINARY, LAYOUT_BITS, l->x_bits);
    tensor_from_nchw(l->w, wd, DTYPE_BINARY, LAYOUT_BITS, l->w_bits);
    gold_compute(&l->g, &s, l->x, l->w, l->bias, 1);
}

static void layer_free(struct layer *l)
{
    gold_free(&l->g);
    free(l->x), free(l->w), free(l->alpha), free(l->bias), free(l->x_bits), free(l->w_bits);
}

/* popc over the words of input pixel (n, y, x) against (op) weight tap t of channel k;
 * a pixel outside the image is a zero word, as the tensor-core kernels load it. */
static int count(const struct layer *l, int n, int y, int x, int k, int t, bool and_op,
                 bool input_only)
{
    const struct conv_shape *s = &l->s;
    bool inside = y >= 0 && y < s->h && x >= 0 && x < s->w;
    int pop = 0;
    for (int word = 0; word < l->words; word++) {
        uint32_t a = inside ? l->x_bits[(((size_t)n * s->h + y) * s->w + x) * l->words + word] : 0;
        uint32_t b = l->w_bits[((size_t)k * s->ksize * s->ksize + t) * l->words + word];
        pop += popcount(input_only ? a : and_op ? a & b : a ^ b);
    }
    return pop;
}

static int weight_pop(const struct layer *l, int k, int t)
{
    int pop = 0;
    for (int word = 0; word < l->words; word++)
        pop += popcount(l->w_bits[((size_t)k * l->s.ksize * l->s.ksize + t) * l->words + word]);
    return pop;
}

/* One output as a kernel of the given form computes it. */
static float output_at(const struct layer *l, enum form f, size_t at)
{
    const struct conv_shape *s = &l->s;
    const int x = at % s->w, y = at / s->w % s->h, k = at / ((size_t)s->w * s->h) % s->cout;
    const int n = at / ((size_t)s->w * s->h * s->cout), r = s->ksize / 2;
    const struct tap_window win = tap_window_at(y, x, s);
    const int taps = valid_taps(win);
    int valid_count = 0, all_count = 0, input_pop = 0, inside_wpop = 0, outside_wpop = 0;
    for (int i = 0; i < s->ksize; i++)
        for (int j = 0; j < s->ksize; j++) {
            const int t = i * s->ksize + j;
            const bool inside = i >= win.i0 && i < win.i1 && j >= win.j0 && j < win.j1;
            const bool and_op = f == AND_ALL_TAPS || f == AND_CLASS_BASE;
            const int c = count(l, n, y + i - r, x + j - r, k, t, and_op, false);
            all_count += c;
            valid_count += inside ? c : 0;
            input_pop += count(l, n, y + i - r, x + j - r, k, t, false, true);
            (inside ? inside_wpop : outside_wpop) += weight_pop(l, k, t);
        }
    /* The weight counts of the window of the pixel's class (bmma_tile.cuh's setup). */
    const struct tap_window cw =
        tap_window_at(window_class_row(window_class(y, s->h, s->ksize), s->h, s->ksize),
                      window_class_row(window_class(x, s->w, s->ksize), s->w, s->ksize), s);
    int class_inside = 0;
    for (int i = cw.i0; i < cw.i1; i++)
        for (int j = cw.j0; j < cw.j1; j++)
            class_inside += weight_pop(l, k, i * s->ksize + j);
    const int class_taps = valid_taps(cw),
              class_outside = inside_wpop + outside_wpop - class_inside;
    int sum = 0;
    switch (f) {
    case MISMATCHES: sum = sum_from_mismatches(s->cin, taps, valid_count); break;
    case XOR_ALL_TAPS: sum = sum_from_xor_popc(s->cin, taps, all_count, outside_wpop); break;
    case AND_ALL_TAPS:
        sum = sum_from_and_popc(s->cin, taps, all_count, input_pop, inside_wpop);
        break;
    case XOR_CLASS_BASE:
        sum = sum_from_xor_base(xor_sum_base(s->cin, class_taps, class_outside), all_count);
        break;
    case AND_CLASS_BASE:
        sum =
            sum_from_and_base(and_sum_base(s->cin, class_taps, class_inside), all_count, input_pop);
        break;
    case XOR_UNCORRECTED: sum = sum_from_mismatches(s->cin, s->ksize * s->ksize, all_count); break;
    }
    return fmaf(l->alpha[k], (float)sum, l->bias[k]);
}

int main(void)
{
    const struct conv_shape shapes[] = {
        {2, 1, 3, 5, 6, 3, true},   {1, 31, 4, 4, 5, 3, true}, {1, 33, 5, 6, 4, 3, true},
        {1, 100, 3, 5, 5, 5, true}, {2, 64, 2, 2, 3, 5, true}, {1, 40, 3, 4, 4, 1, true},
        {1, 33, 2, 9, 7, 5, true},  {2, 3, 2, 8, 1, 7, true},
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        struct layer l;
        layer_make(&l, shapes[i]);
        float *out = (float *)malloc(output_count(&l.s) * sizeof(float));
        for (int f = MISMATCHES; f <= XOR_UNCORRECTED; f++) {
            for (size_t at = 0; at < output_count(&l.s); at++)
                out[at] = output_at(&l, (enum form)f, at);
            struct check_result c = check_output(&l.g, out, tolerance_for(DTYPE_BINARY, &l.s));
            /* A 1x1 filter has no outside taps: there the uncorrected form is right. */
            bool expect = f != XOR_UNCORRECTED || l.s.ksize == 1;
            bool ok = c.pass == expect;
            failed += !ok;
            printf("%s cin=%d %dx%d ksize=%d, %s: %s (%zu of %zu off)\n", ok ? "ok  " : "FAIL",
                   l.s.cin, l.s.h, l.s.w, l.s.ksize, form_names[f], c.pass ? "PASS" : "fails",
                   c.failures, c.checked);
        }
        free(out);
        layer_free(&l);
    }
    return failed ? 1 : 0;
}
