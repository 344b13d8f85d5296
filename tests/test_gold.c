/* The float64 reference on answers known by hand. */
#include <math.h>
#include <stdlib.h>

#include "gold.h"
#include "unit.h"

static double at(const struct conv_shape *s, const float *in, const float *w, const float *b,
                 int n, int k, int y, int x)
{
    double mag;
    size_t i = (((size_t)n * s->cout + k) * s->h + y) * s->w + x;
    return gold_output_at(s, in, w, b, i, &mag);
}

static void impulse_reproduces_the_filter(void)
{
    /* One 1 in the middle of a 7x7 image: the output around it is the filter,
     * mirrored (this is cross-correlation). */
    struct conv_shape s = {1, 1, 1, 7, 7, 3, false};
    float in[49] = {0}, w[9];
    in[3 * 7 + 3] = 1;
    for (int i = 0; i < 9; i++)
        w[i] = (float)(i + 1);
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            CHECK(at(&s, in, w, NULL, 0, 0, 3 + dy, 3 + dx) == w[(1 - dy) * 3 + (1 - dx)]);
    CHECK(at(&s, in, w, NULL, 0, 0, 0, 0) == 0);
}

static void identity_filter(void)
{
    struct conv_shape s = {2, 1, 1, 4, 5, 5, false};
    float in[40], w[25] = {0};
    w[12] = 1;
    for (int i = 0; i < 40; i++)
        in[i] = (float)i * 0.5f - 3;
    for (int n = 0; n < 2; n++)
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 5; x++)
                CHECK(at(&s, in, w, NULL, n, 0, y, x) == in[(n * 4 + y) * 5 + x]);
}

static void box_on_constant_image_counts_neighbours(void)
{
    /* Zero padding: a 3x3 box of ones over an image of ones counts the pixels
     * inside the image: 4 at corners, 6 on edges, 9 inside. */
    struct conv_shape s = {1, 1, 1, 5, 6, 3, false};
    float in[30], w[9];
    for (int i = 0; i < 30; i++) in[i] = 1;
    for (int i = 0; i < 9; i++) w[i] = 1;
    CHECK(at(&s, in, w, NULL, 0, 0, 0, 0) == 4);
    CHECK(at(&s, in, w, NULL, 0, 0, 4, 5) == 4);
    CHECK(at(&s, in, w, NULL, 0, 0, 0, 2) == 6);
    CHECK(at(&s, in, w, NULL, 0, 0, 2, 0) == 6);
    CHECK(at(&s, in, w, NULL, 0, 0, 2, 3) == 9);
}

static void filter_larger_than_image(void)
{
    /* 15x15 ones over a 2x3 image of ones: every output sees the whole image. */
    struct conv_shape s = {1, 1, 1, 2, 3, 15, false};
    float in[6] = {1, 1, 1, 1, 1, 1}, w[225];
    for (int i = 0; i < 225; i++) w[i] = 1;
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 3; x++)
            CHECK(at(&s, in, w, NULL, 0, 0, y, x) == 6);
}

static void channels_and_bias(void)
{
    /* 1x1 filters: out[k] = bias[k] + sum_c w[k][c] * in[c]. */
    struct conv_shape s = {1, 3, 2, 1, 1, 1, true};
    float in[3] = {1, 2, 3}, w[6] = {1, 0, 0, 1, 1, 1}, b[2] = {0.5f, -1};
    CHECK(at(&s, in, w, b, 0, 0, 0, 0) == 1.5);
    CHECK(at(&s, in, w, b, 0, 1, 0, 0) == 5);
    double mag;
    gold_output_at(&s, in, w, b, 1, &mag);
    CHECK(mag == 7); /* |bias| + sum |w x| = 1 + 1 + 2 + 3 */
}

static void full_for_small_sampled_for_large(void)
{
    struct conv_shape small = {1, 1, 1, 10, 10, 3, false};
    struct conv_shape large = {1, 1, 1, 8192, 8192, 3, false};
    float *in = calloc(input_count(&large), sizeof *in), w[9] = {1};
    struct gold g;
    gold_compute(&g, &small, in, w, NULL, 1);
    CHECK(!g.sampled && g.count == 100 && g.index == NULL);
    gold_free(&g);
    gold_compute(&g, &large, in, w, NULL, 1);
    CHECK(g.sampled && g.index != NULL);
    /* One plane: its border once, then the random outputs. */
    CHECK(g.count == (4 * 8192 - 4) + GOLD_RANDOM_SAMPLES);
    bool in_range = true, first_corner = false, last_corner = false;
    for (size_t i = 0; i < g.count; i++) {
        in_range = in_range && g.index[i] < output_count(&large);
        first_corner = first_corner || g.index[i] == 0;
        last_corner = last_corner || g.index[i] == output_count(&large) - 1;
    }
    CHECK(in_range && first_corner && last_corner);
    gold_free(&g);
    free(in);
}

static const struct unit_case cases[] = {
    {"impulse_reproduces_the_filter", impulse_reproduces_the_filter},
    {"identity_filter", identity_filter},
    {"box_on_constant_image_counts_neighbours", box_on_constant_image_counts_neighbours},
    {"filter_larger_than_image", filter_larger_than_image},
    {"channels_and_bias", channels_and_bias},
    {"full_for_small_sampled_for_large", full_for_small_sampled_for_large},
};

UNIT_MAIN(cases)
