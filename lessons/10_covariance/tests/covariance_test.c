/* Lesson 10 on the host, no GPU needed: the compact (channel-diagonal) path equals
 * seed 001's op_slow on the full 7-D tensors, entries outside the diagonal blocks are
 * never read or written, the box-filter order of the GPU kernels (box_tile.cuh)
 * computes the same sums, and shapes without an output are refused. The seed's toy
 * case as .npy files (COV_FILES_DIR) through the executable (LESSON_BIN): the result
 * file is what op_slow makes of them; its compact files (the diagonal blocks and S) mean
 * the same in every layout, and S comes back from the factored one. The GPU variants'
 * round trips are the cases that need a GPU. */
#define _POSIX_C_SOURCE 200809L /* posix_spawn, truncate */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc.h"
#include "npy.h"
#include "problem.h"
#include "rng.h"
#include "tensor_format.h"
#include "unit.h"

extern char **environ;

/* A NaN with a payload no arithmetic produces: an off-diagonal entry that still holds
 * it, bit for bit, was neither read into a result nor written. */
static const uint32_t POISON_BITS = 0x7fc0dead;

static float poison(void)
{
    return bits_to_float(POISON_BITS);
}

static bool is_poison(float f)
{
    return float_to_bits(f) == POISON_BITS;
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

/* The harness's check of the op (problem.c), in each layout: the seed's loops
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
    return cov_op_check(s, layout, 1, o->before, o->after).pass;
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

/* The seed's toy case as its Python makes it: torch.rand for mu, gamma and input (every
 * entry, on the diagonal blocks or not), c = 1 for every output channel (seed_c), else
 * c random in [0.5, 2): a c that is dropped or misplaced shows. */
static const struct conv_shape seed_toy = {.n = 2, .cin = 3, .cout = 3, .h = 9, .w = 9, .ksize = 3};
static const size_t seed_input_shape[] = {2, 3, 7, 7, 3, 7, 7};
static const size_t compact_input_shape[] = {2, 7, 7, 7, 7};

struct seed_files {
    struct conv_shape s;
    float *t[COV_TENSOR_COUNT]; /* indexed by enum cov_tensor, in the full layout */
};

static struct seed_files make_seed_files(bool seed_c)
{
    struct seed_files f = {.s = seed_toy};
    struct rng r = rng_seeded(11);
    f.t[COV_MU] = filled(cov_mu_count(&f.s), &r, 0, 1);
    f.t[COV_GAMMA] = filled(cov_gamma_full_count(&f.s), &r, 0, 1);
    f.t[COV_C] = filled(cov_c_count(&f.s), &r, 0.5, 2);
    for (int c0 = 0; seed_c && c0 < f.s.cout; c0++)
        f.t[COV_C][c0] = 1;
    f.t[COV_OUT] = filled(cov_out_count(&f.s, COV_FULL), &r, 0, 1);
    return f;
}

static void free_seed_files(struct seed_files *f)
{
    for (int i = 0; i < COV_TENSOR_COUNT; i++)
        free(f->t[i]);
}

/* Entries of `got` (the seed's input after the op, full layout) that differ from what
 * op_slow makes of the files: on the diagonal blocks bit for bit when `exact`, else
 * beyond op_slow's float32 bound from the float64 gold; every other entry must be the
 * file's, bit for bit. */
static size_t mismatches_against_slow(const struct seed_files *f, const float *got, bool exact)
{
    const struct conv_shape *s = &f->s;
    const size_t count = cov_out_count(s, COV_FULL), Q = cov_out_positions(s);
    float *slow = alloc_or_exit(count * sizeof(float));
    memcpy(slow, f->t[COV_OUT], count * sizeof(float));
    cov_op_slow(s, slow, f->t[COV_GAMMA], f->t[COV_MU], f->t[COV_C]);
    float *gd = alloc_or_exit(cov_gamma_diag_count(s) * sizeof(float));
    float *before = alloc_or_exit(cov_out_count(s, COV_BLOCKS) * sizeof(float));
    cov_gather_gamma(s, f->t[COV_GAMMA], gd);
    cov_gather_out(s, f->t[COV_OUT], before);
    size_t bad = 0;
    for (int b = 0; b < s->n; b++)
        for (int c0 = 0; c0 < s->cout; c0++)
            for (size_t q = 0; q < Q; q++)
                for (int c02 = 0; c02 < s->cout; c02++)
                    for (size_t q2 = 0; q2 < Q; q2++) {
                        const size_t at = cov_out_full_at(s, b, c0, q, c02, q2);
                        if (exact || c02 != c0) {
                            bad += memcmp(&got[at], &slow[at], sizeof(float)) != 0;
                            continue;
                        }
                        double mag;
                        const double ref = cov_gold_at(s, f->t[COV_MU], gd, f->t[COV_C], before,
                                                       b, c0, q, q2, &mag);
                        bad += !(fabs(got[at] - ref) <= slow_tolerance(s, mag));
                    }
    free(slow);
    free(gd);
    free(before);
    return bad;
}

/* The seed's toy as compact files (cov_op_compact_files, in enum cov_tensor's order):
 * mu, the diagonal blocks of gamma made symmetric (a covariance), c in [0.5, 2), and S
 * before the op in [0, 1). */
struct compact_files {
    struct conv_shape s;
    float *t[COV_TENSOR_COUNT];
};

static struct compact_files make_compact_files(void)
{
    struct seed_files seed = make_seed_files(false);
    struct compact_files f = {.s = seed.s};
    f.t[COV_MU] = seed.t[COV_MU];
    f.t[COV_C] = seed.t[COV_C];
    f.t[COV_GAMMA] = alloc_or_exit(cov_gamma_diag_count(&f.s) * sizeof(float));
    cov_gather_gamma(&f.s, seed.t[COV_GAMMA], f.t[COV_GAMMA]);
    cov_symmetrize_gamma(&f.s, f.t[COV_GAMMA]);
    struct rng r = rng_seeded(12);
    f.t[COV_OUT] = filled(cov_out_count(&f.s, COV_FACTORED), &r, 0, 1);
    free(seed.t[COV_GAMMA]);
    free(seed.t[COV_OUT]);
    return f;
}

static void free_compact_files(struct compact_files *f)
{
    for (int i = 0; i < COV_TENSOR_COUNT; i++)
        free(f->t[i]);
}

/* |got - c0 * (S before + S)| beyond op_slow's float32 bound, S in float64 from the
 * compact files (c0 = 1 for S itself): what every layout's result means. */
static bool off_compact_gold(const struct compact_files *f, double got, double c0, int b, size_t q,
                             size_t q2)
{
    const struct conv_shape *s = &f->s;
    double mag;
    const double sum = cov_sum_at(s, f->t[COV_MU], f->t[COV_GAMMA], b, q, q2, &mag);
    const double was = f->t[COV_OUT][cov_out_factored_at(s, b, q, q2)];
    return !(fabs(got - c0 * (was + sum)) <= slow_tolerance(s, fabs(c0) * (fabs(was) + mag)));
}

/* A file of the test's folder. */
static const char *file_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", COV_FILES_DIR, name);
    return buf;
}

static void write_npy(const char *name, const float *data, int ndim, const size_t *shape)
{
    char path[FILENAME_MAX], err[512];
    const bool ok = npy_write(file_path(path, sizeof path, name), data, ndim, shape, err,
                              sizeof err);
    if (!ok)
        fprintf(stderr, "%s\n", err);
    CHECK(ok);
}

/* name with `extra` bytes more (or fewer, when negative) data than its header says. */
static void write_npy_resized(const char *name, const float *data, int ndim,
                              const size_t *shape, long extra)
{
    write_npy(name, data, ndim, shape);
    char path[FILENAME_MAX];
    struct stat st;
    CHECK(stat(file_path(path, sizeof path, name), &st) == 0);
    CHECK(truncate(path, st.st_size + extra) == 0);
}

/* The files of the seed's toy case, and of its compact set (mu is the same), in
 * enum cov_tensor's order. */
static const char *const seed_names[COV_TENSOR_COUNT] = {"mu.npy", "gamma.npy", "c.npy",
                                                         "input.npy"};
static const char *const compact_names[COV_TENSOR_COUNT] = {"mu.npy", "compact_gamma.npy",
                                                            "compact_c.npy", "compact_input.npy"};
/* Files whose gamma is not symmetric, beside torch.rand's toy (gamma.npy): the compact
 * gamma with one pair changed, and the seed's layout at 5x5, where G is one tile. */
static const char *const asymmetric_compact_gamma = "compact_gamma_asymmetric.npy";
static const struct conv_shape small_seed = {.n = 1, .cin = 2, .cout = 2, .h = 5, .w = 5,
                                             .ksize = 3};
static const char *const small_names[COV_TENSOR_COUNT] = {"small_mu.npy", "small_gamma.npy",
                                                          "small_c.npy", "small_input.npy"};

/* The seed's toy case as mu.npy, gamma.npy, c.npy and input.npy, and files that must
 * be refused: a truncated gamma, a mu with more data than its header says, a mu with a
 * NaN, a mu of another batch, a c of another channel count, an input whose Ho x Wo fits
 * no square window (7x6) and one whose window would be even (6x6: k = 4). The compact
 * set (compact_names), and compact files that must be refused: a gamma of rank 5, a
 * gamma whose blocks are 81 x 72 (W 8 where mu's is 9), an input of another batch, and
 * a gamma with a NaN. Gammas that are not symmetric: the compact one with a pair
 * changed, and the 5x5 problem small_names. */
static void write_seed_toy_files(void)
{
    CHECK(mkdir(COV_FILES_DIR, 0777) == 0 || errno == EEXIST);
    struct seed_files f = make_seed_files(true);
    const size_t mu[] = {2, 3, 9, 9}, gamma[] = {2, 3, 9, 9, 3, 9, 9}, c[] = {3};
    write_npy(seed_names[COV_MU], f.t[COV_MU], 4, mu);
    write_npy(seed_names[COV_GAMMA], f.t[COV_GAMMA], 7, gamma);
    write_npy(seed_names[COV_C], f.t[COV_C], 1, c);
    write_npy(seed_names[COV_OUT], f.t[COV_OUT], 7, seed_input_shape);
    write_npy_resized("gamma_truncated.npy", f.t[COV_GAMMA], 7, gamma, -4);
    write_npy_resized("mu_lying.npy", f.t[COV_MU], 4, mu, 4);
    const size_t mu_b1[] = {1, 3, 9, 9}, c4[] = {4}, input_7x6[] = {2, 3, 7, 6, 3, 7, 6};
    const size_t input_6x6[] = {2, 3, 6, 6, 3, 6, 6};
    write_npy("mu_b1.npy", f.t[COV_MU], 4, mu_b1);
    write_npy("c4.npy", f.t[COV_OUT], 1, c4);
    write_npy("input_7x6.npy", f.t[COV_OUT], 7, input_7x6);
    write_npy("input_6x6.npy", f.t[COV_OUT], 7, input_6x6);
    f.t[COV_MU][cov_mu_at(&f.s, 1, 2, 3 * 9 + 4)] = NAN;
    write_npy("mu_nan.npy", f.t[COV_MU], 4, mu);
    free_seed_files(&f);

    struct compact_files g = make_compact_files();
    const size_t gd[] = {2, 3, 9, 9, 9, 9};
    write_npy(compact_names[COV_GAMMA], g.t[COV_GAMMA], 6, gd);
    write_npy(compact_names[COV_C], g.t[COV_C], 1, c);
    write_npy(compact_names[COV_OUT], g.t[COV_OUT], 5, compact_input_shape);
    const size_t gd_5d[] = {2, 3, 81, 9, 9}, gd_9x8[] = {2, 3, 9, 9, 9, 8};
    const size_t s_b1[] = {1, 7, 7, 7, 7};
    write_npy("compact_gamma_5d.npy", g.t[COV_GAMMA], 5, gd_5d);
    write_npy("compact_gamma_9x8.npy", g.t[COV_GAMMA], 6, gd_9x8);
    write_npy("compact_input_b1.npy", g.t[COV_OUT], 5, s_b1);
    /* One pair a rounding off symmetric (tolerated) in block (0, 0), one pair that is
     * not in block (1, 0): p = (2, 3), p' = (5, 6). */
    float *pair = &g.t[COV_GAMMA][cov_gamma_diag_at(&g.s, 0, 0, 0, 1)];
    *pair = nextafterf(*pair, INFINITY);
    g.t[COV_GAMMA][cov_gamma_diag_at(&g.s, 1, 0, 2 * 9 + 3, 5 * 9 + 6)] += 0.5f;
    write_npy(asymmetric_compact_gamma, g.t[COV_GAMMA], 6, gd);
    g.t[COV_GAMMA][cov_gamma_diag_at(&g.s, 1, 2, 40, 41)] = NAN;
    write_npy("compact_gamma_nan.npy", g.t[COV_GAMMA], 6, gd);
    free_compact_files(&g);

    /* The seed's layout at 5x5 (P = 25, one 32 x 32 tile of G), torch.rand's gamma. */
    struct rng r = rng_seeded(13);
    const struct conv_shape *t = &small_seed;
    const size_t small_mu[] = {1, 2, 5, 5}, small_gamma[] = {1, 2, 5, 5, 2, 5, 5};
    const size_t small_c[] = {2}, small_input[] = {1, 2, 3, 3, 2, 3, 3};
    float *mu_values = filled(cov_mu_count(t), &r, 0, 1);
    float *gamma_values = filled(cov_gamma_full_count(t), &r, 0, 1);
    float *c_values = filled(cov_c_count(t), &r, 0.5, 2);
    float *input_values = filled(cov_out_count(t, COV_FULL), &r, 0, 1);
    write_npy(small_names[COV_MU], mu_values, 4, small_mu);
    write_npy(small_names[COV_GAMMA], gamma_values, 7, small_gamma);
    write_npy(small_names[COV_C], c_values, 1, small_c);
    write_npy(small_names[COV_OUT], input_values, 7, small_input);
    free(mu_values);
    free(gamma_values);
    free(c_values);
    free(input_values);
}

/* Runs the lesson on the files `names` (in enum cov_tensor's order, in the test's
 * folder) with one variant (NULL: every one), the result into `out` (NULL: none);
 * returns its exit code (-1 when it did not exit). */
static int run_lesson_logged(const char *const *names, const char *variant, const char *out,
                             const char *log);

static int run_lesson_on(const char *const *names, const char *variant, const char *out)
{
    return run_lesson_logged(names, variant, out, NULL);
}

/* The same with standard output into the file `log` (NULL: the test's own). */
static int run_lesson_logged(const char *const *names, const char *variant, const char *out,
                             const char *log)
{
    char flag[COV_TENSOR_COUNT][16], path[COV_TENSOR_COUNT][FILENAME_MAX];
    /* The program, --reps and --warmup, --variant, the files, --output, the end. */
    char *argv[1 + 4 + 2 + 2 * COV_TENSOR_COUNT + 2 + 1] = {LESSON_BIN, "--reps", "1", "--warmup",
                                                            "0"};
    int n = 5;
    if (variant) {
        argv[n++] = "--variant";
        argv[n++] = (char *)variant;
    }
    for (int i = 0; i < COV_TENSOR_COUNT; i++) {
        snprintf(flag[i], sizeof flag[i], "--%s", cov_op_files[i].flag);
        argv[n++] = flag[i];
        argv[n++] = (char *)file_path(path[i], sizeof path[i], names[i]);
    }
    if (out) {
        argv[n++] = "--output";
        argv[n++] = (char *)out;
    }
    argv[n] = NULL;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (log)
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log,
                                         O_WRONLY | O_CREAT | O_TRUNC, 0666);
    pid_t pid;
    int status;
    const bool spawned = posix_spawn(&pid, LESSON_BIN, &actions, NULL, argv, environ) == 0;
    posix_spawn_file_actions_destroy(&actions);
    if (!spawned || waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A run that needs a GPU found none: ctest reports the case as skipped. */
static void skip_without_gpu(int rc)
{
    if (rc == 77)
        exit(77);
}

/* out_<prefix><variant>.npy in the test's folder, removed: where a run writes --output. */
static void output_path(char *out, size_t size, const char *prefix, const char *variant)
{
    char name[64];
    snprintf(name, sizeof name, "out_%s%s.npy", prefix, variant);
    file_path(out, size, name);
    remove(out);
}

/* Runs the lesson on the files `names` with `variant` into `out` and reads the result:
 * true, with *got to free, when the file has the shape (ndim, shape). The run must
 * pass; one that found no GPU skips the case. */
static bool run_and_read(const char *const *names, const char *variant, const char *out,
                         int ndim, const size_t *shape, struct npy_array *got)
{
    const int rc = run_lesson_on(names, variant, out);
    skip_without_gpu(rc);
    CHECK(rc == 0);
    char err[512];
    if (!npy_read(out, got, err, sizeof err))
        return false;
    if (got->ndim == ndim && memcmp(got->shape, shape, ndim * sizeof *shape) == 0)
        return true;
    npy_free(got);
    return false;
}

/* The variant's result file against op_slow of the files, and removed. */
static void check_round_trip(const char *variant, bool exact)
{
    char out[FILENAME_MAX];
    output_path(out, sizeof out, "", variant);
    struct npy_array got;
    const bool shaped = run_and_read(seed_names, variant, out, 7, seed_input_shape, &got);
    CHECK(shaped);
    if (shaped) {
        struct seed_files f = make_seed_files(true);
        const size_t bad = mismatches_against_slow(&f, got.data, exact);
        if (bad)
            fprintf(stderr, "%s: %zu entries of %s differ from op_slow's\n", variant, bad, out);
        CHECK(bad == 0);
        free_seed_files(&f);
        npy_free(&got);
    }
    remove(out);
}

/* The seed's loops write exactly what op_slow makes of the files, bit for bit. */
static void files_round_trip_cpu(void)
{
    check_round_trip("cpu_loops", true);
    check_round_trip("cpu_openmp", true);
}

/* Every GPU variant defined for any gamma, within op_slow's float32 bound; the ones that
 * need a symmetric gamma (torch.rand's is not) are refused before any GPU work and write
 * nothing. */
static void files_round_trip_gpu(void)
{
    const char *variants[] = {"seed_port", "thread_per_output", "shared_box", "factored",
                              "channels_summed", "channels_summed_factored"};
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
        check_round_trip(variants[i], false);
    const char *symmetric[] = {"factored_symmetric", "channels_summed_symmetric"};
    for (size_t i = 0; i < sizeof symmetric / sizeof symmetric[0]; i++) {
        char out[FILENAME_MAX];
        output_path(out, sizeof out, "", symmetric[i]);
        CHECK(run_lesson_on(seed_names, symmetric[i], out) == 2);
        CHECK(access(out, F_OK) != 0);
    }
}

/* What a run in `layout` makes of its tensors as converted (before), on the host: the
 * seed's loops for the full layout, the float64 gold rounded to float32 for the others.
 * Returns the written tensor (out, to free), with after[COV_OUT] pointing at it. */
static float *run_layout_on_host(const struct conv_shape *s, int layout, void *const *before,
                                 const struct op_tensor *t, void **after)
{
    const size_t Q = cov_out_positions(s);
    const float *gd = before[COV_GAMMA], *mu = before[COV_MU], *c = before[COV_C];
    float *out = alloc_or_exit(t[COV_OUT].bytes);
    memcpy(out, before[COV_OUT], t[COV_OUT].bytes);
    after[COV_OUT] = out;
    if (layout == COV_FULL)
        cov_op_slow(s, out, gd, mu, c);
    for (int b = 0; layout != COV_FULL && b < s->n; b++)
        for (size_t q = 0; q < Q; q++)
            for (size_t q2 = 0; q2 < Q; q2++) {
                if (layout == COV_FACTORED)
                    out[cov_out_factored_at(s, b, q, q2)] =
                        (float)cov_gold_factored_at(s, mu, gd, before[COV_OUT], b, q, q2, NULL);
                for (int c0 = 0; layout == COV_BLOCKS && c0 < s->cout; c0++)
                    out[cov_out_blocks_at(s, b, c0, q, q2)] =
                        (float)cov_gold_at(s, mu, gd, c, before[COV_OUT], b, c0, q, q2, NULL);
            }
    return out;
}

/* The start of one layout of the every-layout tests: its tensors (before) from the
 * files' values by from_files (file[] names the files), run on the host, and the run
 * passing the op's check. Returns run_layout_on_host's tensor. */
static float *run_from_files(const struct conv_shape *s, int layout,
                             void (*from_files)(const struct conv_shape *, int, void *const *,
                                                void *const *),
                             float *const *files, struct op_tensor *t, void **file, void **before,
                             void **after)
{
    cov_op_tensors(s, layout, t);
    for (int i = 0; i < COV_TENSOR_COUNT; i++) {
        before[i] = alloc_or_exit(t[i].bytes);
        file[i] = files[i];
    }
    from_files(s, layout, file, before);
    float *out = run_layout_on_host(s, layout, before, t, after);
    CHECK(cov_op_check(s, layout, 1, before, after).pass);
    return out;
}

/* The end of one layout of the every-layout tests: its mismatches reported and
 * checked, its buffers freed. */
static void finish_layout(int layout, size_t bad, void **before, float *out, float *written)
{
    if (bad)
        fprintf(stderr, "layout %s: %zu entries differ\n", cov_layout_names[layout], bad);
    CHECK(bad == 0);
    for (int i = 0; i < COV_TENSOR_COUNT; i++)
        free(before[i]);
    free(out);
    free(written);
}

/* Each layout from the files and back on the host (what the harness does around a
 * run): the run's result in the layout passes the op's check, and back in the full
 * layout it is what op_slow makes of the files. */
static void files_every_layout(void)
{
    struct seed_files f = make_seed_files(false);
    const struct conv_shape *s = &f.s;
    for (int layout = 0; layout < COV_LAYOUT_COUNT; layout++) {
        struct op_tensor t[OP_MAX_TENSORS];
        void *before[OP_MAX_TENSORS], *after[OP_MAX_TENSORS] = {0}, *file[OP_MAX_TENSORS];
        float *out = run_from_files(s, layout, cov_op_from_files, f.t, t, file, before, after);
        float *written = alloc_or_exit(cov_out_count(s, COV_FULL) * sizeof(float));
        memcpy(written, f.t[COV_OUT], cov_out_count(s, COV_FULL) * sizeof(float));
        file[COV_OUT] = written;
        cov_op_to_files(s, layout, file, after);
        const size_t bad = mismatches_against_slow(&f, written, layout == COV_FULL);
        finish_layout(layout, bad, before, out, written);
    }
    free_seed_files(&f);
}

/* Each layout from the compact files (what the harness does before a run): the run's
 * result in the layout passes the op's check, and means what the files mean, c (x) S
 * after the op: block c0 is c[c0] * (S before + S), and the factored layout's S, written
 * back to the files, is S before + S. */
static void compact_files_every_layout(void)
{
    struct compact_files f = make_compact_files();
    const struct conv_shape *s = &f.s;
    const size_t Q = cov_out_positions(s);
    const float *c = f.t[COV_C];
    for (int layout = 0; layout < COV_LAYOUT_COUNT; layout++) {
        struct op_tensor t[OP_MAX_TENSORS];
        void *before[OP_MAX_TENSORS], *after[OP_MAX_TENSORS] = {0}, *file[OP_MAX_TENSORS];
        float *out =
            run_from_files(s, layout, cov_op_from_compact_files, f.t, t, file, before, after);
        CHECK(cov_op_writes_compact(layout) == (layout == COV_FACTORED));
        float *written = NULL;
        if (layout == COV_FACTORED) {
            written = alloc_or_exit(t[COV_OUT].bytes);
            file[COV_OUT] = written;
            cov_op_to_compact_files(s, layout, file, after);
        }
        size_t bad = 0;
        for (int b = 0; b < s->n; b++)
            for (size_t q = 0; q < Q; q++)
                for (size_t q2 = 0; q2 < Q; q2++) {
                    if (written)
                        bad += off_compact_gold(&f, written[cov_out_factored_at(s, b, q, q2)], 1.0,
                                                b, q, q2);
                    for (int c0 = 0; !written && c0 < s->cout; c0++) {
                        const size_t at = layout == COV_FULL ? cov_out_full_at(s, b, c0, q, c0, q2)
                                                             : cov_out_blocks_at(s, b, c0, q, q2);
                        bad += off_compact_gold(&f, out[at], c[c0], b, q, q2);
                    }
                }
        finish_layout(layout, bad, before, out, written);
    }
    free_compact_files(&f);
}

/* The seed's loops on the compact files: they run on the full tensors the files stand
 * for and pass their check. */
static void compact_files_cpu(void)
{
    CHECK(run_lesson_on(compact_names, "cpu_loops", NULL) == 0);
    CHECK(run_lesson_on(compact_names, "cpu_openmp", NULL) == 0);
}

/* Every variant passes its check on the compact files (their gamma is symmetric), and
 * each of the factored layout writes S after the op, within op_slow's float32 bound of
 * S before + S in float64 from the files. */
static void compact_files_round_trip_gpu(void)
{
    const int all = run_lesson_on(compact_names, NULL, NULL);
    skip_without_gpu(all);
    CHECK(all == 0);
    const char *writers[] = {"factored", "factored_symmetric", "channels_summed_factored",
                             "channels_summed_symmetric"};
    struct compact_files f = make_compact_files();
    const size_t Q = cov_out_positions(&f.s);
    for (size_t i = 0; i < sizeof writers / sizeof writers[0]; i++) {
        char out[FILENAME_MAX];
        output_path(out, sizeof out, "compact_", writers[i]);
        struct npy_array got;
        const bool shaped =
            run_and_read(compact_names, writers[i], out, 5, compact_input_shape, &got);
        CHECK(shaped);
        size_t bad = 0;
        for (int b = 0; shaped && b < f.s.n; b++)
            for (size_t q = 0; q < Q; q++)
                for (size_t q2 = 0; q2 < Q; q2++)
                    bad += off_compact_gold(&f, got.data[cov_out_factored_at(&f.s, b, q, q2)], 1.0,
                                            b, q, q2);
        if (bad)
            fprintf(stderr, "%s: %zu entries of %s are not S before + S\n", writers[i], bad, out);
        CHECK(bad == 0);
        if (shaped)
            npy_free(&got);
        remove(out);
    }
    free_compact_files(&f);
}

/* The symmetric variants' decision, made before any work: a pair is symmetric to
 * float32 rounding; the first pair that is not is found in memory and in a file of
 * either set, reading only the diagonal blocks (torch.rand's 7-D toy, the compact gamma
 * with one pair changed, the 5x5 toy), and named in the reason the variants give; a
 * symmetric file, a drawn gamma and a file the op would refuse give none. */
static void symmetric_variants_skip_asymmetric_gamma(void)
{
    CHECK(cov_pair_symmetric(0.25f, 0.25f) && cov_pair_symmetric(0.0f, 0.0f));
    CHECK(cov_pair_symmetric(0.3f, nextafterf(0.3f, 1.0f)));
    CHECK(cov_pair_symmetric(-2.0f, nextafterf(nextafterf(-2.0f, -3.0f), -3.0f)));
    CHECK(!cov_pair_symmetric(0.5f, 0.25f) && !cov_pair_symmetric(0.0f, 1e-30f));
    CHECK(!cov_pair_symmetric(NAN, NAN));

    /* In memory: drawn (symmetric), then one pair changed. */
    const struct conv_shape s = {.n = 2, .cin = 2, .cout = 1, .h = 4, .w = 3, .ksize = 3};
    struct op_tensors o;
    op_tensors_draw(&o, &s, COV_FACTORED);
    float *gd = o.before[COV_GAMMA];
    CHECK(!cov_find_asymmetry(&s, gd).found);
    gd[cov_gamma_diag_at(&s, 1, 1, 2 * 3 + 1, 1 * 3 + 2)] += 1.0f; /* p = (2, 1) > p' */
    struct cov_asymmetry a = cov_find_asymmetry(&s, gd);
    CHECK(a.found && a.rank == 6 && a.b == 1 && a.ci == 1);
    CHECK(a.i == 1 && a.j == 2 && a.i2 == 2 && a.j2 == 1);
    CHECK(a.mirror == gd[cov_gamma_diag_at(&s, 1, 1, 7, 5)] &&
          a.value == gd[cov_gamma_diag_at(&s, 1, 1, 5, 7)]);
    op_tensors_free(&o);

    /* The seed's layout: the file's first pair is the gathered blocks' first. */
    char path[FILENAME_MAX];
    CHECK(cov_gamma_file_asymmetry(file_path(path, sizeof path, "gamma.npy"), &a));
    struct seed_files f = make_seed_files(true);
    float *blocks = alloc_or_exit(cov_gamma_diag_count(&f.s) * sizeof(float));
    cov_gather_gamma(&f.s, f.t[COV_GAMMA], blocks);
    struct cov_asymmetry in_memory = cov_find_asymmetry(&f.s, blocks);
    CHECK(a.found && a.rank == 7 && in_memory.found);
    CHECK(a.b == in_memory.b && a.ci == in_memory.ci && a.i == in_memory.i &&
          a.j == in_memory.j && a.i2 == in_memory.i2 && a.j2 == in_memory.j2 &&
          a.value == in_memory.value && a.mirror == in_memory.mirror);
    free(blocks);
    free_seed_files(&f);
    cov_note_gamma(path, &a);
    const char *why = cov_needs_symmetric_gamma(&seed_toy);
    char element[64];
    snprintf(element, sizeof element, "gamma[%zu, %zu, %zu, %zu, %zu, %zu, %zu]", a.b, a.ci, a.i,
             a.j, a.ci, a.i2, a.j2);
    CHECK(why && strstr(why, "needs a symmetric gamma") && strstr(why, path) &&
          strstr(why, element));

    /* The seed's layout with symmetric diagonal blocks and torch.rand's entries off them
     * (never read): no pair; then one pair changed in block (1, 2), past the first blocks. */
    f = make_seed_files(true);
    blocks = alloc_or_exit(cov_gamma_diag_count(&f.s) * sizeof(float));
    cov_gather_gamma(&f.s, f.t[COV_GAMMA], blocks);
    cov_symmetrize_gamma(&f.s, blocks);
    cov_scatter_gamma(&f.s, blocks, f.t[COV_GAMMA]);
    const size_t full_shape[] = {2, 3, 9, 9, 3, 9, 9};
    write_npy("gamma_symmetric_blocks.npy", f.t[COV_GAMMA], 7, full_shape);
    CHECK(cov_gamma_file_asymmetry(file_path(path, sizeof path, "gamma_symmetric_blocks.npy"),
                                   &a));
    CHECK(!a.found);
    f.t[COV_GAMMA][cov_gamma_full_at(&f.s, 1, 2, 4 * 9 + 7, 2, 8 * 9 + 1)] = -3.0f;
    write_npy("gamma_one_pair.npy", f.t[COV_GAMMA], 7, full_shape);
    CHECK(cov_gamma_file_asymmetry(file_path(path, sizeof path, "gamma_one_pair.npy"), &a));
    CHECK(a.found && a.rank == 7 && a.b == 1 && a.ci == 2 && a.i == 4 && a.j == 7 && a.i2 == 8 &&
          a.j2 == 1 && a.value == -3.0f &&
          a.mirror == blocks[cov_gamma_diag_at(&f.s, 1, 2, 8 * 9 + 1, 4 * 9 + 7)]);
    free(blocks);
    free_seed_files(&f);

    /* The compact set: symmetric (a rounding off in one pair), then one pair changed. */
    CHECK(cov_gamma_file_asymmetry(file_path(path, sizeof path, compact_names[COV_GAMMA]), &a));
    CHECK(!a.found);
    cov_note_gamma(path, &a);
    CHECK(cov_needs_symmetric_gamma(&seed_toy) == NULL);
    CHECK(cov_gamma_file_asymmetry(file_path(path, sizeof path, asymmetric_compact_gamma), &a));
    CHECK(a.found && a.rank == 6 && a.b == 1 && a.ci == 0 && a.i == 2 && a.j == 3 && a.i2 == 5 &&
          a.j2 == 6 && a.value == a.mirror + 0.5f);
    cov_note_gamma(path, &a);
    why = cov_needs_symmetric_gamma(&seed_toy);
    CHECK(why && strstr(why, path) && strstr(why, "gamma[1, 0, 2, 3, 5, 6] = ") &&
          strstr(why, "but gamma[1, 0, 5, 6, 2, 3] = "));
    /* One tile of G (P = 25): channels_summed_symmetric computed it whole and passed. */
    CHECK(cov_gamma_file_asymmetry(file_path(path, sizeof path, small_names[COV_GAMMA]), &a));
    CHECK(a.found && a.rank == 7);
    /* A drawn gamma: nothing to skip. */
    cov_note_gamma(NULL, &a);
    CHECK(cov_needs_symmetric_gamma(&seed_toy) == NULL);

    /* Files the op refuses: no decision (op_files_read names what is wrong). */
    const char *refused[] = {"none.npy", "mu.npy", "compact_gamma_5d.npy", "compact_gamma_9x8.npy",
                             "gamma_truncated.npy", "c.npy"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        CHECK(!cov_gamma_file_asymmetry(file_path(path, sizeof path, refused[i]), &a));
        CHECK(!a.found);
    }
}

/* Counts the lines of `log` that start with `variant` and hold "skipped: needs a
 * symmetric gamma". */
static int skip_lines(const char *log, const char *variant)
{
    FILE *f = fopen(log, "r");
    if (!f)
        return -1;
    char line[8192];
    int n = 0;
    const size_t len = strlen(variant);
    while (fgets(line, sizeof line, f))
        n += strncmp(line, variant, len) == 0 && line[len] == ' ' &&
             strstr(line, "skipped: needs a symmetric gamma") != NULL;
    fclose(f);
    return n;
}

/* The whole table on gammas that are not symmetric: every other variant passes (exit
 * 0) and the two symmetric ones are skipped with the reason, also on the 5x5 toy where
 * channels_summed_symmetric passed by chance (G is one 32 x 32 tile, computed whole). */
static void asymmetric_gamma_gpu(void)
{
    const char *const *sets[] = {seed_names, small_names};
    for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
        char log[FILENAME_MAX];
        file_path(log, sizeof log, "asymmetric_table.log");
        const int rc = run_lesson_logged(sets[k], NULL, NULL, log);
        skip_without_gpu(rc);
        CHECK(rc == 0);
        CHECK(skip_lines(log, "factored_symmetric") == 1);
        CHECK(skip_lines(log, "channels_summed_symmetric") == 1);
        remove(log);
    }
}

/* The files' dimensions give the shape, and tensors of the sizes the op indexes in each
 * file set's layout; the sets name the same flags in the same order, and differ in rank. */
static void files_give_the_shape(void)
{
    size_t dim[COV_DIM_COUNT] = {[COV_DIM_B] = 2, [COV_DIM_CI] = 4, [COV_DIM_CO] = 3,
                                 [COV_DIM_H] = 9, [COV_DIM_W] = 8, [COV_DIM_HO] = 5,
                                 [COV_DIM_WO] = 4};
    struct conv_shape s;
    int culprit = -1;
    char why[256];
    CHECK(cov_op_shape_of_files(dim, &s, &culprit, why, sizeof why));
    CHECK(s.n == 2 && s.cin == 4 && s.cout == 3 && s.h == 9 && s.w == 8 && s.ksize == 5);
    for (int k = 0; k < COV_FILE_SET_COUNT; k++) {
        const struct op_file_set *set = &cov_file_sets[k];
        struct op_tensor t[OP_MAX_TENSORS];
        CHECK(set->file_count == cov_op_tensors(&s, set->layout, t));
        int same_ranks = 0;
        for (int i = 0; i < set->file_count; i++) {
            size_t count = 1;
            for (int d = 0; d < set->files[i].rank; d++)
                count *= dim[set->files[i].dim[d]];
            CHECK(count * sizeof(float) == t[i].bytes);
            CHECK(strcmp(set->files[i].flag, cov_file_sets[0].files[i].flag) == 0);
            same_ranks += set->files[i].rank == cov_file_sets[0].files[i].rank;
        }
        CHECK(k == 0 || same_ranks < set->file_count);
    }
    /* Ho x Wo: no square window, an even one (k = 4), larger than H, larger than W. */
    const size_t refused[][2] = {{5, 5}, {6, 5}, {10, 8}, {9, 9}};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        dim[COV_DIM_HO] = refused[i][0];
        dim[COV_DIM_WO] = refused[i][1];
        culprit = -1;
        CHECK(!cov_op_shape_of_files(dim, &s, &culprit, why, sizeof why));
        CHECK(culprit == COV_OUT && strstr(why, "Ho x Wo"));
    }
    dim[COV_DIM_H] = dim[COV_DIM_W] = MAX_KSIZE + 2; /* k = 33 */
    dim[COV_DIM_HO] = dim[COV_DIM_WO] = 1;
    CHECK(!cov_op_shape_of_files(dim, &s, &culprit, why, sizeof why));
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
    {"write_seed_toy_files", write_seed_toy_files},
    {"files_round_trip_cpu", files_round_trip_cpu},
    {"files_round_trip_gpu", files_round_trip_gpu},
    {"files_every_layout", files_every_layout},
    {"files_give_the_shape", files_give_the_shape},
    {"compact_files_every_layout", compact_files_every_layout},
    {"compact_files_cpu", compact_files_cpu},
    {"compact_files_round_trip_gpu", compact_files_round_trip_gpu},
    {"symmetric_variants_skip_asymmetric_gamma", symmetric_variants_skip_asymmetric_gamma},
    {"asymmetric_gamma_gpu", asymmetric_gamma_gpu},
};

UNIT_MAIN(cases)
