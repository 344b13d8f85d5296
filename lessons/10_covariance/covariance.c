/* Lesson 10's shapes, layouts and float64 references (covariance.h). */
#include "covariance.h"

#include <math.h>
#include <stdint.h>

const struct conv_preset cov_presets[COV_PRESET_COUNT] = {
    {"cov-toy", "the seed's toy covariance: batch 2, 3 -> 3 channels, 9x9, 3x3 window",
     {.n = 2, .cin = 3, .cout = 3, .h = 9, .w = 9, .ksize = 3}},
    {"cov-b8c16s16", "covariance, batch 8, 16 -> 16 channels, 16x16, 3x3 (full layout 0.85 GB)",
     {.n = 8, .cin = 16, .cout = 16, .h = 16, .w = 16, .ksize = 3}},
    {"cov-b4c32s18", "covariance, batch 4, 32 -> 32 channels, 18x18, 3x3 (full layout 2.8 GB)",
     {.n = 4, .cin = 32, .cout = 32, .h = 18, .w = 18, .ksize = 3}},
};

size_t cov_mu_count(const struct conv_shape *s)
{
    return (size_t)s->n * s->cin * cov_in_positions(s);
}

size_t cov_c_count(const struct conv_shape *s)
{
    return (size_t)s->cout;
}

size_t cov_gamma_diag_count(const struct conv_shape *s)
{
    const size_t P = cov_in_positions(s);
    return (size_t)s->n * s->cin * P * P;
}

size_t cov_gamma_full_count(const struct conv_shape *s)
{
    return cov_gamma_diag_count(s) * s->cin;
}

size_t cov_out_count(const struct conv_shape *s, enum cov_layout l)
{
    const size_t Q = cov_out_positions(s);
    const size_t factored = (size_t)s->n * Q * Q;
    switch (l) {
    case COV_FULL:
        return factored * s->cout * s->cout;
    case COV_BLOCKS:
        return factored * s->cout;
    case COV_FACTORED:
        break;
    }
    return factored;
}

const char *cov_shape_problem(const struct conv_shape *s)
{
    if (s->n < 1 || s->cin < 1 || s->cout < 1 || s->h < 1 || s->w < 1 || s->ksize < 1)
        return "every size (batch, channels, image, window) must be at least 1";
    if (s->ksize > s->h || s->ksize > s->w)
        return "the window is larger than the image: a valid covariance has no output";
    /* The largest tensor, counted in doubles so the test itself cannot overflow. */
    const double P = (double)s->h * s->w;
    const double widest = s->cin > s->cout ? s->cin : s->cout;
    if ((double)s->n * widest * widest * P * P * sizeof(float) > (double)SIZE_MAX / 2)
        return "the full 7-D tensors would not fit in this machine's address space";
    return NULL;
}

double cov_min_bytes(const struct conv_shape *s, enum cov_layout l, bool symmetric_gamma)
{
    const double P = (double)cov_in_positions(s);
    const double Q = (double)cov_out_positions(s);
    const double blocks = (double)s->n * s->cin;
    const double gamma = symmetric_gamma ? blocks * P * (P + 1) / 2 : blocks * P * P;
    const double mu = blocks * P;
    const double out = l == COV_FACTORED ? (double)s->n * Q * Q : (double)s->n * s->cout * Q * Q;
    const double c = l == COV_FACTORED ? 0 : s->cout;
    return sizeof(float) * (gamma + mu + c + 2 * out);
}

double cov_flops(const struct conv_shape *s, enum cov_layout l)
{
    const double Q = (double)cov_out_positions(s);
    const double pairs = (double)s->n * Q * Q;
    const double sum = pairs * 3.0 * s->cin * s->ksize * s->ksize;
    return l == COV_FACTORED ? sum + pairs : sum + 2.0 * pairs * s->cout;
}

void cov_gather_gamma(const struct conv_shape *s, const float *gamma_full, float *gamma_diag)
{
    const size_t P = cov_in_positions(s);
    for (int b = 0; b < s->n; b++)
        for (int ci = 0; ci < s->cin; ci++)
            for (size_t p = 0; p < P; p++)
                for (size_t p2 = 0; p2 < P; p2++)
                    gamma_diag[cov_gamma_diag_at(s, b, ci, p, p2)] =
                        gamma_full[cov_gamma_full_at(s, b, ci, p, ci, p2)];
}

void cov_scatter_gamma(const struct conv_shape *s, const float *gamma_diag, float *gamma_full)
{
    const size_t P = cov_in_positions(s);
    for (int b = 0; b < s->n; b++)
        for (int ci = 0; ci < s->cin; ci++)
            for (size_t p = 0; p < P; p++)
                for (size_t p2 = 0; p2 < P; p2++)
                    gamma_full[cov_gamma_full_at(s, b, ci, p, ci, p2)] =
                        gamma_diag[cov_gamma_diag_at(s, b, ci, p, p2)];
}

void cov_gather_out(const struct conv_shape *s, const float *out_full, float *out_blocks)
{
    const size_t Q = cov_out_positions(s);
    for (int b = 0; b < s->n; b++)
        for (int c0 = 0; c0 < s->cout; c0++)
            for (size_t q = 0; q < Q; q++)
                for (size_t q2 = 0; q2 < Q; q2++)
                    out_blocks[cov_out_blocks_at(s, b, c0, q, q2)] =
                        out_full[cov_out_full_at(s, b, c0, q, c0, q2)];
}

void cov_scatter_out(const struct conv_shape *s, const float *out_blocks, float *out_full)
{
    const size_t Q = cov_out_positions(s);
    for (int b = 0; b < s->n; b++)
        for (int c0 = 0; c0 < s->cout; c0++)
            for (size_t q = 0; q < Q; q++)
                for (size_t q2 = 0; q2 < Q; q2++)
                    out_full[cov_out_full_at(s, b, c0, q, c0, q2)] =
                        out_blocks[cov_out_blocks_at(s, b, c0, q, q2)];
}

void cov_symmetrize_gamma(const struct conv_shape *s, float *gamma_diag)
{
    const size_t P = cov_in_positions(s);
    for (int b = 0; b < s->n; b++)
        for (int ci = 0; ci < s->cin; ci++)
            for (size_t p = 0; p < P; p++)
                for (size_t p2 = 0; p2 < p; p2++)
                    gamma_diag[cov_gamma_diag_at(s, b, ci, p, p2)] =
                        gamma_diag[cov_gamma_diag_at(s, b, ci, p2, p)];
}

double cov_sum_at(const struct conv_shape *s, const float *mu, const float *gamma_diag, int b,
                  size_t q, size_t q2, double *magnitude)
{
    const int wo = cov_out_w(s);
    const int i0 = (int)(q / wo), j0 = (int)(q % wo);
    const int i1 = (int)(q2 / wo), j1 = (int)(q2 % wo);
    double sum = 0, scale = 0;
    for (int ci = 0; ci < s->cin; ci++)
        for (int di = 0; di < s->ksize; di++)
            for (int dj = 0; dj < s->ksize; dj++) {
                const size_t p = (size_t)(i0 + di) * s->w + (j0 + dj);
                const size_t p2 = (size_t)(i1 + di) * s->w + (j1 + dj);
                const double m = (double)mu[cov_mu_at(s, b, ci, p)] * mu[cov_mu_at(s, b, ci, p2)];
                const double g = gamma_diag[cov_gamma_diag_at(s, b, ci, p, p2)];
                sum += m + g;
                scale += fabs(m) + fabs(g);
            }
    if (magnitude)
        *magnitude = scale;
    return sum;
}

double cov_gold_at(const struct conv_shape *s, const float *mu, const float *gamma_diag,
                   const float *c, const float *out_before, int b, int c0, size_t q, size_t q2,
                   double *magnitude)
{
    double scale;
    const double sum = cov_sum_at(s, mu, gamma_diag, b, q, q2, &scale);
    const double before = out_before[cov_out_blocks_at(s, b, c0, q, q2)];
    if (magnitude)
        *magnitude = fabs(before) + fabs((double)c[c0]) * scale;
    return before + (double)c[c0] * sum;
}

double cov_gold_factored_at(const struct conv_shape *s, const float *mu, const float *gamma_diag,
                            const float *s_before, int b, size_t q, size_t q2, double *magnitude)
{
    double scale;
    const double sum = cov_sum_at(s, mu, gamma_diag, b, q, q2, &scale);
    const double before = s_before[cov_out_factored_at(s, b, q, q2)];
    if (magnitude)
        *magnitude = fabs(before) + scale;
    return before + sum;
}
