/* Lesson 10's problem (problem.h): shapes, layouts, the float64 references, and the
 * op the harness runs. */
#include "problem.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "escape.h"
#include "fileutil.h"
#include "npy.h"
#include "reference.h"
#include "rng.h"

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

/* The channel-diagonal blocks of a B x C x N x C x N tensor: row r = (b, c, p) of block
 * c is N contiguous floats in the full tensor, and row r of its B x C x N x N blocks. */
static size_t diagonal_row_at(size_t r, int channels, size_t n)
{
    return (r * channels + r / n % channels) * n;
}

static void gather_diagonal(int batch, int channels, size_t n, const float *full, float *blocks)
{
    const size_t rows = (size_t)batch * channels * n;
    for (size_t r = 0; r < rows; r++)
        memcpy(blocks + r * n, full + diagonal_row_at(r, channels, n), n * sizeof(float));
}

static void scatter_diagonal(int batch, int channels, size_t n, const float *blocks, float *full)
{
    const size_t rows = (size_t)batch * channels * n;
    for (size_t r = 0; r < rows; r++)
        memcpy(full + diagonal_row_at(r, channels, n), blocks + r * n, n * sizeof(float));
}

void cov_gather_gamma(const struct conv_shape *s, const float *gamma_full, float *gamma_diag)
{
    gather_diagonal(s->n, s->cin, cov_in_positions(s), gamma_full, gamma_diag);
}

void cov_scatter_gamma(const struct conv_shape *s, const float *gamma_diag, float *gamma_full)
{
    scatter_diagonal(s->n, s->cin, cov_in_positions(s), gamma_diag, gamma_full);
}

void cov_gather_out(const struct conv_shape *s, const float *out_full, float *out_blocks)
{
    gather_diagonal(s->n, s->cout, cov_out_positions(s), out_full, out_blocks);
}

void cov_scatter_out(const struct conv_shape *s, const float *out_blocks, float *out_full)
{
    scatter_diagonal(s->n, s->cout, cov_out_positions(s), out_blocks, out_full);
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

bool cov_pair_symmetric(float a, float b)
{
    return fabsf(a - b) <= 2 * FLT_EPSILON * fmaxf(fabsf(a), fabsf(b));
}

/* The first asymmetric pair p < p2 of one P x P block (h x w positions) into *a. */
static bool block_asymmetry(const float *block, size_t h, size_t w, struct cov_asymmetry *a)
{
    const size_t P = h * w;
    for (size_t p = 0; p < P; p++)
        for (size_t p2 = p + 1; p2 < P; p2++) {
            const float value = block[p * P + p2], mirror = block[p2 * P + p];
            if (cov_pair_symmetric(value, mirror))
                continue;
            a->found = true;
            a->i = p / w, a->j = p % w, a->i2 = p2 / w, a->j2 = p2 % w;
            a->value = value, a->mirror = mirror;
            return true;
        }
    return false;
}

struct cov_asymmetry cov_find_asymmetry(const struct conv_shape *s, const float *gamma_diag)
{
    struct cov_asymmetry a = {.rank = 6};
    for (int b = 0; b < s->n; b++)
        for (int ci = 0; ci < s->cin; ci++)
            if (block_asymmetry(gamma_diag + cov_gamma_diag_at(s, b, ci, 0, 0), (size_t)s->h,
                                (size_t)s->w, &a)) {
                a.b = (size_t)b, a.ci = (size_t)ci;
                return a;
            }
    return a;
}

/* Reads count floats at element `at` of the data that starts at byte `start`. */
static bool read_floats_at(FILE *f, long start, size_t at, size_t count, float *to)
{
    const double byte = (double)start + (double)at * sizeof(float);
    return byte <= (double)LONG_MAX && fseek(f, (long)byte, SEEK_SET) == 0 &&
           fread(to, sizeof(float), count, f) == count;
}

bool cov_gamma_file_asymmetry(const char *path, struct cov_asymmetry *a)
{
    *a = (struct cov_asymmetry){0};
    int rank = 0;
    size_t d[NPY_MAX_DIMS];
    char err[512];
    /* The strict reader's checks of everything but the values: then the data is exactly
     * as long as the shape says, and ends the file. */
    if (!npy_read_shape(path, &rank, d, err, sizeof err))
        return false;
    const bool seed = rank == 7;
    if (!(seed && d[4] == d[1] && d[5] == d[2] && d[6] == d[3]) &&
        !(rank == 6 && d[4] == d[2] && d[5] == d[3]))
        return false;
    a->rank = rank;
    const size_t B = d[0], C = d[1], h = d[2], w = d[3], P = h * w;
    size_t count = 1;
    for (int k = 0; k < rank; k++)
        count *= d[k]; /* npy_read_shape checked that it fits */
    if (count == 0)
        return true; /* no pair to compare */
    FILE *f = open_input_file(path, 0, err, sizeof err);
    if (!f)
        return false;
    long start = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        start = ftell(f) - (long)(count * sizeof(float));
    float *block = malloc(P * P * sizeof *block);
    bool ok = block && start >= 0;
    for (size_t b = 0; ok && !a->found && b < B; b++)
        for (size_t ci = 0; ok && !a->found && ci < C; ci++) {
            /* Row p of block (b, ci): P floats, at (b, ci, p, ci, 0) in the seed's layout,
             * the block whole at (b, ci, 0, 0) in the compact one. */
            if (seed)
                for (size_t p = 0; ok && p < P; p++)
                    ok = read_floats_at(f, start, (((b * C + ci) * P + p) * C + ci) * P, P,
                                        block + p * P);
            else
                ok = read_floats_at(f, start, (b * C + ci) * P * P, P * P, block);
            if (ok && block_asymmetry(block, h, w, a))
                a->b = b, a->ci = ci;
        }
    free(block);
    fclose(f);
    if (!ok)
        *a = (struct cov_asymmetry){0};
    return ok;
}

/* The run's gamma: why the symmetric variants cannot run on it, or "" when they can. */
#define WHY_SIZE (FILENAME_MAX + 512)
static char asymmetric_why[WHY_SIZE];

/* gamma's element (p, p') in the layout of a: "[0, 1, 2, 3, 1, 4, 5]". */
static void format_element(char *buf, size_t size, const struct cov_asymmetry *a, bool mirrored)
{
    const size_t i = mirrored ? a->i2 : a->i, j = mirrored ? a->j2 : a->j;
    const size_t i2 = mirrored ? a->i : a->i2, j2 = mirrored ? a->j : a->j2;
    if (a->rank == 7)
        snprintf(buf, size, "[%zu, %zu, %zu, %zu, %zu, %zu, %zu]", a->b, a->ci, i, j, a->ci, i2,
                 j2);
    else
        snprintf(buf, size, "[%zu, %zu, %zu, %zu, %zu, %zu]", a->b, a->ci, i, j, i2, j2);
}

/* The pair's values, as short as tells them apart. */
static void format_values(char *value, char *mirror, size_t size, const struct cov_asymmetry *a)
{
    for (int digits = 6; digits <= 9; digits += 3) {
        snprintf(value, size, "%.*g", digits, (double)a->value);
        snprintf(mirror, size, "%.*g", digits, (double)a->mirror);
        if (strcmp(value, mirror) != 0)
            return;
    }
}

void cov_note_gamma(const char *path, const struct cov_asymmetry *a)
{
    asymmetric_why[0] = '\0';
    if (!path || !a->found)
        return;
    char at[128], mirror_at[128], value[32], mirror[32], file[WHY_SIZE / 2];
    format_element(at, sizeof at, a, false);
    format_element(mirror_at, sizeof mirror_at, a, true);
    format_values(value, mirror, sizeof value, a);
    escape_text(file, sizeof file, path);
    /* The facts first, the path last: the harness's error line keeps the first 199
     * bytes of a reason. */
    snprintf(asymmetric_why, sizeof asymmetric_why,
             "needs a symmetric gamma: gamma%s = %s but gamma%s = %s in --gamma %s", at, value,
             mirror_at, mirror, file);
}

const char *cov_needs_symmetric_gamma(const struct conv_shape *s)
{
    (void)s;
    return asymmetric_why[0] ? asymmetric_why : NULL;
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

/* Every block's output at (b, q, q') against the sum S computed once. */
static void check_site(const struct conv_shape *s, int layout, const float *c, const float *before,
                       const float *after, int b, size_t q, size_t q2, double sum, double mag,
                       struct tolerance tol, struct check_accum *acc)
{
    const int blocks = layout == COV_FACTORED ? 1 : s->cout;
    for (int c0 = 0; c0 < blocks; c0++) {
        const double scale = layout == COV_FACTORED ? 1.0 : c[c0];
        const size_t at = out_at(s, layout, b, c0, q, q2);
        const double was = before[at];
        check_add(acc, at, after[at], was + scale * sum, fabs(was) + fabs(scale) * mag, tol);
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

struct check_result cov_op_check(const struct conv_shape *s, int layout, uint64_t seed,
                                 void *const *before, void *const *after)
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
    const double window = (double)s->cin * s->ksize * s->ksize;
    const struct tolerance tol = tolerance_for_terms(DTYPE_FP32, 2 * window + 2);
    const size_t Q = cov_out_positions(s);
    struct gold g;
    gold_plan(&g, (size_t)s->n, (int)Q, (int)Q, (double)s->n * Q * Q * window > GOLD_FULL_MAX_TERMS,
              seed);
    const long long count = (long long)g.count;
#pragma omp parallel for schedule(dynamic, 256)
    for (long long i = 0; i < count; i++) {
        const size_t at = gold_output(&g, (size_t)i);
        g.value[i] = cov_sum_at(s, before[COV_MU], gd, (int)(at / (Q * Q)), at / Q % Q, at % Q,
                                &g.magnitude[i]);
    }
    struct check_accum acc;
    check_begin(&acc);
    for (size_t i = 0; i < g.count; i++) {
        const size_t at = gold_output(&g, i);
        check_site(s, layout, before[COV_C], before[COV_OUT], after[COV_OUT], (int)(at / (Q * Q)),
                   at / Q % Q, at % Q, g.value[i], g.magnitude[i], tol, &acc);
    }
    gold_free(&g);
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
