/* How a variant stores its tensors: the element type (dtype) and the order of the
 * axes (layout). The harness draws every problem as float32 NCHW on the host and
 * converts it, once per buffer set and outside the timed region, into the format a
 * variant declares; kernels never see a format they did not ask for.
 *
 *   dtype   storage           arithmetic it stands for
 *   fp32    4-byte float      FP32 FMA
 *   tf32    4-byte float      TF32 tensor cores (10-bit mantissa products)
 *   3xtf32  4-byte float      three TF32 products per term: fp32 accuracy on tensor cores
 *   fp16    2-byte half       FP16 tensor cores, fp32 accumulation
 *   bf16    2-byte bfloat16   BF16 tensor cores, fp32 accumulation
 *   binary  1 bit (+1 / -1)   XNOR/AND + popcount; in the nchw and nhwc layouts each
 *                             value is stored as a float32 +1.0 or -1.0 (the input of
 *                             a kernel that packs it, or of a float kernel on signs)
 *
 *   layout  input, output     weights
 *   nchw    N x C x H x W     K x C x R x S
 *   nhwc    N x H x W x C     K x R x S x C
 *   bits    N x H x W x ceil(C/32) words of 32 channels, bit set = +1; K x R x S x words
 */
#ifndef TENSOR_FORMAT_H
#define TENSOR_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum dtype { DTYPE_FP32, DTYPE_TF32, DTYPE_3XTF32, DTYPE_FP16, DTYPE_BF16, DTYPE_BINARY };
enum layout { LAYOUT_NCHW, LAYOUT_NHWC, LAYOUT_BITS };
/* What a variant writes: the layer's values (output_dtype, output_layout), or only their
 * signs in the bits layout (bit set = value >= 0, bits past the last channel clear), as
 * a binary layer fused with the next layer's binarisation writes them. */
enum output_format { OUTPUT_VALUES, OUTPUT_SIGN_BITS };

#define DTYPE_COUNT 6
#define BITS_PER_WORD 32
/* 32-bit words that hold one pixel's C channels in the bits layout (kernels use it too). */
#define WORDS_PER_PIXEL(channels) (((channels) + BITS_PER_WORD - 1) / BITS_PER_WORD)

/* A 4-D tensor's extents in NCHW terms (weights: n = K output channels, c = C). */
struct dims4 {
    int n, c, h, w;
};

const char *dtype_name(enum dtype d);
const char *layout_name(enum layout l);
/* Parses the names above; false for anything else. */
bool dtype_from_name(const char *name, enum dtype *d);
bool layout_from_name(const char *name, enum layout *l);

/* Bits one element occupies in memory in the bits layout (binary: 1) or any other
 * layout (binary: 32, a float +1 or -1): 32, 16 or 1. */
int dtype_storage_bits(enum dtype d, enum layout l);
/* Bytes of a whole tensor in this format (bits: rows of whole 32-bit words). */
size_t tensor_bytes(struct dims4 d, enum dtype t, enum layout l);
/* The element type of a variant's output: fp16 and bf16 variants write their own
 * type (as the library does); every other variant writes float32. */
enum dtype output_dtype(enum dtype d);
/* The layout of a variant's output: its own, except that binary variants, whose
 * output is float32, write it NHWC. */
enum layout output_layout(enum layout l);
/* Bytes of a variant's output tensor (d in NCHW terms) in the format it writes. */
size_t output_tensor_bytes(struct dims4 d, enum dtype t, enum layout l, enum output_format o);
const char *output_format_name(enum output_format o);

/* The value the dtype stores for x: round to nearest even for fp16 and bf16, the
 * sign (+1 for x >= 0, -1 below) for binary, x itself otherwise. Inputs are passed
 * through this before the gold reference, so a check measures a kernel's arithmetic
 * and not the rounding of its operands. */
float dtype_round(enum dtype d, float x);
/* A float32's bits, and the float32 of bits: the value as memory holds it. */
uint32_t float_to_bits(float x);
float bits_to_float(uint32_t u);
uint16_t float_to_half_bits(float x);
float half_bits_to_float(uint16_t h);
uint16_t float_to_bf16_bits(float x);
float bf16_bits_to_float(uint16_t b);

/* float32 NCHW on the host -> the format, into dst of tensor_bytes() bytes. */
void tensor_from_nchw(const float *src, struct dims4 d, enum dtype t, enum layout l, void *dst);
/* The format -> float32 NCHW, for checking a variant's output. Binary is not an
 * output format (binary variants write float32). */
void tensor_to_nchw(const void *src, struct dims4 d, enum dtype t, enum layout l, float *dst);
/* Element i (its flat NCHW index) of that conversion alone, for a check that reads a
 * sample of a large tensor. */
float tensor_value_at(const void *src, struct dims4 d, enum dtype t, enum layout l, size_t i);

#ifdef __cplusplus
}
#endif

#endif
