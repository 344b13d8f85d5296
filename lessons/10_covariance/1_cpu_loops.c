/* Variant cpu_loops: seed 001's op_slow in C, the same nine loops in the same order
 * on the same full 7-D tensors, one thread and with OpenMP. It is the seed's CPU
 * baseline, and the reference that the compact layout is tested against. */
#include "problem.h"

/* One output element, as op_slow's three innermost loops compute it: every term is
 * rounded into the output in float32, as PyTorch's `input[...] += ...` does. */
static void add_terms(const struct conv_shape *s, float *out_full, const float *gamma_full,
                      const float *mu, const float *c, int b, int c0, int i0, int j0, int i1,
                      int j1)
{
    const int wo = cov_out_w(s);
    const size_t q = (size_t)i0 * wo + j0, q2 = (size_t)i1 * wo + j1;
    float *out = &out_full[cov_out_full_at(s, b, c0, q, c0, q2)];
    for (int ci = 0; ci < s->cin; ci++)
        for (int ii = 0; ii < s->ksize; ii++)
            for (int ji = 0; ji < s->ksize; ji++) {
                const size_t p = (size_t)(i0 + ii) * s->w + (j0 + ji);
                const size_t p2 = (size_t)(i1 + ii) * s->w + (j1 + ji);
                *out += c[c0] * (mu[cov_mu_at(s, b, ci, p)] * mu[cov_mu_at(s, b, ci, p2)] +
                                 gamma_full[cov_gamma_full_at(s, b, ci, p, ci, p2)]);
            }
}

/* The seed's nine loops; with `parallel`, the outer three are shared out by OpenMP.
 * Each (b, c0, i0) owns its output rows: no two threads write one element, and every
 * element sums its terms in the same order either way. */
static void op_slow_loops(const struct conv_shape *s, float *out_full, const float *gamma_full,
                          const float *mu, const float *c, bool parallel)
{
    const int ho = cov_out_h(s), wo = cov_out_w(s);
#pragma omp parallel for collapse(3) schedule(static) if (parallel)
    for (int b = 0; b < s->n; b++)
        for (int c0 = 0; c0 < s->cout; c0++)
            for (int i0 = 0; i0 < ho; i0++)
                for (int j0 = 0; j0 < wo; j0++)
                    for (int i1 = 0; i1 < ho; i1++)
                        for (int j1 = 0; j1 < wo; j1++)
                            add_terms(s, out_full, gamma_full, mu, c, b, c0, i0, j0, i1, j1);
}

void cov_op_slow(const struct conv_shape *s, float *out_full, const float *gamma_full,
                 const float *mu, const float *c)
{
    op_slow_loops(s, out_full, gamma_full, mu, c, false);
}

void cov_op_slow_openmp(const struct conv_shape *s, float *out_full, const float *gamma_full,
                        const float *mu, const float *c)
{
    op_slow_loops(s, out_full, gamma_full, mu, c, true);
}
