/* Lesson 10's op for the harness (covariance_op.h). */
#include "covariance_op.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "rng.h"

const char *const cov_layout_names[COV_LAYOUT_COUNT] = {"full", "blocks", "factored"};

int cov_op_tensors(const struct conv_shape *s, int layout, struct op_tensor *t)
{
    const bool full = layout == COV_FULL;
    t[COV_MU] = (struct op_tensor){.name = "mu", .bytes = cov_mu_count(s) * sizeof(float)};
    t[COV_GAMMA] = (struct op_tensor){
        .name = "gamma",
        .bytes = (full ? cov_gamma_full_count(s) : cov_gamma_diag_count(s)) * sizeof(float)};
    t[COV_C] = (struct op_tensor){.name = "c", .bytes = cov_c_count(s) * sizeof(float)};
    t[COV_OUT] =
        (struct op_tensor){.name = "out",
                           .bytes = cov_out_count(s, (enum cov_layout)layout) * sizeof(float),
                           .written = true};
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

/* Room for the diagonal blocks of gamma and of the output. */
static float *alloc_gamma_diag(const struct conv_shape *s)
{
    return host_alloc(cov_gamma_diag_count(s) * sizeof(float), "the diagonal blocks of gamma");
}

static float *alloc_out_blocks(const struct conv_shape *s)
{
    return host_alloc(cov_out_count(s, COV_BLOCKS) * sizeof(float), "the output blocks");
}

/* The full layout from the diagonal blocks gd and ob: every other entry NaN. */
static void lay_out_full(const struct conv_shape *s, const float *gd, const float *ob,
                         void *const *tensor)
{
    memset(tensor[COV_GAMMA], POISON_BYTE, cov_gamma_full_count(s) * sizeof(float));
    memset(tensor[COV_OUT], POISON_BYTE, cov_out_count(s, COV_FULL) * sizeof(float));
    cov_scatter_gamma(s, gd, tensor[COV_GAMMA]);
    cov_scatter_out(s, ob, tensor[COV_OUT]);
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
    float *gd = alloc_gamma_diag(s), *ob = alloc_out_blocks(s);
    draw_gamma_diag(s, gd, &g);
    fill_uniform(ob, cov_out_count(s, COV_BLOCKS), -1.0f, 1.0f, &g);
    lay_out_full(s, gd, ob, tensor);
    free(gd);
    free(ob);
}

const char *const cov_dim_names[COV_DIM_COUNT] = {"B", "Ci", "Co", "H", "W", "Ho", "Wo"};

const struct op_file cov_op_files[COV_TENSOR_COUNT] = {
    [COV_MU] = {"mu",
                "the mean of the layer's input",
                4,
                {COV_DIM_B, COV_DIM_CI, COV_DIM_H, COV_DIM_W}},
    [COV_GAMMA] = {"gamma",
                   "its covariance (blocks ci = ci' read)",
                   7,
                   {COV_DIM_B, COV_DIM_CI, COV_DIM_H, COV_DIM_W, COV_DIM_CI, COV_DIM_H, COV_DIM_W}},
    [COV_C] = {"c", "a factor per output channel", 1, {COV_DIM_CO}},
    [COV_OUT] = {"input",
                 "the seed's input, added to (Ho = H-k+1)",
                 7,
                 {COV_DIM_B, COV_DIM_CO, COV_DIM_HO, COV_DIM_WO, COV_DIM_CO, COV_DIM_HO,
                  COV_DIM_WO}},
};

/* --mu and --c as in the seed's layout. */
const struct op_file cov_op_compact_files[COV_TENSOR_COUNT] = {
    [COV_MU] = {"mu",
                "the mean of the layer's input",
                4,
                {COV_DIM_B, COV_DIM_CI, COV_DIM_H, COV_DIM_W}},
    [COV_GAMMA] = {"gamma",
                   "its diagonal blocks gamma[b, ci, :, :, ci, :, :]",
                   6,
                   {COV_DIM_B, COV_DIM_CI, COV_DIM_H, COV_DIM_W, COV_DIM_H, COV_DIM_W}},
    [COV_C] = {"c", "a factor per output channel", 1, {COV_DIM_CO}},
    [COV_OUT] = {"input",
                 "S, added to: the seed's input is c (x) S",
                 5,
                 {COV_DIM_B, COV_DIM_HO, COV_DIM_WO, COV_DIM_HO, COV_DIM_WO}},
};

bool cov_op_shape_of_files(const size_t *dim, struct conv_shape *s, int *culprit, char *why,
                           size_t why_size)
{
    const size_t h = dim[COV_DIM_H], w = dim[COV_DIM_W];
    const size_t ho = dim[COV_DIM_HO], wo = dim[COV_DIM_WO];
    *culprit = COV_OUT; /* Ho and Wo come from --input alone */
    const size_t k = ho <= h ? h - ho + 1 : 0;
    if (k < 1 || k > MAX_KSIZE || k % 2 == 0 || wo > w || w - wo + 1 != k) {
        snprintf(why, why_size,
                 "Ho x Wo = %zux%zu is not (H-k+1) x (W-k+1) for H x W = %zux%zu (--mu) and "
                 "one window k, odd in 1..%d as --ksize",
                 ho, wo, h, w, MAX_KSIZE);
        return false;
    }
    *s = (struct conv_shape){.n = (int)dim[COV_DIM_B], .cin = (int)dim[COV_DIM_CI],
                             .cout = (int)dim[COV_DIM_CO], .h = (int)h, .w = (int)w,
                             .ksize = (int)k};
    return true;
}

void cov_op_from_files(const struct conv_shape *s, int layout, void *const *file,
                       void *const *tensor)
{
    memcpy(tensor[COV_MU], file[COV_MU], cov_mu_count(s) * sizeof(float));
    memcpy(tensor[COV_C], file[COV_C], cov_c_count(s) * sizeof(float));
    switch (layout) {
    case COV_FULL: {
        float *gd = alloc_gamma_diag(s), *ob = alloc_out_blocks(s);
        cov_gather_gamma(s, file[COV_GAMMA], gd);
        cov_gather_out(s, file[COV_OUT], ob);
        lay_out_full(s, gd, ob, tensor);
        free(gd);
        free(ob);
        return;
    }
    case COV_BLOCKS:
        cov_gather_gamma(s, file[COV_GAMMA], tensor[COV_GAMMA]);
        cov_gather_out(s, file[COV_OUT], tensor[COV_OUT]);
        return;
    default: /* S from zero; cov_op_to_files adds c (x) S to the file's input */
        cov_gather_gamma(s, file[COV_GAMMA], tensor[COV_GAMMA]);
        memset(tensor[COV_OUT], 0, cov_out_count(s, COV_FACTORED) * sizeof(float));
    }
}

void cov_op_to_files(const struct conv_shape *s, int layout, void *const *file,
                     void *const *after)
{
    float *out = file[COV_OUT];
    switch (layout) {
    case COV_FULL: {
        float *ob = alloc_out_blocks(s);
        cov_gather_out(s, after[COV_OUT], ob);
        cov_scatter_out(s, ob, out);
        free(ob);
        return;
    }
    case COV_BLOCKS:
        cov_scatter_out(s, after[COV_OUT], out);
        return;
    default: {
        const float *sum = after[COV_OUT], *c = file[COV_C];
        const size_t Q = cov_out_positions(s);
        for (int b = 0; b < s->n; b++)
            for (int c0 = 0; c0 < s->cout; c0++)
                for (size_t q = 0; q < Q; q++)
                    for (size_t q2 = 0; q2 < Q; q2++)
                        out[cov_out_full_at(s, b, c0, q, c0, q2)] +=
                            c[c0] * sum[cov_out_factored_at(s, b, q, q2)];
    }
    }
}

/* ob[b][c0] = c[c0] * s[b]: the blocks the factored layout's s stands for. */
static void scale_blocks(const struct conv_shape *s, const float *c, const float *sum, float *ob)
{
    const size_t Q = cov_out_positions(s);
    for (int b = 0; b < s->n; b++)
        for (int c0 = 0; c0 < s->cout; c0++)
            for (size_t q = 0; q < Q; q++)
                for (size_t q2 = 0; q2 < Q; q2++)
                    ob[cov_out_blocks_at(s, b, c0, q, q2)] =
                        c[c0] * sum[cov_out_factored_at(s, b, q, q2)];
}

void cov_op_from_compact_files(const struct conv_shape *s, int layout, void *const *file,
                               void *const *tensor)
{
    memcpy(tensor[COV_MU], file[COV_MU], cov_mu_count(s) * sizeof(float));
    memcpy(tensor[COV_C], file[COV_C], cov_c_count(s) * sizeof(float));
    if (layout == COV_FACTORED) {
        memcpy(tensor[COV_GAMMA], file[COV_GAMMA], cov_gamma_diag_count(s) * sizeof(float));
        memcpy(tensor[COV_OUT], file[COV_OUT], cov_out_count(s, COV_FACTORED) * sizeof(float));
        return;
    }
    if (layout == COV_BLOCKS) {
        memcpy(tensor[COV_GAMMA], file[COV_GAMMA], cov_gamma_diag_count(s) * sizeof(float));
        scale_blocks(s, file[COV_C], file[COV_OUT], tensor[COV_OUT]);
        return;
    }
    float *ob = alloc_out_blocks(s);
    scale_blocks(s, file[COV_C], file[COV_OUT], ob);
    lay_out_full(s, file[COV_GAMMA], ob, tensor);
    free(ob);
}

void cov_op_to_compact_files(const struct conv_shape *s, int layout, void *const *file,
                             void *const *after)
{
    (void)layout; /* COV_FACTORED: cov_op_writes_compact */
    memcpy(file[COV_OUT], after[COV_OUT], cov_out_count(s, COV_FACTORED) * sizeof(float));
}

bool cov_op_writes_compact(int layout)
{
    return layout == COV_FACTORED;
}

const struct op_file_set cov_file_sets[COV_FILE_SET_COUNT] = {
    [COV_FILES_SEED] = {.name = "the seed's layout",
                        .files = cov_op_files,
                        .file_count = COV_TENSOR_COUNT,
                        .layout = COV_FULL,
                        .shape_of_files = cov_op_shape_of_files,
                        .from_files = cov_op_from_files,
                        .to_files = cov_op_to_files},
    [COV_FILES_COMPACT] =
        {.name = "the compact layout",
         .files = cov_op_compact_files,
         .file_count = COV_TENSOR_COUNT,
         .layout = COV_FACTORED,
         .shape_of_files = cov_op_shape_of_files,
         .from_files = cov_op_from_compact_files,
         .to_files = cov_op_to_compact_files,
         .writes = cov_op_writes_compact,
         .writes_why = "--input after the run is S alone, which layouts full and blocks hold only "
                       "multiplied by c[c0]"},
};

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
