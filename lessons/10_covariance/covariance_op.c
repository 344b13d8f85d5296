/* Lesson 10's op for the harness (covariance_op.h). */
#include "covariance_op.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "rng.h"

const char *const cov_layout_names[COV_LAYOUT_COUNT] = {"full", "blocks", "factored"};

int cov_op_tensors(const struct conv_shape *s, int layout, struct op_tensor *t)
{
    const bool full = layout == COV_FULL;
    t[COV_MU] = (struct op_tensor){"mu", cov_mu_count(s) * sizeof(float), false};
    t[COV_GAMMA] = (struct op_tensor){
        "gamma", (full ? cov_gamma_full_count(s) : cov_gamma_diag_count(s)) * sizeof(float),
        false};
    t[COV_C] = (struct op_tensor){"c", cov_c_count(s) * sizeof(float), false};
    t[COV_OUT] = (struct op_tensor){
        "out", cov_out_count(s, (enum cov_layout)layout) * sizeof(float), true};
    return COV_TENSOR_COUNT;
}

/* A symmetric gamma block: the upper triangle drawn, the lower one its mirror. */
static void draw_gamma_diag(const struct conv_shape *s, float *gd, struct rng *g)
{
    const size_t P = cov_in_positions(s);
    for (int b = 0; b < s->n; b++)
        for (int ci = 0; ci < s->cin; ci++)
            for (size_t p = 0; p < P; p++)
                fill_uniform(&gd[cov_gamma_diag_at(s, b, ci, p, p)], P - p, -1.0f, 1.0f, g);
    cov_symmetrize_gamma(s, gd);
}

void cov_op_draw(const struct conv_shape *s, int layout, uint64_t seed, void *const *tensor)
{
    struct rng g = rng_seeded(seed);
    fill_uniform(tensor[COV_MU], cov_mu_count(s), -1.0f, 1.0f, &g);
    fill_uniform(tensor[COV_C], cov_c_count(s), 0.0f, 1.0f, &g);
    if (layout != COV_FULL) {
        draw_gamma_diag(s, tensor[COV_GAMMA], &g);
        fill_uniform(tensor[COV_OUT], cov_out_count(s, (enum cov_layout)layout), -1.0f, 1.0f,
                     &g);
        return;
    }
    float *gd = host_alloc(cov_gamma_diag_count(s) * sizeof *gd, "the diagonal blocks of gamma");
    float *ob = host_alloc(cov_out_count(s, COV_BLOCKS) * sizeof *ob, "the output blocks");
    draw_gamma_diag(s, gd, &g);
    fill_uniform(ob, cov_out_count(s, COV_BLOCKS), -1.0f, 1.0f, &g);
    memset(tensor[COV_GAMMA], POISON_BYTE, cov_gamma_full_count(s) * sizeof(float));
    memset(tensor[COV_OUT], POISON_BYTE, cov_out_count(s, COV_FULL) * sizeof(float));
    cov_scatter_gamma(s, gd, tensor[COV_GAMMA]);
    cov_scatter_out(s, ob, tensor[COV_OUT]);
    free(gd);
    free(ob);
}

/* Where output (b, c0, q, q') lives in the layout; c0 is ignored by the factored one. */
static size_t out_at(const struct conv_shape *s, int layout, int b, int c0, size_t q, size_t q2)
{
    switch (layout) {
    case COV_FULL: return cov_out_full_at(s, b, c0, q, c0, q2);
    case COV_BLOCKS: return cov_out_blocks_at(s, b, c0, q, q2);
    default: return cov_out_factored_at(s, b, q, q2);
    }
}

/* Every output in row (b, q): S once per q', then each block's value. */
static void check_row(const struct conv_shape *s, int layout, const float *mu, const float *gd,
                      const float *c, const float *before, const float *after, int b, size_t q,
                      struct tolerance tol, struct check_accum *acc)
{
    const size_t Q = cov_out_positions(s);
    const int blocks = layout == COV_FACTORED ? 1 : s->cout;
    for (size_t q2 = 0; q2 < Q; q2++) {
        double mag;
        const double sum = cov_sum_at(s, mu, gd, b, q, q2, &mag);
        for (int c0 = 0; c0 < blocks; c0++) {
            const double scale = layout == COV_FACTORED ? 1.0 : c[c0];
            const size_t at = out_at(s, layout, b, c0, q, q2);
            const double was = before[at];
            check_add(acc, at, after[at], was + scale * sum, fabs(was) + fabs(scale) * mag, tol);
        }
    }
}

/* The full layout: every entry outside the diagonal blocks still NaN. */
static void check_off_diagonal(const struct conv_shape *s, const float *after,
                               struct check_accum *acc)
{
    const size_t Q = cov_out_positions(s);
    for (int b = 0; b < s->n; b++)
        for (int c0 = 0; c0 < s->cout; c0++)
            for (size_t q = 0; q < Q; q++)
                for (int c02 = 0; c02 < s->cout; c02++) {
                    if (c02 == c0)
                        continue;
                    const size_t at = cov_out_full_at(s, b, c0, q, c02, 0);
                    for (size_t q2 = 0; q2 < Q; q2++)
                        check_add_kept(acc, at + q2, isnan(after[at + q2]));
                }
}

struct check_result cov_op_check(const struct conv_shape *s, int layout, void *const *before,
                                 void *const *after)
{
    const float *gd = before[COV_GAMMA];
    float *gathered = NULL;
    if (layout == COV_FULL) {
        gathered = host_alloc(cov_gamma_diag_count(s) * sizeof *gathered,
                              "the diagonal blocks of gamma");
        cov_gather_gamma(s, before[COV_GAMMA], gathered);
        gd = gathered;
    }
    /* Each output sums 2*Ci*k^2 products and adds them, scaled, to its old value. */
    const double terms = 2.0 * s->cin * s->ksize * s->ksize;
    const struct tolerance tol = tolerance_for_terms(DTYPE_FP32, terms + 2);
    const size_t Q = cov_out_positions(s), rows = (size_t)s->n * Q;
    const double row_terms = (double)Q * s->cin * s->ksize * s->ksize;
    const size_t stride =
        rows * row_terms <= COV_CHECK_MAX_TERMS ? 1 : (size_t)ceil(rows * row_terms / COV_CHECK_MAX_TERMS);
    struct check_accum acc;
    check_begin(&acc);
    for (size_t row = 0; row < rows; row++)
        if (row % stride == 0 || row == rows - 1)
            check_row(s, layout, before[COV_MU], gd, before[COV_C], before[COV_OUT],
                      after[COV_OUT], (int)(row / Q), row % Q, tol, &acc);
    if (layout == COV_FULL)
        check_off_diagonal(s, after[COV_OUT], &acc);
    free(gathered);
    return check_end(&acc);
}

double cov_op_min_bytes(const struct conv_shape *s, int layout)
{
    return cov_min_bytes(s, (enum cov_layout)layout, false);
}

double cov_op_flops(const struct conv_shape *s, int layout)
{
    return cov_flops(s, (enum cov_layout)layout);
}
