/* A separable filter is an outer product: w[i][j] = column[i] * row[j]. This finds
 * the two factors of a filter and says how far the filter is from being separable;
 * the lesson's weight check and its prepare() both go through it. */
#ifndef SEPARABLE_FACTORS_H
#define SEPARABLE_FACTORS_H

#include "conv_problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest relative residual accepted as separable. Float taps built as an
 * outer product miss it by rounding, about 1e-7; the check's tolerance on a 3x3
 * filter is 1.4e-6 of each output's magnitude, which a larger residual would eat. */
#define SEPARABLE_MAX_RESIDUAL 1e-6

/* Fills column[ksize] (applied down the rows) and row[ksize] (along a row) from the
 * ksize x ksize taps, and returns ||w - column row^T||_F / ||w||_F for the float
 * factors returned (0 for an all-zero filter). */
double separable_factors(const float *taps, int ksize, float *column, float *row);

/* For lesson.check_weights: NULL when every filter of the weights is separable,
 * else one line saying which is not and what to use instead. */
const char *check_separable(const struct conv_shape *s, const float *weights);

#ifdef __cplusplus
}
#endif

#endif
