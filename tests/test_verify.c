/* The check must pass honest float32 results and fail wrong ones: perturbed,
 * NaN, or never written. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gold.h"
#include "rng.h"
#include "unit.h"
#include "verify.h"
#include "xnor_scale.h"

/* A random multi-channel problem, its gold, and a float32 result computed in a
 * different order than the gold (as a kernel would). */
struct fixture {
    struct conv_shape s;
    float *in, *w, *b, *out;
    struct gold g;
    struct tolerance tol;
};

static void fixture_make(struct fixture *f, struct conv_shape s)
{
    f->s = s;
    struct rng r = rng_seeded(7);
    f->in = malloc(input_count(&s) * sizeof(float));
    f->w = malloc(weight_count(&s) * sizeof(float));
    f->b = malloc(s.cout * sizeof(float));
    f->out = malloc(output_count(&s) * sizeof(float));
    fill_uniform(f->in, input_count(&s), -1, 1, &r);
    fill_uniform(f->w, weight_count(&s), -1, 1, &r);
    fill_uniform(f->b, s.cout, -1, 1, &r);
    gold_compute(&f->g, &s, f->in, f->w, s.bias ? f->b : NULL, 1);
    /* float32 accumulation, channel-inner order: a different rounding than gold's. */
    int rad = s.ksize / 2;
    for (size_t at = 0; at < output_count(&s); at++) {
        int x = at % s.w, y = at / s.w % s.h, k = at / ((size_t)s.w * s.h) % s.cout;
        int n = at / ((size_t)s.w * s.h * s.cout);
        float acc = s.bias ? f->b[k] : 0.0f;
        for (int i = 0; i < s.ksize; i++)
            for (int j = 0; j < s.ksize; j++)
                for (int c = 0; c < s.cin; c++) {
                    int yy = y + i - rad, xx = x + j - rad;
                    if (yy >= 0 && yy < s.h && xx >= 0 && xx < s.w)
                        acc += f->in[(((size_t)n * s.cin + c) * s.h + yy) * s.w + xx] *
                               f->w[(((size_t)k * s.cin + c) * s.ksize + i) * s.ksize + j];
                }
        f->out[at] = acc;
    }
    f->tol = tolerance_for(DTYPE_FP32, &s);
}

static void fixture_free(struct fixture *f)
{
    gold_free(&f->g);
    free(f->in), free(f->w), free(f->b), free(f->out);
}

static const struct conv_shape layer = {2, 64, 3, 9, 11, 3, true};

static void honest_float32_passes(void)
{
    struct fixture f;
    fixture_make(&f, layer);
    struct check_result r = check_output(&f.g, f.out, f.tol);
    CHECK(r.pass && r.failures == 0 && r.checked == output_count(&layer));
    CHECK(r.rel_l2 > 0 && r.rel_l2 < 1e-6);
    CHECK(r.max_abs > 0 && r.max_abs < 1e-4);
    fixture_free(&f);
}

static void perturbed_output_fails(void)
{
    struct fixture f;
    fixture_make(&f, layer);
    f.out[100] *= 1.001f;
    struct check_result r = check_output(&f.g, f.out, f.tol);
    CHECK(!r.pass && r.failures == 1 && r.first_failure == 100);
    fixture_free(&f);
}

static void one_missing_term_fails(void)
{
    /* Dropping one of the 576 products (as an off-by-one loop bound would) is
     * caught, though it changes the output by about 1/576 of its magnitude. */
    struct fixture f;
    fixture_make(&f, layer);
    size_t at = 5 * 11 + 5; /* an interior pixel of plane (0, 0) */
    f.out[at] -= f.in[(size_t)63 * 99 + 6 * 11 + 6] * f.w[63 * 9 + 8];
    CHECK(!check_output(&f.g, f.out, f.tol).pass);
    fixture_free(&f);
}

static void nan_output_fails(void)
{
    struct fixture f;
    fixture_make(&f, layer);
    f.out[7] = NAN;
    struct check_result r = check_output(&f.g, f.out, f.tol);
    CHECK(!r.pass && r.failures == 1 && isinf(r.max_abs));
    fixture_free(&f);
}

static void half_written_output_fails(void)
{
    /* The harness poisons outputs with 0xFF bytes (NaN); a kernel that writes
     * only half the image leaves the rest NaN. */
    struct fixture f;
    fixture_make(&f, layer);
    size_t count = output_count(&layer);
    memset(f.out + count / 2, 0xFF, (count - count / 2) * sizeof(float));
    struct check_result r = check_output(&f.g, f.out, f.tol);
    CHECK(!r.pass && r.failures == count - count / 2);
    fixture_free(&f);
}

static void shifted_window_fails(void)
{
    struct fixture f;
    fixture_make(&f, layer);
    for (size_t i = 0; i + 1 < output_count(&layer); i++)
        f.out[i] = f.out[i + 1];
    CHECK(!check_output(&f.g, f.out, f.tol).pass);
    fixture_free(&f);
}

static void tolerance_follows_the_arithmetic(void)
{
    struct conv_shape small = {1, 1, 1, 8, 8, 3, false};
    struct conv_shape big = {1, 1024, 1, 8, 8, 3, true};
    struct tolerance a = tolerance_for(DTYPE_FP32, &small);
    struct tolerance b = tolerance_for(DTYPE_FP32, &big);
    CHECK(b.rtol > a.rtol);
    CHECK(fabs(b.rtol / a.rtol - sqrt(9217.0 / 9.0)) < 1e-9); /* grows like sqrt(C R S) */
    CHECK(a.rtol < 1e-5 && b.rtol < 1e-4);
    CHECK(tolerance_for(DTYPE_TF32, &small).rtol > 1e-3);
    /* fp16/bf16 operands are exact (rounded before the gold): only the output rounds. */
    double fp16 = tolerance_for(DTYPE_FP16, &small).rtol;
    CHECK(fp16 > a.rtol && fp16 < tolerance_for(DTYPE_TF32, &small).rtol);
    CHECK(tolerance_for(DTYPE_BF16, &small).rtol > 4 * fp16);
    /* 3xTF32 is back near fp32, far below TF32. */
    CHECK(tolerance_for(DTYPE_3XTF32, &small).rtol < 3 * a.rtol);
    /* binary: exact integer sums, then alpha * sum + bias in fp32: two roundings. */
    CHECK(tolerance_for(DTYPE_BINARY, &big).rtol == 2 * 0x1.0p-24);
}

/* A binary layer computed as its kernels do (an exact integer sum of x * sign(w), then
 * fmaf(alpha, sum, bias)), with the taps outside the image read as `pad`: 0 is the
 * zero padding of the layer, +1 or -1 what a packed bit would say if nobody corrected
 * it. */
static void binary_layer(const struct conv_shape *s, const float *x, const float *signs,
                         const float *alpha, const float *bias, int pad, float *out)
{
    int r = s->ksize / 2;
    for (size_t at = 0; at < output_count(s); at++) {
        int xo = at % s->w, yo = at / s->w % s->h, k = at / ((size_t)s->w * s->h) % s->cout;
        int n = at / ((size_t)s->w * s->h * s->cout);
        long sum = 0;
        for (int c = 0; c < s->cin; c++)
            for (int i = 0; i < s->ksize; i++)
                for (int j = 0; j < s->ksize; j++) {
                    int yy = yo + i - r, xx = xo + j - r;
                    bool inside = yy >= 0 && yy < s->h && xx >= 0 && xx < s->w;
                    float v =
                        inside ? x[(((size_t)n * s->cin + c) * s->h + yy) * s->w + xx] : (float)pad;
                    float w = signs[(((size_t)k * s->cin + c) * s->ksize + i) * s->ksize + j];
                    sum += (long)(v * w);
                }
        out[at] = fmaf(alpha[k], (float)sum, bias[k]);
    }
}

/* alpha[k] is the mean |w| of output channel k; the weights become alpha[k] * sign(w),
 * with sign(0) = +1. */
static void xnor_scale_is_mean_abs(void)
{
    struct conv_shape s = {1, 2, 2, 1, 1, 1, false};
    const float w[4] = {0.5f, -1.5f, 0.0f, -0.25f};
    float alpha[2], b[4];
    xnor_scale_weights(&s, w, alpha, b);
    CHECK(alpha[0] == 1.0f && alpha[1] == 0.125f);
    CHECK(b[0] == 1.0f && b[1] == -1.0f && b[2] == 0.125f && b[3] == -0.125f);
}

/* A random binary layer: +1/-1 inputs, real weights with their XNOR-Net scales and
 * signs, a bias in [-bias_range, bias_range), and the float64 gold of it. */
struct binary_case {
    float *x, *w, *wb, *signs, *alpha, *bias;
    struct gold g;
    struct tolerance tol;
};

static struct binary_case binary_case_make(const struct conv_shape *s, uint64_t seed,
                                           float bias_range)
{
    struct rng r = rng_seeded(seed);
    size_t nw = weight_count(s), nx = input_count(s);
    struct binary_case b = {.x = malloc(nx * sizeof(float)),
                            .w = malloc(nw * sizeof(float)),
                            .wb = malloc(nw * sizeof(float)),
                            .signs = malloc(nw * sizeof(float)),
                            .alpha = malloc(s->cout * sizeof(float)),
                            .bias = malloc(s->cout * sizeof(float))};
    fill_uniform(b.x, nx, -1, 1, &r);
    fill_uniform(b.w, nw, -1, 1, &r);
    fill_uniform(b.bias, s->cout, -bias_range, bias_range, &r);
    for (size_t i = 0; i < nx; i++)
        b.x[i] = dtype_round(DTYPE_BINARY, b.x[i]);
    xnor_scale_weights(s, b.w, b.alpha, b.wb);
    for (size_t i = 0; i < nw; i++)
        b.signs[i] = dtype_round(DTYPE_BINARY, b.wb[i]);
    gold_compute(&b.g, s, b.x, b.wb, b.bias, 1);
    b.tol = tolerance_for(DTYPE_BINARY, s);
    return b;
}

static void binary_case_free(struct binary_case *b)
{
    gold_free(&b->g);
    free(b->x), free(b->w), free(b->wb), free(b->signs), free(b->alpha), free(b->bias);
}

/* The check of a binary layer passes its exact result and fails one whose padding is
 * +1 or -1 instead of 0, with an even and an odd channel count. */
static void binary_padding_must_be_zero(void)
{
    for (int cin = 4; cin <= 5; cin++) {
        struct conv_shape s = {2, cin, 3, 6, 7, 3, true};
        struct binary_case b = binary_case_make(&s, 11, 1.0f);
        float *out = malloc(output_count(&s) * sizeof *out);
        binary_layer(&s, b.x, b.signs, b.alpha, b.bias, 0, out);
        struct check_result zero = check_output(&b.g, out, b.tol);
        CHECK(zero.pass && zero.rel_l2 < 1e-7);
        binary_layer(&s, b.x, b.signs, b.alpha, b.bias, 1, out);
        struct check_result plus = check_output(&b.g, out, b.tol);
        binary_layer(&s, b.x, b.signs, b.alpha, b.bias, -1, out);
        struct check_result minus = check_output(&b.g, out, b.tol);
        /* every output of a 6x7 image but the 4x5 inside touches the border */
        size_t border = (size_t)s.n * s.cout * (6 * 7 - 4 * 5);
        CHECK(!plus.pass && plus.failures > border / 2 && plus.failures <= border);
        CHECK(!minus.pass && minus.failures > border / 2 && minus.failures <= border);
        binary_case_free(&b);
        free(out);
    }
}

/* A binary layer's output as a fused kernel writes it, packed signs (OUTPUT_SIGN_BITS),
 * with the taps outside the image read as `pad`. */
static void pack_signs_of(const struct conv_shape *s, const float *out, uint32_t *words)
{
    const size_t plane = (size_t)s->h * s->w, per_pixel = WORDS_PER_PIXEL(s->cout);
    memset(words, 0, (size_t)s->n * plane * per_pixel * sizeof *words);
    for (size_t at = 0; at < output_count(s); at++) {
        size_t k = at / plane % s->cout, pixel = at / plane / s->cout * plane + at % plane;
        if (out[at] >= 0)
            words[pixel * per_pixel + k / 32] |= 1u << (k % 32);
    }
}

/* The check of packed signs passes the signs of the exact layer, and fails one wrong
 * bit, one set padding bit, an unwritten (poisoned) output, and a layer padded with +1
 * or -1; 33 output channels leave 31 padding bits per pixel. */
static void sign_bits_check_can_fail(void)
{
    struct conv_shape s = {2, 5, 33, 6, 7, 3, true};
    struct binary_case b = binary_case_make(&s, 12, 0.1f);
    size_t no = output_count(&s), word_count = (size_t)s.n * s.h * s.w * WORDS_PER_PIXEL(s.cout);
    float *out = malloc(no * sizeof *out);
    uint32_t *words = malloc(word_count * sizeof *words);
    const struct gold g = b.g;
    const struct tolerance tol = b.tol;

    binary_layer(&s, b.x, b.signs, b.alpha, b.bias, 0, out);
    pack_signs_of(&s, out, words);
    struct check_result right = check_sign_bits(&g, words, &s, tol);
    CHECK(right.pass && right.checked == no + (size_t)s.n * s.h * s.w && right.max_abs == 0);

    /* an output far from zero, its bit flipped */
    size_t far = 0;
    while (fabs(g.value[far]) < 0.5)
        far++;
    size_t plane = (size_t)s.h * s.w, k = far / plane % s.cout;
    size_t pixel = far / plane / s.cout * plane + far % plane;
    words[pixel * 2 + k / 32] ^= 1u << (k % 32);
    struct check_result flipped = check_sign_bits(&g, words, &s, tol);
    CHECK(!flipped.pass && flipped.failures == 1 && flipped.first_failure == far);
    words[pixel * 2 + k / 32] ^= 1u << (k % 32);

    words[3 * 2 + 1] |= 1u << 7; /* channel 39 of pixel 3: past cout */
    CHECK(!check_sign_bits(&g, words, &s, tol).pass);
    words[3 * 2 + 1] &= ~(1u << 7);
    CHECK(check_sign_bits(&g, words, &s, tol).pass);

    memset(words, POISON_BYTE, word_count * sizeof *words); /* nothing written */
    CHECK(!check_sign_bits(&g, words, &s, tol).pass);

    for (int pad = -1; pad <= 1; pad += 2) {
        binary_layer(&s, b.x, b.signs, b.alpha, b.bias, pad, out);
        pack_signs_of(&s, out, words);
        CHECK(!check_sign_bits(&g, words, &s, tol).pass);
    }
    binary_case_free(&b);
    free(out), free(words);
}

/* Where the value is within the tolerance of zero, either bit passes, and is counted. */
static void sign_bits_near_zero_either_way(void)
{
    struct conv_shape s = {1, 1, 2, 1, 1, 1, true};
    const float x[1] = {1.0f}, w[2] = {0.5f, 0.5f}, bias[2] = {-0.5f, 0.25f};
    struct gold g;
    gold_compute(&g, &s, x, w, bias, 1); /* 0 exactly, and 0.75 */
    struct tolerance tol = tolerance_for(DTYPE_BINARY, &s);
    for (uint32_t bit0 = 0; bit0 <= 1; bit0++) {
        uint32_t word = bit0 | 2u;
        struct check_result c = check_sign_bits(&g, &word, &s, tol);
        CHECK(c.pass && c.near_zero == 1);
    }
    uint32_t wrong = 1u; /* channel 1 (0.75) clear: wrong */
    CHECK(!check_sign_bits(&g, &wrong, &s, tol).pass);
    gold_free(&g);
}

static void sampled_check_reads_only_samples(void)
{
    struct conv_shape s = {1, 1, 1, 8192, 8192, 3, false};
    float *in = calloc(input_count(&s), sizeof(float)), w[9] = {0, 0, 0, 0, 2, 0, 0, 0, 0};
    float *out = malloc(output_count(&s) * sizeof(float));
    for (size_t i = 0; i < input_count(&s); i += 4099)
        in[i] = 1.5f;
    struct gold g;
    gold_compute(&g, &s, in, w, NULL, 3);
    CHECK(g.sampled);
    for (size_t i = 0; i < output_count(&s); i++)
        out[i] = 2 * in[i];
    CHECK(check_output(&g, out, tolerance_for(DTYPE_FP32, &s)).pass);
    out[g.index[g.count / 2]] += 1; /* a sampled output is wrong */
    CHECK(!check_output(&g, out, tolerance_for(DTYPE_FP32, &s)).pass);
    gold_free(&g);
    free(in), free(out);
}

/* An fp16 output read back as bf16 (or as fp16 in the wrong layout) must fail;
 * read back correctly it passes at fp16 tolerance. */
static void wrong_conversion_fails(void)
{
    struct fixture f;
    fixture_make(&f, layer);
    struct dims4 d = {f.s.n, f.s.cout, f.s.h, f.s.w};
    size_t count = output_count(&f.s);
    void *stored = malloc(tensor_bytes(d, DTYPE_FP16, LAYOUT_NHWC));
    float *back = malloc(count * sizeof(float));
    struct tolerance tol = tolerance_for(DTYPE_FP16, &f.s);
    tensor_from_nchw(f.out, d, DTYPE_FP16, LAYOUT_NHWC, stored);
    tensor_to_nchw(stored, d, DTYPE_FP16, LAYOUT_NHWC, back);
    CHECK(check_output(&f.g, back, tol).pass);
    CHECK(!check_output(&f.g, back, f.tol).pass); /* fp16 rounding is beyond fp32's tolerance */
    tensor_to_nchw(stored, d, DTYPE_BF16, LAYOUT_NHWC, back);
    CHECK(!check_output(&f.g, back, tol).pass);
    tensor_to_nchw(stored, d, DTYPE_FP16, LAYOUT_NCHW, back);
    CHECK(!check_output(&f.g, back, tol).pass);
    free(stored), free(back);
    fixture_free(&f);
}

/* The planned outputs read one by one from an fp16 NHWC tensor (tensor_value_at) give
 * the check of the whole converted output; a wrong one among them fails. */
static void planned_outputs_check_as_the_whole(void)
{
    struct fixture f;
    fixture_make(&f, layer);
    struct dims4 d = {f.s.n, f.s.cout, f.s.h, f.s.w};
    void *stored = malloc(tensor_bytes(d, DTYPE_FP16, LAYOUT_NHWC));
    float *back = malloc(output_count(&f.s) * sizeof(float));
    float *planned = malloc(f.g.count * sizeof(float));
    struct tolerance tol = tolerance_for(DTYPE_FP16, &f.s);
    tensor_from_nchw(f.out, d, DTYPE_FP16, LAYOUT_NHWC, stored);
    tensor_to_nchw(stored, d, DTYPE_FP16, LAYOUT_NHWC, back);
    for (size_t i = 0; i < f.g.count; i++)
        planned[i] = tensor_value_at(stored, d, DTYPE_FP16, LAYOUT_NHWC, gold_output(&f.g, i));
    struct check_result whole = check_output(&f.g, back, tol), some = check_planned(&f.g, planned, tol);
    CHECK(some.pass && some.checked == whole.checked && some.rel_l2 == whole.rel_l2);
    planned[f.g.count / 3] += 0.5f;
    some = check_planned(&f.g, planned, tol);
    CHECK(!some.pass && some.failures == 1 && some.first_failure == gold_output(&f.g, f.g.count / 3));
    free(stored), free(back), free(planned);
    fixture_free(&f);
}

static const struct unit_case cases[] = {
    {"honest_float32_passes", honest_float32_passes},
    {"perturbed_output_fails", perturbed_output_fails},
    {"one_missing_term_fails", one_missing_term_fails},
    {"nan_output_fails", nan_output_fails},
    {"half_written_output_fails", half_written_output_fails},
    {"shifted_window_fails", shifted_window_fails},
    {"tolerance_follows_the_arithmetic", tolerance_follows_the_arithmetic},
    {"xnor_scale_is_mean_abs", xnor_scale_is_mean_abs},
    {"binary_padding_must_be_zero", binary_padding_must_be_zero},
    {"sign_bits_check_can_fail", sign_bits_check_can_fail},
    {"sign_bits_near_zero_either_way", sign_bits_near_zero_either_way},
    {"sampled_check_reads_only_samples", sampled_check_reads_only_samples},
    {"wrong_conversion_fails", wrong_conversion_fails},
    {"planned_outputs_check_as_the_whole", planned_outputs_check_as_the_whole},
};

UNIT_MAIN(cases)
