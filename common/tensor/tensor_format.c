#include "tensor_format.h"

#include <math.h>
#include <string.h>

static const char *const dtype_names[DTYPE_COUNT] = {"fp32", "tf32", "3xtf32",
                                                     "fp16", "bf16", "binary"};
static const char *const layout_names[] = {"nchw", "nhwc", "bits"};
#define LAYOUT_COUNT ((int)(sizeof layout_names / sizeof layout_names[0]))

const char *dtype_name(enum dtype d)
{
    return (int)d >= 0 && (int)d < DTYPE_COUNT ? dtype_names[d] : "?";
}

const char *layout_name(enum layout l)
{
    return (int)l >= 0 && (int)l < LAYOUT_COUNT ? layout_names[l] : "?";
}

bool dtype_from_name(const char *name, enum dtype *d)
{
    for (int i = 0; i < DTYPE_COUNT; i++)
        if (strcmp(name, dtype_names[i]) == 0) {
            *d = (enum dtype)i;
            return true;
        }
    return false;
}

bool layout_from_name(const char *name, enum layout *l)
{
    for (int i = 0; i < LAYOUT_COUNT; i++)
        if (strcmp(name, layout_names[i]) == 0) {
            *l = (enum layout)i;
            return true;
        }
    return false;
}

int dtype_storage_bits(enum dtype d, enum layout l)
{
    switch (d) {
    case DTYPE_FP16:
    case DTYPE_BF16: return 16;
    case DTYPE_BINARY: return l == LAYOUT_BITS ? 1 : 32;
    default: return 32;
    }
}

size_t tensor_bytes(struct dims4 d, enum dtype t, enum layout l)
{
    size_t pixels = (size_t)d.n * d.h * d.w;
    if (l == LAYOUT_BITS)
        return pixels * (size_t)WORDS_PER_PIXEL(d.c) * sizeof(uint32_t);
    return pixels * d.c * (size_t)(dtype_storage_bits(t, l) / 8);
}

enum dtype output_dtype(enum dtype d)
{
    return d == DTYPE_FP16 || d == DTYPE_BF16 ? d : DTYPE_FP32;
}

enum layout output_layout(enum layout l)
{
    return l == LAYOUT_BITS ? LAYOUT_NHWC : l;
}

size_t output_tensor_bytes(struct dims4 d, enum dtype t, enum layout l, enum output_format o)
{
    if (o == OUTPUT_SIGN_BITS)
        return tensor_bytes(d, DTYPE_BINARY, LAYOUT_BITS);
    return tensor_bytes(d, output_dtype(t), output_layout(l));
}

const char *output_format_name(enum output_format o)
{
    return o == OUTPUT_SIGN_BITS ? "sign_bits" : "values";
}

uint32_t float_to_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

float bits_to_float(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* IEEE binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits. */
#define HALF_MANTISSA_BITS 10
#define HALF_EXP_BIAS 15
#define HALF_MAX_EXP 31
#define FLOAT_MANTISSA_BITS 23
#define FLOAT_EXP_BIAS 127

uint16_t float_to_half_bits(float x)
{
    const uint32_t u = float_to_bits(x);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    const uint32_t a = u & 0x7fffffffu;
    if (a > float_to_bits(INFINITY)) /* NaN */
        return sign | 0x7e00u;
    /* Below the smallest normal half (2^-14) the result is a multiple of 2^-24:
     * scale, round to nearest even with rintf, done. */
    if (a < float_to_bits(0x1.0p-14f))
        return sign | (uint16_t)rintf(bits_to_float(a) * 0x1.0p24f);
    /* Rebias the exponent, then round the dropped bits to nearest even by adding, not by
     * branching (random data would mispredict every other branch): a carry into the
     * exponent is the right answer, up to infinity. */
    const int drop = FLOAT_MANTISSA_BITS - HALF_MANTISSA_BITS;
    uint32_t bits = a - ((uint32_t)(FLOAT_EXP_BIAS - HALF_EXP_BIAS) << FLOAT_MANTISSA_BITS);
    bits = (bits + (1u << (drop - 1)) - 1u + ((bits >> drop) & 1u)) >> drop;
    const uint32_t infinity = (uint32_t)HALF_MAX_EXP << HALF_MANTISSA_BITS;
    return sign | (uint16_t)(bits < infinity ? bits : infinity);
}

/* By the bits (a large layer converts billions of values): the sign moves up, a normal
 * half's exponent is rebased and its mantissa widened; a subnormal, mantissa x 2^-24,
 * is exact in float. */
float half_bits_to_float(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exp = (h >> HALF_MANTISSA_BITS) & HALF_MAX_EXP;
    const uint32_t mantissa = h & ((1u << HALF_MANTISSA_BITS) - 1);
    if (exp == HALF_MAX_EXP)
        return mantissa ? NAN : bits_to_float(sign | float_to_bits(INFINITY));
    if (exp == 0)
        return bits_to_float(sign | float_to_bits((float)mantissa * 0x1.0p-24f));
    return bits_to_float(sign | (exp - HALF_EXP_BIAS + FLOAT_EXP_BIAS) << FLOAT_MANTISSA_BITS |
                         mantissa << (FLOAT_MANTISSA_BITS - HALF_MANTISSA_BITS));
}

/* bfloat16 is the top half of a float32: round the dropped 16 bits to nearest even. */
uint16_t float_to_bf16_bits(float x)
{
    uint32_t u = float_to_bits(x);
    if (isnan(x))
        return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float bf16_bits_to_float(uint16_t b)
{
    return bits_to_float((uint32_t)b << 16);
}

float dtype_round(enum dtype d, float x)
{
    switch (d) {
    case DTYPE_FP16: return half_bits_to_float(float_to_half_bits(x));
    case DTYPE_BF16: return bf16_bits_to_float(float_to_bf16_bits(x));
    case DTYPE_BINARY: return x >= 0.0f ? 1.0f : -1.0f;
    default: return x;
    }
}

/* Where element (n, c, y, x) lives in a layout (bits: the index of its word). */
static size_t place(struct dims4 d, enum layout l, size_t n, size_t c, size_t y, size_t x)
{
    switch (l) {
    case LAYOUT_NHWC: return ((n * d.h + y) * d.w + x) * d.c + c;
    case LAYOUT_BITS:
        return ((n * d.h + y) * d.w + x) * (size_t)WORDS_PER_PIXEL(d.c) + c / BITS_PER_WORD;
    default: return ((n * d.c + c) * d.h + y) * d.w + x;
    }
}

/* Where element i of the NCHW order lives. */
static size_t offset_of(struct dims4 d, enum layout l, size_t i)
{
    size_t plane = (size_t)d.h * d.w;
    size_t x = i % d.w, y = i / d.w % d.h, c = i / plane % d.c, n = i / plane / d.c;
    return place(d, l, n, c, y, x);
}

/* Row r of the NCHW order (image n, channel c, line y): where its first element lives in
 * a layout, how far apart its elements lie, and its channel. A large layer has billions
 * of elements: one division per row, none per element. */
struct row_place {
    size_t first, step;
    int channel;
};

static struct row_place row_place(struct dims4 d, enum layout l, size_t r)
{
    const size_t y = r % d.h, c = r / d.h % d.c, n = r / d.h / d.c;
    const size_t first = place(d, l, n, c, y, 0);
    return (struct row_place){first, place(d, l, n, c, y, 1) - first, (int)c};
}

/* The i-th row to convert: every channel of line 0 of image 0, then of line 1, ...: in
 * NHWC the C rows of one line fill one stretch of memory together, which stays in the
 * cache while they do (in NCHW order a whole plane would pass between two channels of
 * the same pixel). */
static size_t row_in_line_order(struct dims4 d, size_t i)
{
    const size_t c = i % d.c, line = i / d.c; /* line = n * H + y */
    return (line / d.h * d.c + c) * d.h + line % d.h;
}

static size_t row_count(struct dims4 d)
{
    return (size_t)d.n * d.c * d.h;
}

void tensor_from_nchw(const float *src, struct dims4 d, enum dtype t, enum layout l, void *dst)
{
    if (l == LAYOUT_BITS)
        memset(dst, 0, tensor_bytes(d, t, l)); /* padding bits of the last word stay 0 */
    for (size_t i = 0; i < row_count(d); i++) {
        const size_t r = row_in_line_order(d, i);
        const struct row_place p = row_place(d, l, r);
        const float *row = src + r * d.w;
        for (size_t x = 0; x < (size_t)d.w; x++) {
            const size_t at = p.first + x * p.step;
            const float v = row[x];
            if (l == LAYOUT_BITS) {
                if (v >= 0.0f)
                    ((uint32_t *)dst)[at] |= 1u << (p.channel % BITS_PER_WORD);
            } else if (t == DTYPE_FP16) {
                ((uint16_t *)dst)[at] = float_to_half_bits(v);
            } else if (t == DTYPE_BF16) {
                ((uint16_t *)dst)[at] = float_to_bf16_bits(v);
            } else if (t == DTYPE_BINARY) {
                ((float *)dst)[at] = dtype_round(DTYPE_BINARY, v);
            } else {
                ((float *)dst)[at] = v;
            }
        }
    }
}

/* The value stored at offset `at` of a tensor of type t. */
static float value_at(const void *src, enum dtype t, size_t at)
{
    if (t == DTYPE_FP16)
        return half_bits_to_float(((const uint16_t *)src)[at]);
    if (t == DTYPE_BF16)
        return bf16_bits_to_float(((const uint16_t *)src)[at]);
    return ((const float *)src)[at];
}

float tensor_value_at(const void *src, struct dims4 d, enum dtype t, enum layout l, size_t i)
{
    return value_at(src, t, offset_of(d, l, i));
}

void tensor_to_nchw(const void *src, struct dims4 d, enum dtype t, enum layout l, float *dst)
{
    for (size_t i = 0; i < row_count(d); i++) {
        const size_t r = row_in_line_order(d, i);
        const struct row_place p = row_place(d, l, r);
        for (size_t x = 0; x < (size_t)d.w; x++)
            dst[r * d.w + x] = value_at(src, t, p.first + x * p.step);
    }
}
