/* Lesson 10 on the host, no GPU needed: the compact (channel-diagonal) path equals
 * seed 001's op_slow on the full 7-D tensors, entries outside the diagonal blocks are
 * never read or written, the box-filter order of the GPU kernels (box_tile.cuh)
 * computes the same sums, and shapes without an output are refused. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "covariance_op.h"
#include "rng.h"
#include "unit.h"

/* A NaN with a payload no arithmetic produces: an off-diagonal entry that still holds
 * it, bit for bit, was neither read into a result nor written. */
static const uint32_t POISON_BITS = 0x7fc0dead;

static float poison(void)
{
    float f;
    memcpy(&f, &POISON_BITS, sizeof f);
    return f;
}

static bool is_poison(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits == POISON_BITS;
}

static void *alloc_or_exit(size_t bytes)
{
    return host_alloc(bytes, "a lesson 10 test tensor");
}

static void *zeroed_or_exit(size_t count, size_t size)
{
    void *p = alloc_or_exit(count * size);
    memset(p, 0, count * size);
    return p;
}

static float *filled(size_t count, struct rng *r, double lo, double hi)
{
    float *x = alloc_or_exit(count * sizeof *x);
    for (size_t i = 0; i < count; i++)
        x[i] = (float)(lo + (hi - lo) * rng_uniform(r));
    return x;
}

/* The seed's tensors: full gamma and out, random on the diagonal blocks (uniform in
 * [0, 1) as torch.rand draws them) and poison everywhere else. */
struct full_problem {
    struct conv_shape s;
    float *mu, *c, *gamma_full, *out_full;
};

static struct full_problem make_full(struct conv_shape s, bool seed_c, uint64_t seed)
{
    struct rng r = rng_seeded(seed);
    struct full_problem f = {.s = s};
    const size_t gfull = cov_gamma_full_count(&s), ofull = cov_out_count(&s, COV_FULL);
    f.mu = filled(cov_mu_count(&s), &r, 0, 1);
    f.c = filled(cov_c_count(&s), &r, -2, 2);
    if (seed_c) /* the seed's c = torch.tensor(1.) repeated */
        for (int c0 = 0; c0 < s.cout; c0++)
            f.c[c0] = 1;
    f.gamma_full = alloc_or_exit(gfull * sizeof(float));
    f.out_full = alloc_or_exit(ofull * sizeof(float));
    for (size_t i = 0; i < gfull; i++)
        f.gamma_full[i] = poison();
    for (size_t i = 0; i < ofull; i++)
        f.out_full[i] = poison();
    float *gd = filled(cov_gamma_diag_count(&s), &r, 0, 1);
    float *ob = filled(cov_out_count(&s, COV_BLOCKS), &r, 0, 1);
    cov_scatter_gamma(&s, gd, f.gamma_full);
    cov_scatter_out(&s, ob, f.out_full);
    free(gd);
    free(ob);
    return f;
}

static void free_full(struct full_problem *f)
{
    free(f->mu);
    free(f->c);
    free(f->gamma_full);
    free(f->out_full);
}

/* A rigorous bound for op_slow's float32 order: each of the L = Ci*k^2 terms is
 * rounded 3 times before it is rounded into the running output. */
static double slow_tolerance(const struct conv_shape *s, double magnitude)
{
    const double terms = (double)s->cin * s->ksize * s->ksize;
    return 1.01 * (terms + 4) * ldexp(1.0, -24) * magnitude;
}

/* Counts the elements where `got` (full layout) differs from the compact path's
 * float64 result beyond the bound, and the off-diagonal entries that lost their poison. */
static size_t compact_path_mismatches(const struct full_problem *f, const float *got,
                                      size_t *poison_lost)
{
    const struct conv_shape *s = &f->s;
    const size_t Q = cov_out_positions(s);
    float *gd = alloc_or_exit(cov_gamma_diag_count(s) * sizeof(float));
    float *before = alloc_or_exit(cov_out_count(s, COV_BLOCKS) * sizeof(float));
    float *after = alloc_or_exit(cov_out_count(s, COV_BLOCKS) * sizeof(float));
    cov_gather_gamma(s, f->gamma_full, gd);
    cov_gather_out(s, f->out_full, before);
    size_t bad = 0;
    for (int b = 0; b < s->n; b++)
        for (int c0 = 0; c0 < s->cout; c0++)
            for (size_t q = 0; q < Q; q++)
                for (size_t q2 = 0; q2 < Q; q2++) {
                    double mag;
                    const double ref = cov_gold_at(s, f->mu, gd, f->c, before, b, c0, q, q2, &mag);
                    const float out = got[cov_out_full_at(s, b, c0, q, c0, q2)];
                    bad += !(fabs(out - ref) <= slow_tolerance(s, mag));
                    after[cov_out_blocks_at(s, b, c0, q, q2)] = (float)ref;
                }
    /* Scatter the compact result into the poisoned full tensor: only the diagonal
     * blocks may change. */
    float *scattered = alloc_or_exit(cov_out_count(s, COV_FULL) * sizeof(float));
    memcpy(scattered, f->out_full, cov_out_count(s, COV_FULL) * sizeof(float));
    cov_scatter_out(s, after, scattered);
    *poison_lost = 0;
    for (size_t i = 0; i < cov_out_count(s, COV_FULL); i++) {
        *poison_lost += is_poison(f->out_full[i]) && !(is_poison(got[i]) && is_poison(scattered[i]));
    }
    free(gd);
    free(before);
    free(after);
    free(scattered);
    return bad;
}

static void check_against_op_slow(struct conv_shape s, bool seed_c, uint64_t seed)
{
    CHECK(cov_shape_problem(&s) == NULL);
    struct full_problem f = make_full(s, seed_c, seed);
    const size_t ofull = cov_out_count(&s, COV_FULL);
    float *slow = alloc_or_exit(ofull * sizeof(float));
    memcpy(slow, f.out_full, ofull * sizeof(float));
    cov_op_slow(&s, slow, f.gamma_full, f.mu, f.c);
    size_t poison_lost;
    const size_t bad = compact_path_mismatches(&f, slow, &poison_lost);
    if (bad || poison_lost)
        fprintf(stderr, "B=%d Ci=%d Co=%d %dx%d k=%d: %zu outputs off, %zu poisoned entries touched\n",
                s.n, s.cin, s.cout, s.h, s.w, s.ksize, bad, poison_lost);
    CHECK(bad == 0);
    CHECK(poison_lost == 0);

    float *omp = alloc_or_exit(ofull * sizeof(float));
    memcpy(omp, f.out_full, ofull * sizeof(float));
    cov_op_slow_openmp(&s, omp, f.gamma_full, f.mu, f.c);
    CHECK(memcmp(omp, slow, ofull * sizeof(float)) == 0);
    free(slow);
    free(omp);
    free_full(&f);
}

/* The seed's toy: input 2x3x7x7x3x7x7, gamma 2x3x9x9x3x9x9, mu 2x3x9x9, c = 1, 3x3. */
static void seed_toy_matches_op_slow(void)
{
    const struct conv_shape s = {.n = 2, .cin = 3, .cout = 3, .h = 9, .w = 9, .ksize = 3};
    CHECK(cov_out_count(&s, COV_FULL) == 2 * 3 * 7 * 7 * 3 * 7 * 7);
    CHECK(cov_gamma_full_count(&s) == 2 * 3 * 9 * 9 * 3 * 9 * 9);
    CHECK(cov_mu_count(&s) == 2 * 3 * 9 * 9);
    check_against_op_slow(s, true, 1);
    check_against_op_slow(s, false, 2);
}

static void awkward_shapes_match_op_slow(void)
{
    const struct conv_shape shapes[] = {
        {.n = 1, .cin = 1, .cout = 1, .h = 5, .w = 7, .ksize = 1},
        {.n = 2, .cin = 1, .cout = 3, .h = 6, .w = 5, .ksize = 5},
        {.n = 1, .cin = 3, .cout = 1, .h = 7, .w = 11, .ksize = 5},
        {.n = 3, .cin = 2, .cout = 2, .h = 5, .w = 9, .ksize = 3},
        {.n = 1, .cin = 2, .cout = 1, .h = 3, .w = 3, .ksize = 3}, /* a single output */
        {.n = 1, .cin = 1, .cout = 2, .h = 1, .w = 13, .ksize = 1}, /* one row */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        check_against_op_slow(shapes[i], false, 10 + i);
}

/* The comparison must be able to fail: one output moved by 1/L of its magnitude (one
 * dropped term's worth) is caught. */
static void check_can_fail(void)
{
    const struct conv_shape s = {.n = 2, .cin = 3, .cout = 3, .h = 9, .w = 9, .ksize = 3};
    struct full_problem f = make_full(s, false, 3);
    const size_t ofull = cov_out_count(&s, COV_FULL);
    float *slow = alloc_or_exit(ofull * sizeof(float));
    memcpy(slow, f.out_full, ofull * sizeof(float));
    cov_op_slow(&s, slow, f.gamma_full, f.mu, f.c);
    const size_t at = cov_out_full_at(&s, 1, 2, 17, 2, 30);
    slow[at] += fabsf(slow[at]) / (s.cin * s.ksize * s.ksize);
    size_t poison_lost;
    CHECK(compact_path_mismatches(&f, slow, &poison_lost) == 1);
    CHECK(poison_lost == 0);
    /* Writing one off-diagonal entry is caught too. */
    slow[at] = f.out_full[at];
    slow[cov_out_full_at(&s, 1, 2, 17, 1, 30)] = 0;
    CHECK(compact_path_mismatches(&f, slow, &poison_lost) == 1);
    CHECK(poison_lost == 1);
    free(slow);
    free_full(&f);
}

static void gather_scatter_round_trip(void)
{
    const struct conv_shape s = {.n = 2, .cin = 3, .cout = 2, .h = 4, .w = 5, .ksize = 3};
    struct full_problem f = make_full(s, false, 4);
    float *gd = alloc_or_exit(cov_gamma_diag_count(&s) * sizeof(float));
    float *again = alloc_or_exit(cov_gamma_full_count(&s) * sizeof(float));
    cov_gather_gamma(&s, f.gamma_full, gd);
    size_t poisoned = 0;
    for (size_t i = 0; i < cov_gamma_diag_count(&s); i++)
        poisoned += is_poison(gd[i]);
    CHECK(poisoned == 0); /* the gather read only the diagonal blocks */
    for (size_t i = 0; i < cov_gamma_full_count(&s); i++)
        again[i] = poison();
    cov_scatter_gamma(&s, gd, again);
    CHECK(memcmp(again, f.gamma_full, cov_gamma_full_count(&s) * sizeof(float)) == 0);
    free(gd);
    free(again);
    free_full(&f);
}

/* box_tile.cuh's order, on the host: per batch element and row lag a, walk the input
 * rows once, sum each diagonal of k in X_i, keep a ring of the last k row sums. Every
 * S(q, q') it produces (the symmetric way: lags a >= 0, each result also stored at
 * (q', q)) must match cov_sum_at, and every element must be produced exactly once. */
static void box_order_matches(bool symmetric)
{
    const struct conv_shape s = {.n = 2, .cin = 2, .cout = 1, .h = 7, .w = 6, .ksize = 3};
    struct rng r = rng_seeded(5);
    float *mu = filled(cov_mu_count(&s), &r, -1, 1);
    float *gd = filled(cov_gamma_diag_count(&s), &r, -1, 1);
    if (symmetric)
        cov_symmetrize_gamma(&s, gd);
    const int k = s.ksize, ho = cov_out_h(&s), wo = cov_out_w(&s);
    const size_t Q = cov_out_positions(&s), P = cov_in_positions(&s);
    double *sum = zeroed_or_exit(cov_out_count(&s, COV_FACTORED), sizeof(double));
    int *hits = zeroed_or_exit(cov_out_count(&s, COV_FACTORED), sizeof(int));
    double *x = alloc_or_exit((size_t)s.w * s.w * sizeof(double));
    double *ring = alloc_or_exit((size_t)k * wo * wo * sizeof(double));
    for (int b = 0; b < s.n; b++)
        for (int a = symmetric ? 0 : -(ho - 1); a < ho; a++) {
            const int t_lo = a < 0 ? -a : 0, t_hi = a > 0 ? ho - a : ho;
            for (int i = t_lo; i < t_hi + k - 1; i++) {
                for (int j = 0; j < s.w; j++)
                    for (int j2 = 0; j2 < s.w; j2++) {
                        const size_t p = (size_t)i * s.w + j, p2 = (size_t)(i + a) * s.w + j2;
                        double v = 0;
                        for (int ci = 0; ci < s.cin; ci++)
                            v += (double)mu[cov_mu_at(&s, b, ci, p)] * mu[cov_mu_at(&s, b, ci, p2)] +
                                 gd[cov_gamma_diag_at(&s, b, ci, p, p2)];
                        x[j * s.w + j2] = v;
                    }
                const int step = i - t_lo, t = i - k + 1;
                for (int j0 = 0; j0 < wo; j0++)
                    for (int j1 = 0; j1 < wo; j1++) {
                        double row_sum = 0;
                        for (int dj = 0; dj < k; dj++)
                            row_sum += x[(j0 + dj) * s.w + j1 + dj];
                        ring[((size_t)(step % k) * wo + j0) * wo + j1] = row_sum;
                        if (step < k - 1)
                            continue;
                        double total = 0;
                        for (int m = 0; m < k; m++)
                            total += ring[((size_t)m * wo + j0) * wo + j1];
                        const size_t q = (size_t)t * wo + j0, q2 = (size_t)(t + a) * wo + j1;
                        sum[cov_out_factored_at(&s, b, q, q2)] += total;
                        hits[cov_out_factored_at(&s, b, q, q2)]++;
                        if (symmetric && a > 0) {
                            sum[cov_out_factored_at(&s, b, q2, q)] += total;
                            hits[cov_out_factored_at(&s, b, q2, q)]++;
                        }
                    }
            }
        }
    size_t bad = 0, missed = 0;
    for (int b = 0; b < s.n; b++)
        for (size_t q = 0; q < Q; q++)
            for (size_t q2 = 0; q2 < Q; q2++) {
                double mag;
                const double ref = cov_sum_at(&s, mu, gd, b, q, q2, &mag);
                bad += !(fabs(sum[cov_out_factored_at(&s, b, q, q2)] - ref) <= 1e-12 * mag);
                missed += hits[cov_out_factored_at(&s, b, q, q2)] != 1;
            }
    CHECK(bad == 0);
    CHECK(missed == 0);
    CHECK(P == 42);
    free(mu);
    free(gd);
    free(sum);
    free(hits);
    free(x);
    free(ring);
}

static void box_order_all_lags(void)
{
    box_order_matches(false);
}

static void box_order_symmetric(void)
{
    box_order_matches(true);
}

static void rejects_shapes_without_output(void)
{
    const struct conv_shape smaller_h = {.n = 1, .cin = 1, .cout = 1, .h = 2, .w = 9, .ksize = 3};
    const struct conv_shape smaller_w = {.n = 1, .cin = 1, .cout = 1, .h = 9, .w = 4, .ksize = 5};
    const struct conv_shape no_batch = {.n = 0, .cin = 1, .cout = 1, .h = 9, .w = 9, .ksize = 3};
    const struct conv_shape no_window = {.n = 1, .cin = 1, .cout = 1, .h = 9, .w = 9, .ksize = 0};
    const char *why = cov_shape_problem(&smaller_h);
    CHECK(why != NULL && strstr(why, "window is larger than the image"));
    CHECK(cov_shape_problem(&smaller_w) != NULL);
    CHECK(cov_shape_problem(&no_batch) != NULL);
    CHECK(cov_shape_problem(&no_window) != NULL);
}

/* The presets: the full 7-D tensors stay under 2^31 elements and 20 GB, the
 * compact ones in the tens to hundreds of MB; the byte formulas on the toy by hand. */
static void preset_sizes(void)
{
    for (int i = 0; i < COV_PRESET_COUNT; i++) {
        const struct conv_shape *s = &cov_presets[i].shape;
        CHECK(cov_shape_problem(s) == NULL);
        CHECK(cov_gamma_full_count(s) < ((size_t)1 << 31));
        CHECK(cov_out_count(s, COV_FULL) < ((size_t)1 << 31));
        const double full_gb = 4e-9 * (cov_gamma_full_count(s) + cov_out_count(s, COV_FULL));
        CHECK(full_gb < 20);
        printf("%-9s full %.2f GB  min bytes: blocks %.1f MB, factored %.1f MB, symmetric %.1f MB\n",
               cov_presets[i].name, full_gb, cov_min_bytes(s, COV_BLOCKS, false) / 1e6,
               cov_min_bytes(s, COV_FACTORED, false) / 1e6, cov_min_bytes(s, COV_FACTORED, true) / 1e6);
    }
    const struct conv_shape *toy = &cov_presets[0].shape;
    /* gamma 2*3*81*81, mu 2*3*81, c 3, out 2*3*49*49 read and written. */
    CHECK(cov_min_bytes(toy, COV_BLOCKS, false) == 4.0 * (39366 + 486 + 3 + 2 * 14406));
    CHECK(cov_min_bytes(toy, COV_FULL, false) == cov_min_bytes(toy, COV_BLOCKS, false));
    CHECK(cov_min_bytes(toy, COV_FACTORED, true) == 4.0 * (2 * 3 * 81 * 82 / 2 + 486 + 2 * 4802));
    CHECK(cov_flops(toy, COV_FACTORED) == 4802.0 * (3 * 27 + 1));
}

/* The harness's check of the op (covariance_op.c), in each layout: the seed's loops
 * on the full layout pass it; an output off by about one term, an output left as it
 * was, and a written entry outside the diagonal blocks each fail it. */
struct op_tensors {
    struct op_tensor t[OP_MAX_TENSORS];
    void *before[OP_MAX_TENSORS], *after[OP_MAX_TENSORS];
};

static void op_tensors_draw(struct op_tensors *o, const struct conv_shape *s, int layout)
{
    cov_op_tensors(s, layout, o->t);
    for (int i = 0; i < COV_TENSOR_COUNT; i++) {
        o->before[i] = alloc_or_exit(o->t[i].bytes);
        o->after[i] = NULL;
    }
    cov_op_draw(s, layout, 7, o->before);
    o->after[COV_OUT] = alloc_or_exit(o->t[COV_OUT].bytes);
    memcpy(o->after[COV_OUT], o->before[COV_OUT], o->t[COV_OUT].bytes);
}

static void op_tensors_free(struct op_tensors *o)
{
    for (int i = 0; i < COV_TENSOR_COUNT; i++)
        free(o->before[i]);
    free(o->after[COV_OUT]);
}

static bool op_check_passes(const struct conv_shape *s, int layout, struct op_tensors *o)
{
    return cov_op_check(s, layout, o->before, o->after).pass;
}

static void op_check_can_fail(void)
{
    const struct conv_shape s = {.n = 2, .cin = 3, .cout = 2, .h = 7, .w = 6, .ksize = 3};
    const size_t Q = cov_out_positions(&s);
    struct op_tensors o;
    op_tensors_draw(&o, &s, COV_FULL);
    CHECK(!op_check_passes(&s, COV_FULL, &o)); /* nothing computed yet */
    cov_op_slow(&s, o.after[COV_OUT], o.before[COV_GAMMA], o.before[COV_MU], o.before[COV_C]);
    CHECK(op_check_passes(&s, COV_FULL, &o));
    float *out = o.after[COV_OUT];
    const size_t off_diagonal = cov_out_full_at(&s, 1, 0, 3, 1, 5);
    out[off_diagonal] = 0.0f;
    CHECK(!op_check_passes(&s, COV_FULL, &o));
    out[off_diagonal] = poison();
    CHECK(op_check_passes(&s, COV_FULL, &o));
    /* Off by about one window term's share (1 / (Ci k^2) of the value). */
    const size_t at = cov_out_full_at(&s, 1, 1, Q - 1, 1, 0);
    out[at] *= 1.0f + 1.0f / (float)(s.cin * s.ksize * s.ksize);
    CHECK(!op_check_passes(&s, COV_FULL, &o));
    op_tensors_free(&o);

    op_tensors_draw(&o, &s, COV_FACTORED);
    float *sums = o.after[COV_OUT];
    for (int b = 0; b < s.n; b++)
        for (size_t q = 0; q < Q; q++)
            for (size_t q2 = 0; q2 < Q; q2++)
                sums[cov_out_factored_at(&s, b, q, q2)] += (float)cov_sum_at(
                    &s, o.before[COV_MU], o.before[COV_GAMMA], b, q, q2, NULL);
    CHECK(op_check_passes(&s, COV_FACTORED, &o));
    const size_t last = cov_out_factored_at(&s, s.n - 1, Q - 1, Q - 1);
    sums[last] = ((const float *)o.before[COV_OUT])[last]; /* left unwritten */
    CHECK(!op_check_passes(&s, COV_FACTORED, &o));
    op_tensors_free(&o);
}

/* The gamma cov_op_draw gives is a covariance: every diagonal block symmetric. */
static void op_draw_symmetric(void)
{
    const struct conv_shape s = {.n = 2, .cin = 2, .cout = 3, .h = 5, .w = 4, .ksize = 3};
    const size_t P = cov_in_positions(&s);
    struct op_tensors o;
    op_tensors_draw(&o, &s, COV_BLOCKS);
    const float *gd = o.before[COV_GAMMA];
    size_t asymmetric = 0;
    for (int b = 0; b < s.n; b++)
        for (int ci = 0; ci < s.cin; ci++)
            for (size_t p = 0; p < P; p++)
                for (size_t p2 = 0; p2 < P; p2++)
                    asymmetric += gd[cov_gamma_diag_at(&s, b, ci, p, p2)] !=
                                  gd[cov_gamma_diag_at(&s, b, ci, p2, p)];
    CHECK(asymmetric == 0);
    CHECK(gd[cov_gamma_diag_at(&s, 1, 1, 0, P - 1)] != gd[cov_gamma_diag_at(&s, 1, 1, 1, P - 1)]);
    op_tensors_free(&o);
}

static const struct unit_case cases[] = {
    {"seed_toy_matches_op_slow", seed_toy_matches_op_slow},
    {"awkward_shapes_match_op_slow", awkward_shapes_match_op_slow},
    {"check_can_fail", check_can_fail},
    {"gather_scatter_round_trip", gather_scatter_round_trip},
    {"box_order_all_lags", box_order_all_lags},
    {"box_order_symmetric", box_order_symmetric},
    {"rejects_shapes_without_output", rejects_shapes_without_output},
    {"preset_sizes", preset_sizes},
    {"op_check_can_fail", op_check_can_fail},
    {"op_draw_symmetric", op_draw_symmetric},
};

UNIT_MAIN(cases)
