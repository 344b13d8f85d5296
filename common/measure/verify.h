/* NaN-safe comparison of a result against the gold reference.
 *
 * An output passes when |out - ref| <= atol + rtol * magnitude, where magnitude is
 * |bias| + sum |w*x| (the size of the numbers that were added, which bounds the
 * rounding error even where the sum cancels to near zero). Written as !(a <= b),
 * so a NaN output always fails. rtol follows from the arithmetic: rounding of
 * the operands inside the kernel (TF32), accumulation of L = cin*ksize^2 terms,
 * whose error grows like sqrt(L) units in the last place, and rounding of the
 * output to its storage type (fp16, bf16). fp16 and bf16 operands are rounded
 * before the gold is computed, so their rounding is not part of the error. */
#ifndef VERIFY_H
#define VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conv_problem.h"
#include "reference.h"
#include "tensor_format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Memory filled with 0xFF bytes holds NaN in every float, half and bfloat16: an output
 * element nobody writes fails the check, and a kernel that reads an element it must
 * not gets a NaN. */
#define POISON_BYTE 0xFF

struct tolerance {
    double rtol; /* relative to each output's magnitude */
    double atol;
};

struct tolerance tolerance_for(enum dtype dtype, const struct conv_shape *s);
/* The same rule for any sum of `terms` products (an op's own accumulation length). */
struct tolerance tolerance_for_terms(enum dtype dtype, double terms);

struct check_result {
    size_t checked;
    size_t failures;
    size_t first_failure; /* flat output index of the first failing output */
    double rel_l2;        /* ||out - ref|| / ||ref|| over the checked outputs */
    double max_abs;       /* max |out - ref|, infinite when an output is NaN */
    size_t near_zero;     /* check_sign_bits: outputs whose sign the tolerance cannot tell */
    bool pass;
};

struct check_result check_output(const struct gold *g, const float *out, struct tolerance tol);
/* The same, from the checked outputs alone: planned[i] is output gold_output(g, i). A
 * sampled check of a large layer converts those few, not billions. */
struct check_result check_planned(const struct gold *g, const float *planned,
                                  struct tolerance tol);
/* The packed signs of a layer's output (OUTPUT_SIGN_BITS: NHWC, WORDS_PER_PIXEL(cout) words
 * per pixel, bit set = value >= 0). Each checked output's bit must be the sign of the gold,
 * except where |gold| <= atol + rtol * magnitude: the value as the kernel rounds it may
 * fall on either side of zero, so either bit passes there (counted in near_zero). Compared
 * as +1/-1, so max_abs is 0 or 2. The bits past cout of every pixel's last word must be
 * clear (each pixel with one set is a failure). */
struct check_result check_sign_bits(const struct gold *g, const uint32_t *words,
                                    const struct conv_shape *s, struct tolerance tol);

/* A check built one output at a time, for an op that computes its own gold. */
struct check_accum {
    struct check_result result;
    double diff2, ref2;
};

void check_begin(struct check_accum *c);
/* Output `at` (a flat index, for the first failure) against its reference. */
void check_add(struct check_accum *c, size_t at, double out, double ref, double magnitude,
               struct tolerance tol);
/* An element the op must leave as it was: a failure unless `kept`. */
void check_add_kept(struct check_accum *c, size_t at, bool kept);
struct check_result check_end(const struct check_accum *c);

#ifdef __cplusplus
}
#endif

#endif
