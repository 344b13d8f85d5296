#include "verify.h"

#include <float.h>
#include <math.h>

/* Unit roundoff of the operands as the kernel multiplies them, of its accumulator,
 * and of the output's storage type. */
struct arithmetic {
    double operand_u;
    double accumulate_u;
    double output_u;
};

#define FP32_U 0x1.0p-24
#define TF32_U 0x1.0p-11 /* 10 stored mantissa bits */
#define FP16_U 0x1.0p-11
#define BF16_U 0x1.0p-8
/* 3xTF32 keeps big*big + big*small + small*big; the dropped small*small term and
 * the split leave about 21 bits per product. */
#define TF32X3_U 0x1.0p-21
/* binary: the sum of x * sign(w) is an exact integer; alpha * sum + bias in fp32 then
 * rounds at most twice (a multiply and an add, or once in an fma), each by at most
 * u of the magnitude |bias| + alpha * sum |x * sign(w)|. */
#define BINARY_EPILOGUE_U (2 * FP32_U)

static struct arithmetic arithmetic_of(enum dtype dtype)
{
    switch (dtype) {
    case DTYPE_TF32: return (struct arithmetic){TF32_U, FP32_U, 0.0};
    case DTYPE_3XTF32: return (struct arithmetic){TF32X3_U, FP32_U, 0.0};
    case DTYPE_FP16: return (struct arithmetic){0.0, FP32_U, FP16_U};
    case DTYPE_BF16: return (struct arithmetic){0.0, FP32_U, BF16_U};
    case DTYPE_BINARY: return (struct arithmetic){0.0, 0.0, BINARY_EPILOGUE_U};
    case DTYPE_FP32: break;
    }
    return (struct arithmetic){0.0, FP32_U, 0.0};
}

/* Rounding each operand costs up to 2u per product (two operands); accumulating L
 * terms in any order costs about sqrt(L) u of the magnitude for random errors;
 * rounding the result costs u of its size, which the magnitude bounds. Safety
 * factors 2 and 8 keep honest kernels passing while a single dropped term (about
 * 1/L of the magnitude) or a shifted window still fails for fp32. */
#define OPERAND_SAFETY 2.0
#define ACCUMULATE_SAFETY 8.0

struct tolerance tolerance_for(enum dtype dtype, const struct conv_shape *s)
{
    return tolerance_for_terms(dtype, (double)s->cin * s->ksize * s->ksize + (s->bias ? 1 : 0));
}

struct tolerance tolerance_for_terms(enum dtype dtype, double terms)
{
    struct arithmetic a = arithmetic_of(dtype);
    struct tolerance t;
    t.rtol = OPERAND_SAFETY * 2 * a.operand_u + ACCUMULATE_SAFETY * sqrt(terms) * a.accumulate_u +
             a.output_u;
    /* Denormal results may be flushed to zero by fast paths. */
    t.atol = FLT_MIN;
    return t;
}

void check_begin(struct check_accum *c)
{
    *c = (struct check_accum){0};
}

static void count_failure(struct check_result *r, size_t at)
{
    if (r->failures == 0)
        r->first_failure = at;
    r->failures++;
}

void check_add(struct check_accum *c, size_t at, double out, double ref, double magnitude,
               struct tolerance tol)
{
    struct check_result *r = &c->result;
    double err = fabs(out - ref);
    if (!(err <= tol.atol + tol.rtol * magnitude))
        count_failure(r, at);
    if (!(err <= r->max_abs))
        r->max_abs = isnan(err) ? INFINITY : err;
    c->diff2 += (out - ref) * (out - ref);
    c->ref2 += ref * ref;
    r->checked++;
}

void check_add_kept(struct check_accum *c, size_t at, bool kept)
{
    if (!kept)
        count_failure(&c->result, at);
    c->result.checked++;
}

struct check_result check_end(const struct check_accum *c)
{
    struct check_result r = c->result;
    r.rel_l2 = c->ref2 > 0 ? sqrt(c->diff2 / c->ref2) : sqrt(c->diff2);
    r.pass = r.failures == 0 && r.checked > 0;
    return r;
}

struct check_result check_sign_bits(const struct gold *g, const uint32_t *words,
                                    const struct conv_shape *s, struct tolerance tol)
{
    const struct tolerance exact = {0.0, 0.0};
    const size_t plane = (size_t)s->h * s->w, per_pixel = WORDS_PER_PIXEL(s->cout);
    struct check_accum c;
    size_t near_zero = 0;
    check_begin(&c);
    for (size_t i = 0; i < g->count; i++) {
        size_t at = g->index ? g->index[i] : i;
        size_t k = at / plane % s->cout, n = at / plane / s->cout;
        size_t pixel = n * plane + at % plane;
        uint32_t word = words[pixel * per_pixel + k / BITS_PER_WORD];
        double out = (word >> (k % BITS_PER_WORD) & 1u) ? 1.0 : -1.0;
        double ref = g->value[i] >= 0 ? 1.0 : -1.0;
        if (fabs(g->value[i]) <= tol.atol + tol.rtol * g->magnitude[i]) {
            near_zero++;
            ref = out;
        }
        check_add(&c, at, out, ref, 0.0, exact);
    }
    const int used = s->cout % BITS_PER_WORD;
    if (used) {
        const uint32_t padding = ~0u << used;
        for (size_t pixel = 0; pixel < (size_t)s->n * plane; pixel++) {
            size_t n = pixel / plane, last = (n * s->cout + s->cout - 1) * plane + pixel % plane;
            check_add_kept(&c, last, (words[pixel * per_pixel + per_pixel - 1] & padding) == 0);
        }
    }
    struct check_result r = check_end(&c);
    r.near_zero = near_zero;
    return r;
}

/* out holds every output (at its flat index), or with `planned` the checked ones alone,
 * in the plan's order. */
static struct check_result check_at(const struct gold *g, const float *out, bool planned,
                                    struct tolerance tol)
{
    struct check_accum c;
    check_begin(&c);
    for (size_t i = 0; i < g->count; i++) {
        const size_t at = gold_output(g, i);
        check_add(&c, at, out[planned ? i : at], g->value[i], g->magnitude[i], tol);
    }
    return check_end(&c);
}

struct check_result check_output(const struct gold *g, const float *out, struct tolerance tol)
{
    return check_at(g, out, false, tol);
}

struct check_result check_planned(const struct gold *g, const float *planned,
                                  struct tolerance tol)
{
    return check_at(g, planned, true, tol);
}
