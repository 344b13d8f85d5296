/* Rank-1 factorisation of a filter. If w = column row^T, every row of w is a
 * multiple of row^T: take the row of w with the largest norm as the row factor, and
 * the projection of each row of w on it as the column factor. For a filter that
 * is not separable the residual this leaves is large, and that is the test. */
#include "separable_factors.h"

#include <math.h>
#include <stdio.h>

double separable_factors(const float *taps, int ksize, float *column, float *row)
{
    int longest = 0;
    double longest_norm2 = -1.0, total_norm2 = 0.0;
    for (int i = 0; i < ksize; i++) {
        double norm2 = 0.0;
        for (int j = 0; j < ksize; j++)
            norm2 += (double)taps[i * ksize + j] * taps[i * ksize + j];
        total_norm2 += norm2;
        if (norm2 > longest_norm2) {
            longest_norm2 = norm2;
            longest = i;
        }
    }
    if (total_norm2 == 0.0) {
        for (int i = 0; i < ksize; i++)
            column[i] = row[i] = 0.0f;
        return 0.0;
    }
    /* [page: rank1-factors] */
    for (int j = 0; j < ksize; j++)
        row[j] = taps[longest * ksize + j];
    for (int i = 0; i < ksize; i++) {
        double dot = 0.0;
        for (int j = 0; j < ksize; j++)
            dot += (double)taps[i * ksize + j] * row[j];
        column[i] = (float)(dot / longest_norm2);
    }
    /* Measured with the float factors, as the kernels will use them. */
    double residual2 = 0.0;
    for (int i = 0; i < ksize; i++)
        for (int j = 0; j < ksize; j++) {
            double d = (double)taps[i * ksize + j] - (double)column[i] * row[j];
            residual2 += d * d;
        }
    return sqrt(residual2 / total_norm2);
    /* [/page: rank1-factors] */
}

const char *check_separable(const struct conv_shape *s, const float *weights)
{
    static char why[256];
    const size_t taps = (size_t)s->ksize * s->ksize;
    float column[MAX_KSIZE], row[MAX_KSIZE];
    for (int f = 0; f < s->cout * s->cin; f++) {
        double residual = separable_factors(weights + f * taps, s->ksize, column, row);
        if (!(residual <= SEPARABLE_MAX_RESIDUAL)) { /* NaN taps fail too */
            snprintf(why, sizeof why,
                     "the filter is not separable (rank > 1: residual %.1e after a rank-1 "
                     "fit); lesson 06 needs a separable filter such as gaussian, box or "
                     "sobel-x",
                     residual);
            return why;
        }
    }
    return NULL;
}
