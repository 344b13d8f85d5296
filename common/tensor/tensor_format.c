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
    uint32_t u = float_to_bits(x);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    if (isnan(x))
        return sign | 0x7e00u;
    float a = fabsf(x);
    /* Below the smallest normal half (2^-14) the result is a multiple of 2^-24:
     * scale, round to nearest even with rintf, done. */
    if (a < 0x1.0p-14f)
        return sign | (uint16_t)rintf(a * 0x1.0p24f);
    int exp = (int)((u >> FLOAT_MANTISSA_BITS) & 0xffu) - FLOAT_EXP_BIAS + HALF_EXP_BIAS;
    uint32_t mantissa = u & 0x7fffffu;
    int drop = FLOAT_MANTISSA_BITS - HALF_MANTISSA_BITS;
    uint32_t kept = mantissa >> drop, rest = mantissa & ((1u << drop) - 1);
    uint32_t half = 1u << (drop - 1);
    uint32_t bits = ((uint32_t)exp << HALF_MANTISSA_BITS) | kept;
    if (rest > half || (rest == half && (kept & 1u)))
        bits++; /* a carry into the exponent is the right answer, up to infinity */
    if (exp >= HALF_MAX_EXP || bits >= (uint32_t)HALF_MAX_EXP << HALF_MANTISSA_BITS)
        return sign | 0x7c00u;
    return sign | (uint16_t)bits;
}

float half_bits_to_float(uint16_t h)
{
    float sign = (h & 0x8000u) ? -1.0f : 1.0f;
    int exp = (h >> HALF_MANTISSA_BITS) & HALF_MAX_EXP;
    int mantissa = h & ((1 << HALF_MANTISSA_BITS) - 1);
    if (exp == HALF_MAX_EXP)
        return mantissa ? NAN : sign * INFINITY;
    if (exp == 0)
        return sign * ldexpf((float)mantissa, -24);
    return sign * ldexpf((float)(mantissa | (1 << HALF_MANTISSA_BITS)), exp - 25);
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

/* Where element i of the NCHW order lives in a layout (bits: the index of its word),
 * and its channel. */
static size_t offset_of(struct dims4 d, enum layout l, size_t i, int *channel)
{
    size_t plane = (size_t)d.h * d.w;
    size_t x = i % d.w, y = i / d.w % d.h, c = i / plane % d.c, n = i / plane / d.c;
    *channel = (int)c;
    switch (l) {
    case LAYOUT_NHWC: return ((n * d.h + y) * d.w + x) * d.c + c;
    case LAYOUT_BITS:
        return ((n * d.h + y) * d.w + x) * (size_t)WORDS_PER_PIXEL(d.c) + c / BITS_PER_WORD;
    default: return i;
    }
}

static size_t element_count(struct dims4 d)
{
    return (size_t)d.n * d.c * d.h * d.w;
}

void tensor_from_nchw(const float *src, struct dims4 d, enum dtype t, enum layout l, void *dst)
{
    if (l == LAYOUT_BITS)
        memset(dst, 0, tensor_bytes(d, t, l)); /* padding bits of the last word stay 0 */
    for (size_t i = 0; i < element_count(d); i++) {
        int c;
        size_t at = offset_of(d, l, i, &c);
        float v = src[i];
        if (l == LAYOUT_BITS) {
            if (v >= 0.0f)
                ((uint32_t *)dst)[at] |= 1u << (c % BITS_PER_WORD);
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

float tensor_value_at(const void *src, struct dims4 d, enum dtype t, enum layout l, size_t i)
{
    int c;
    const size_t at = offset_of(d, l, i, &c);
    if (t == DTYPE_FP16)
        return half_bits_to_float(((const uint16_t *)src)[at]);
    if (t == DTYPE_BF16)
        return bf16_bits_to_float(((const uint16_t *)src)[at]);
    return ((const float *)src)[at];
}

void tensor_to_nchw(const void *src, struct dims4 d, enum dtype t, enum layout l, float *dst)
{
    for (size_t i = 0; i < element_count(d); i++)
        dst[i] = tensor_value_at(src, d, t, l, i);
}
