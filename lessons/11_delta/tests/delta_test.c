/* Lesson 11 on the host, no GPU needed: the frames load, the stem is what video.h
 * says, and the delta algorithm with carry-over (problem.c) keeps every frame's
 * output within its bound of the float64 gold, on the vtest frames and on 300 frames
 * of a slow drift, while the same algorithm dropping its sub-threshold changes fails
 * that bound. Tile masks are checked at image borders and on sizes that are not a
 * multiple of the tile. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "gold.h"
#include "problem.h"
#include "rng.h"
#include "unit.h"
#include "video.h"

#define ROUNDING 0x1.0p-24 /* u, the unit roundoff of float32 */
#define LAYER_SEED 3
#define TEST_CHANNELS 8  /* the vtest checks run the real frames at C = 8 ... */
#define TEST_DOWNSCALE 2 /* ... shrunk to 288x384, so float64 gold of 24 frames is quick */
/* Error over the last third of a sequence against the first third (frame 0 aside):
 * above this, the error grows with the frame index. */
#define GROWTH_LIMIT 2.0
#define SYNTHETIC_FRAMES 300
#define SYNTHETIC_DRIFT 0.05f /* pixels per frame: at most ~1.1 grey levels of change */
#define SYNTHETIC_NOISE 1.0f  /* grey levels */
/* The vtest frame sums that scripts/vtest_frames.py printed. */
#define FIRST_FRAME_SUM 52783000.0
#define LAST_FRAME_SUM 52438853.0

static void *alloc_or_exit(size_t bytes)
{
    return host_alloc(bytes, "a lesson 11 test array");
}

struct layer {
    struct conv_shape s;
    float *weights, *bias;
};

static struct layer make_layer(int h, int w, int c, int ksize, uint64_t seed)
{
    struct layer l = {
        .s = {.n = 1, .cin = c, .cout = c, .h = h, .w = w, .ksize = ksize, .bias = true}};
    l.weights = alloc_or_exit(weight_count(&l.s) * sizeof(float));
    l.bias = alloc_or_exit((size_t)c * sizeof(float));
    delta_layer_init(&l.s, seed, l.weights, l.bias);
    return l;
}

static void free_layer(struct layer *l)
{
    free(l->weights);
    free(l->bias);
}

/* The gold of every output element of a frame, and its magnitude. */
static void gold_frame(const struct layer *l, const float *x, double *ref, double *mag)
{
    const struct conv_shape *s = &l->s;
#pragma omp parallel for schedule(dynamic)
    for (int y = 0; y < s->h; y++)
        for (int xx = 0; xx < s->w; xx++)
            for (int co = 0; co < s->cout; co++) {
                const size_t at = nhwc_at(s->w, s->cout, y, xx, co);
                ref[at] =
                    gold_output_in(s, LAYOUT_NHWC, x, l->weights, l->bias, 0, co, y, xx, &mag[at]);
            }
}

/* The harness's float32 tolerance for one convolution (docs/harness.md): 8 sqrt(L+1) u
 * of the magnitude, L = cin * k^2 products plus the bias. */
static double fp32_rtol(const struct conv_shape *s)
{
    return 8 * sqrt((double)s->cin * s->ksize * s->ksize + 1) * ROUNDING;
}

/* How many of the n outputs y lie beyond rtol of their gold, relative to each one's
 * magnitude. */
static size_t outputs_off(const float *y, const double *ref, const double *mag, size_t n,
                          double rtol)
{
    size_t off = 0;
    for (size_t e = 0; e < n; e++)
        off += !(fabs(y[e] - ref[e]) <= rtol * mag[e]);
    return off;
}

typedef void (*detect_fn)(struct delta_cpu *st, const float *x, float threshold);

/* The broken variant: the real threshold step, after which every pixel forgets the
 * change it did not apply (x_ref = x): sub-threshold changes are dropped, not carried. */
static void detect_dropping(struct delta_cpu *st, const float *x, float threshold)
{
    delta_cpu_detect(st, x, threshold);
    memcpy(st->x_ref, x, input_count(&st->s) * sizeof(float));
}

/* Per frame of a run: the largest |y - gold|, the largest share of its allowance that
 * an element used (above 1: the bound fails) and the fraction of output tiles updated. */
struct run_report {
    int frames;
    double bound;
    double *max_error, *rel_l2, *worst_share, *updated;
};

static void free_report(struct run_report *r)
{
    free(r->max_error);
    free(r->rel_l2);
    free(r->worst_share);
    free(r->updated);
}

/* Runs the algorithm on the stem's output of every frame of seq and compares each
 * frame's output with its gold. An element may be off by the threshold's bound plus
 * its rounding allowance: the latest recomputation's (DELTA_RECOMPUTE, from an x_ref
 * within the threshold of x), or the sum of every frame's (DELTA_ACCUMULATE: each
 * frame adds conv(d), |d| <= |x| + |x_ref|, and rounds the sum once). */
static struct run_report run_sequence(const struct layer *l, const struct stem *stem,
                                      const struct frame_seq *seq, float threshold, int tile,
                                      enum delta_update_rule rule, detect_fn detect)
{
    const struct conv_shape *s = &l->s;
    const size_t n = input_count(s);
    const double rtol = fp32_rtol(s);
    struct run_report r = {.frames = seq->count,
                           .bound = delta_error_bound(s, l->weights, threshold)};
    r.max_error = alloc_or_exit(seq->count * sizeof(double));
    r.rel_l2 = alloc_or_exit(seq->count * sizeof(double));
    r.worst_share = alloc_or_exit(seq->count * sizeof(double));
    r.updated = alloc_or_exit(seq->count * sizeof(double));
    float *x = alloc_or_exit(n * sizeof(float));
    double *ref = alloc_or_exit(n * sizeof(double));
    double *mag = alloc_or_exit(n * sizeof(double));
    double *mag_before = alloc_or_exit(n * sizeof(double));
    double *allowance = alloc_or_exit(n * sizeof(double));
    struct delta_cpu st;
    delta_cpu_init(&st, s, l->weights, l->bias, tile, rule);
    for (int f = 0; f < seq->count; f++) {
        stem_apply(stem, frame_at(seq, f), s->h, s->w, x);
        gold_frame(l, x, ref, mag);
        if (f == 0) {
            delta_cpu_first(&st, x);
        } else {
            detect(&st, x, threshold);
            delta_cpu_apply(&st);
        }
        r.updated[f] = f == 0 ? 1 : delta_cpu_reached_share(&st);
        double worst = 0, share = 0, err2 = 0, ref2 = 0;
        for (size_t e = 0; e < n; e++) {
            /* x_ref is within the threshold of x, so the magnitude of a sum over x_ref
             * is at most the gold's magnitude plus the bound. */
            if (f == 0)
                allowance[e] = rtol * mag[e];
            else if (rule == DELTA_RECOMPUTE)
                allowance[e] = fmax(allowance[e], rtol * (mag[e] + r.bound));
            else
                allowance[e] += rtol * (mag[e] + mag_before[e] + 2 * r.bound) +
                                ROUNDING * (fabs(ref[e]) + r.bound + allowance[e]);
            const double err = fabs((double)st.y[e] - ref[e]);
            worst = err > worst ? err : worst;
            err2 += err * err;
            ref2 += ref[e] * ref[e];
            const double used = err / (r.bound + allowance[e]);
            share = !(used <= share) ? used : share; /* NaN counts as a failure */
        }
        r.max_error[f] = worst;
        r.rel_l2[f] = sqrt(err2 / ref2);
        r.worst_share[f] = share;
        double *swap = mag_before;
        mag_before = mag;
        mag = swap;
    }
    delta_cpu_free(&st);
    free(x);
    free(ref);
    free(mag);
    free(mag_before);
    free(allowance);
    return r;
}

static bool bound_held(const struct run_report *r)
{
    for (int f = 0; f < r->frames; f++)
        if (!(r->worst_share[f] <= 1))
            return false;
    return true;
}

/* A per-frame error's mean over the last third of the frames against the first third
 * (frame 0, computed densely, left out). */
static double growth(const struct run_report *r, const double *error)
{
    const int third = (r->frames - 1) / 3;
    double early = 0, late = 0;
    for (int f = 0; f < third; f++) {
        early += error[1 + f];
        late += error[r->frames - third + f];
    }
    return late / early;
}

/* Neither the largest error nor the relative L2 error grows with the frame index. */
static bool steady(const struct run_report *r)
{
    return growth(r, r->max_error) <= GROWTH_LIMIT && growth(r, r->rel_l2) <= GROWTH_LIMIT;
}

static void print_report(const char *what, const struct run_report *r, int every)
{
    printf("%s: bound %.3g, growth of the largest error %.2f, of the L2 error %.2f\n"
           "  frame  max |y - gold|  relative L2  share of allowance  tiles updated\n",
           what, r->bound, growth(r, r->max_error), growth(r, r->rel_l2));
    for (int f = 0; f < r->frames; f += every)
        printf("  %5d  %14.3g  %11.2e  %18.3f  %12.1f%%\n", f, r->max_error[f], r->rel_l2[f],
               r->worst_share[f], 100 * r->updated[f]);
}

static struct frame_seq vtest_or_fail(int downscale)
{
    struct frame_seq seq = {0};
    char err[1024];
    if (!vtest_read(VTEST_DIR, downscale, &seq, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        CHECK(!"the vtest frames load");
    }
    return seq;
}

static double frame_sum(const struct frame_seq *seq, int f)
{
    double sum = 0;
    for (size_t i = 0; i < (size_t)seq->h * seq->w; i++)
        sum += frame_at(seq, f)[i];
    return sum;
}

/* A sequence and the layer and stem it runs through. */
struct scene {
    struct frame_seq seq;
    struct layer l;
    struct stem stem;
};

static struct scene scene_of(struct frame_seq seq, int c)
{
    struct scene sc = {.seq = seq, .l = make_layer(seq.h, seq.w, c, 3, LAYER_SEED)};
    stem_init(&sc.stem, c, DELTA_STEM_SEED);
    return sc;
}

/* The real frames, shrunk 2x, at TEST_CHANNELS channels; false when they do not load. */
static bool vtest_scene(struct scene *sc)
{
    struct frame_seq seq = vtest_or_fail(TEST_DOWNSCALE);
    if (!seq.grey)
        return false;
    *sc = scene_of(seq, TEST_CHANNELS);
    return true;
}

/* 300 frames of a pattern drifting by less than the threshold per frame, on a frame
 * size that is no multiple of the tile, at 6 channels. */
static struct scene drifting_scene(void)
{
    struct frame_seq seq;
    synthetic_sequence(SYNTHETIC_FRAMES, 43, 58, SYNTHETIC_DRIFT, SYNTHETIC_NOISE, 5, &seq);
    return scene_of(seq, 6);
}

static void free_scene(struct scene *sc)
{
    stem_free(&sc->stem);
    free_layer(&sc->l);
    frame_seq_free(&sc->seq);
}

/* Whether a run kept its bound on every frame, and whether its error stayed steady. */
struct verdict {
    bool held, steady;
};

/* Runs the scene with both update rules at the default tile, printing every `every`th
 * frame of each run. */
static void run_both_rules(const struct scene *sc, float threshold, detect_fn detect,
                           const char *what, int every, struct verdict v[2])
{
    const enum delta_update_rule rules[] = {DELTA_RECOMPUTE, DELTA_ACCUMULATE};
    const char *names[] = {"recompute", "accumulate"};
    for (int i = 0; i < 2; i++) {
        struct run_report r = run_sequence(&sc->l, &sc->stem, &sc->seq, threshold,
                                           DELTA_DEFAULT_TILE, rules[i], detect);
        char title[128];
        snprintf(title, sizeof title, "%s, %s", what, names[i]);
        print_report(title, &r, every);
        v[i].held = bound_held(&r);
        v[i].steady = steady(&r);
        free_report(&r);
    }
}

static void frames_load(void)
{
    struct frame_seq seq = vtest_or_fail(1);
    if (!seq.grey)
        return;
    CHECK(seq.count == VTEST_FRAMES && seq.h == VTEST_HEIGHT && seq.w == VTEST_WIDTH);
    CHECK(frame_sum(&seq, 0) == FIRST_FRAME_SUM);
    CHECK(frame_sum(&seq, VTEST_FRAMES - 1) == LAST_FRAME_SUM);
    size_t fractional = 0, outside = 0;
    for (size_t i = 0; i < (size_t)seq.count * seq.h * seq.w; i++) {
        fractional += seq.grey[i] != floorf(seq.grey[i]);
        outside += seq.grey[i] < 0 || seq.grey[i] > GREY_MAX;
    }
    CHECK(fractional == 0 && outside == 0);
    frame_seq_free(&seq);

    char err[1024];
    CHECK(!vtest_read("/nonexistent-vtest", 1, &seq, err, sizeof err));
    CHECK(strstr(err, "vtest_200.pgm") && strstr(err, "data/vtest.tar.xz"));
    CHECK(!vtest_read(VTEST_DIR, 3, &seq, err, sizeof err));
}

static void shrink_is_exact(void)
{
    struct frame_seq full = vtest_or_fail(1), half = vtest_or_fail(2);
    if (!full.grey || !half.grey)
        return;
    CHECK(half.h == VTEST_HEIGHT / 2 && half.w == VTEST_WIDTH / 2);
    size_t wrong = 0;
    for (int f = 0; f < VTEST_FRAMES; f += 7)
        for (int y = 0; y < half.h; y++)
            for (int x = 0; x < half.w; x++) {
                const float *g = frame_at(&full, f);
                const double mean =
                    ((double)g[(2 * y) * full.w + 2 * x] + g[(2 * y) * full.w + 2 * x + 1] +
                     g[(2 * y + 1) * full.w + 2 * x] + g[(2 * y + 1) * full.w + 2 * x + 1]) /
                    4;
                wrong += frame_at(&half, f)[y * half.w + x] != mean;
            }
    CHECK(wrong == 0);
    CHECK(frame_sum(&half, 0) == FIRST_FRAME_SUM / 4);
    frame_seq_free(&full);
    frame_seq_free(&half);
}

static void stem_is_fixed_relu_and_1_lipschitz(void)
{
    const int c = 16, h = 23, w = 31;
    struct stem a, b;
    stem_init(&a, c, DELTA_STEM_SEED);
    stem_init(&b, c, DELTA_STEM_SEED);
    CHECK(memcmp(a.weights, b.weights, (size_t)c * 9 * sizeof(float)) == 0);
    for (int ch = 0; ch < c; ch++) {
        double l1 = 0;
        for (int t = 0; t < 9; t++)
            l1 += fabs(a.weights[ch * 9 + t]);
        CHECK(fabs(l1 - 1) < 1e-6);
        CHECK(fabsf(a.bias[ch]) <= STEM_BIAS);
    }
    /* Two grey images, the second a random change of the first. */
    struct rng r = rng_seeded(7);
    float *g1 = alloc_or_exit((size_t)h * w * sizeof(float));
    float *g2 = alloc_or_exit((size_t)h * w * sizeof(float));
    float *x1 = alloc_or_exit((size_t)h * w * c * sizeof(float));
    float *x2 = alloc_or_exit((size_t)h * w * c * sizeof(float));
    for (int i = 0; i < h * w; i++) {
        g1[i] = (float)rng_below(&r, 256);
        g2[i] = rng_uniform(&r) < 0.3 ? (float)rng_below(&r, 256) : g1[i];
    }
    stem_apply(&a, g1, h, w, x1);
    stem_apply(&a, g2, h, w, x2);
    size_t negative = 0, too_far = 0, zeros = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float largest = 0; /* the largest grey change under the 3x3 window */
            for (int i = -1; i <= 1; i++)
                for (int j = -1; j <= 1; j++)
                    if (y + i >= 0 && y + i < h && x + j >= 0 && x + j < w)
                        largest = fmaxf(largest,
                                        fabsf(g1[(y + i) * w + x + j] - g2[(y + i) * w + x + j]));
            for (int ch = 0; ch < c; ch++) {
                const size_t at = nhwc_at(w, c, y, x, ch);
                negative += x1[at] < 0;
                zeros += x1[at] == 0;
                too_far += fabsf(x1[at] - x2[at]) > largest / GREY_MAX + 1e-6f;
            }
        }
    CHECK(negative == 0 && too_far == 0);
    CHECK(zeros > 0 && zeros < (size_t)h * w * c); /* ReLU cuts some, not all */
    /* A white image: an interior output is relu(bias + sum of the weights). */
    for (int i = 0; i < h * w; i++)
        g1[i] = GREY_MAX;
    stem_apply(&a, g1, h, w, x1);
    for (int ch = 0; ch < c; ch++) {
        float sum = a.bias[ch];
        for (int t = 0; t < 9; t++)
            sum += a.weights[ch * 9 + t];
        CHECK(fabsf(x1[nhwc_at(w, c, 5, 7, ch)] - fmaxf(sum, 0)) < 1e-6f);
    }
    stem_free(&a);
    stem_free(&b);
    free(g1);
    free(g2);
    free(x1);
    free(x2);
}

/* Frame 0 is the dense float32 layer: within fp32 tolerance of gold everywhere, and
 * one output moved by one product's worth (1/L of its magnitude) is caught. */
static void first_frame_matches_gold(void)
{
    struct scene sc;
    if (!vtest_scene(&sc))
        return;
    const struct layer *l = &sc.l;
    const size_t n = input_count(&l->s);
    float *x = alloc_or_exit(n * sizeof(float));
    double *ref = alloc_or_exit(n * sizeof(double)), *mag = alloc_or_exit(n * sizeof(double));
    stem_apply(&sc.stem, frame_at(&sc.seq, 0), sc.seq.h, sc.seq.w, x);
    gold_frame(l, x, ref, mag);
    struct delta_cpu st;
    delta_cpu_init(&st, &l->s, l->weights, l->bias, DELTA_DEFAULT_TILE, DELTA_ACCUMULATE);
    delta_cpu_frame(&st, x, DELTA_DEFAULT_THRESHOLD, 0);
    CHECK(memcmp(st.x_ref, x, n * sizeof(float)) == 0);
    const double rtol = fp32_rtol(&l->s);
    CHECK(outputs_off(st.y, ref, mag, n, rtol) == 0);
    const size_t at = nhwc_at(l->s.w, l->s.cout, 100, 200, 5);
    st.y[at] += (float)(mag[at] / (l->s.cin * 9));
    CHECK(!(fabs(st.y[at] - ref[at]) <= rtol * mag[at]));
    delta_cpu_free(&st);
    free(x);
    free(ref);
    free(mag);
    free_scene(&sc);
}

/* The runs of both update rules whose verdict is checked: the title a run prints (its
 * case names it by it), the scene (the real frames, else the drift), the threshold and
 * detector, how often it prints, and the verdict both rules must reach. At threshold 0
 * every change is applied: the bound holds, and steadiness is not asked. */
static const struct bound_run {
    const char *what;
    bool real_frames;
    float threshold;
    detect_fn detect;
    int every;
    bool held;
    int steady; /* 1 or 0 as expected, -1 where it is not checked */
} bound_runs[] = {
    {"threshold 0", true, 0, delta_cpu_detect, 1, true, -1},
    {"vtest", true, DELTA_DEFAULT_THRESHOLD, delta_cpu_detect, 1, true, 1},
    {"drift", false, DELTA_DEFAULT_THRESHOLD, delta_cpu_detect, 25, true, 1},
    {"drift, dropping", false, DELTA_DEFAULT_THRESHOLD, detect_dropping, 25, false, 0},
};

/* Runs the bound run of that title and checks its verdict. */
static void check_bound_run(const char *what)
{
    const struct bound_run *b = NULL;
    for (size_t i = 0; i < sizeof bound_runs / sizeof bound_runs[0]; i++)
        if (strcmp(bound_runs[i].what, what) == 0)
            b = &bound_runs[i];
    CHECK(b != NULL); /* a misspelt title would check nothing */
    if (!b)
        return;
    struct scene sc;
    if (!b->real_frames)
        sc = drifting_scene();
    else if (!vtest_scene(&sc))
        return;
    struct verdict v[2];
    run_both_rules(&sc, b->threshold, b->detect, b->what, b->every, v);
    for (int i = 0; i < 2; i++) {
        CHECK(v[i].held == b->held);
        CHECK(b->steady < 0 || v[i].steady == (b->steady == 1));
    }
    free_scene(&sc);
}

static void threshold_zero_equals_dense_vtest(void)
{
    check_bound_run("threshold 0");
}

static void bound_holds_vtest(void)
{
    check_bound_run("vtest");
}

static void bound_holds_synthetic_300(void)
{
    check_bound_run("drift");
}

/* The checks above can fail: on the drift, the broken variant breaks the bound and
 * its error grows. On the 24 real frames the loose bound still holds, but the largest
 * error of the last frame is already several times that of carrying the changes. */
static void dropping_deltas_fails_the_bound(void)
{
    check_bound_run("drift, dropping");
    struct scene sc;
    if (!vtest_scene(&sc))
        return;
    struct run_report carried =
        run_sequence(&sc.l, &sc.stem, &sc.seq, DELTA_DEFAULT_THRESHOLD, DELTA_DEFAULT_TILE,
                     DELTA_ACCUMULATE, delta_cpu_detect);
    struct run_report dropped = run_sequence(&sc.l, &sc.stem, &sc.seq, DELTA_DEFAULT_THRESHOLD,
                                             DELTA_DEFAULT_TILE, DELTA_ACCUMULATE, detect_dropping);
    print_report("vtest, dropping, accumulate", &dropped, 1);
    const int last = sc.seq.count - 1;
    printf("vtest, frame %d: largest error %.3g dropping, %.3g carrying (%.1fx); relative L2 "
           "%.2e and %.2e\n",
           last, dropped.max_error[last], carried.max_error[last],
           dropped.max_error[last] / carried.max_error[last], dropped.rel_l2[last],
           carried.rel_l2[last]);
    CHECK(dropped.max_error[last] > 2 * carried.max_error[last]);
    free_report(&carried);
    free_report(&dropped);
    free_scene(&sc);
}

/* One frame in which the input x[at] moves by step: the real detector (st) and the
 * dropping one (drop) each detect and apply it. */
static void step_pixel(struct delta_cpu *st, struct delta_cpu *drop, float *x, size_t at,
                       float step, float threshold)
{
    x[at] += step;
    delta_cpu_detect(st, x, threshold);
    delta_cpu_apply(st);
    detect_dropping(drop, x, threshold);
    delta_cpu_apply(drop);
}

/* One pixel changes by 0.6 of the threshold on each of two frames: the first change
 * is carried (nothing updated), the second makes 1.2 thresholds and is applied whole,
 * so the output is the dense layer of the new input again. Dropping would apply 0.6. */
static void carry_over_fires_late(void)
{
    const float threshold = 0.1f, step = 0.06f;
    struct layer l = make_layer(10, 12, 2, 3, LAYER_SEED);
    const size_t n = input_count(&l.s);
    struct rng r = rng_seeded(9);
    float *x = alloc_or_exit(n * sizeof(float));
    double *ref = alloc_or_exit(n * sizeof(double)), *mag = alloc_or_exit(n * sizeof(double));
    fill_uniform(x, n, 0, 1, &r);
    struct delta_cpu st, drop;
    delta_cpu_init(&st, &l.s, l.weights, l.bias, DELTA_UNIT, DELTA_ACCUMULATE);
    delta_cpu_init(&drop, &l.s, l.weights, l.bias, DELTA_UNIT, DELTA_ACCUMULATE);
    delta_cpu_first(&st, x);
    delta_cpu_first(&drop, x);
    float *y0 = alloc_or_exit(n * sizeof(float));
    memcpy(y0, st.y, n * sizeof(float));
    const size_t at = nhwc_at(l.s.w, l.s.cin, 3, 4, 1);

    step_pixel(&st, &drop, x, at, step, threshold);
    CHECK(st.tile_changed[0] == 0 && st.pixel_active[3 * l.s.w + 4] == 0);
    CHECK(memcmp(st.y, y0, n * sizeof(float)) == 0); /* nothing was updated */
    CHECK(st.x_ref[at] != x[at]);                    /* the change is carried */

    step_pixel(&st, &drop, x, at, step, threshold);
    CHECK(st.tile_changed[0] == 1 && st.pixel_active[3 * l.s.w + 4] == 1);
    CHECK(fabsf(st.d[at] - 2 * step) < 1e-6f);
    CHECK(memcmp(st.x_ref, x, n * sizeof(float)) == 0);
    gold_frame(&l, x, ref, mag);
    /* One dense frame plus one delta of rounding: 3 fresh convolutions' worth. */
    const double rtol = 3 * fp32_rtol(&l.s);
    CHECK(outputs_off(st.y, ref, mag, n, rtol) == 0);
    /* The neighbours of the pixel miss the first 0.06. */
    CHECK(outputs_off(drop.y, ref, mag, n, rtol) > 0);
    delta_cpu_free(&st);
    delta_cpu_free(&drop);
    free_layer(&l);
    free(x);
    free(y0);
    free(ref);
    free(mag);
}

/* Single-pixel changes at the corners, on a tile boundary and on the cut last tiles of
 * a 37x29 frame with 8x8 tiles (5 x 4 tiles, the last row and column of tiles cut):
 * exactly their tiles change; every output whose window holds a changed pixel lies in
 * an updated tile; no tile beyond the reach is updated; and the output equals the
 * dense layer of the new frame, with both update rules, for k = 1, 3, 5 and 7. */
static void tile_masks_at_borders(void)
{
    const int h = 37, w = 29, c = 3, tile = DELTA_UNIT;
    const int changed[][2] = {{0, 0}, {36, 28}, {15, 16}, {36, 0}, {8, 27}};
    const int count = sizeof changed / sizeof changed[0];
    const int ksizes[] = {1, 3, 5, 7};
    const enum delta_update_rule rules[] = {DELTA_RECOMPUTE, DELTA_ACCUMULATE};
    for (int ki = 0; ki < 4; ki++)
        for (int ri = 0; ri < 2; ri++) {
            struct layer l = make_layer(h, w, c, ksizes[ki], LAYER_SEED + ki);
            const int k = ksizes[ki], r = k / 2, reach = delta_reach(k, tile);
            CHECK(reach == (k == 1 ? 0 : 1));
            const size_t n = input_count(&l.s);
            struct rng g = rng_seeded(21);
            float *x = alloc_or_exit(n * sizeof(float));
            double *ref = alloc_or_exit(n * sizeof(double));
            double *mag = alloc_or_exit(n * sizeof(double));
            fill_uniform(x, n, 0, 1, &g);
            struct delta_cpu st;
            delta_cpu_init(&st, &l.s, l.weights, l.bias, tile, rules[ri]);
            CHECK(st.tiles_y == 5 && st.tiles_x == 4);
            delta_cpu_first(&st, x);
            for (int i = 0; i < count; i++)
                x[nhwc_at(w, c, changed[i][0], changed[i][1], i % c)] += 0.5f;
            delta_cpu_detect(&st, x, 0.1f);
            delta_cpu_apply(&st);

            uint8_t expect_tiles[5 * 4] = {0};
            for (int i = 0; i < count; i++)
                expect_tiles[changed[i][0] / tile * 4 + changed[i][1] / tile] = 1;
            CHECK(memcmp(st.tile_changed, expect_tiles, sizeof expect_tiles) == 0);
            size_t active = 0;
            for (int p = 0; p < h * w; p++)
                active += st.pixel_active[p];
            CHECK(active == (size_t)count);

            size_t missed = 0, beyond = 0;
            for (int ty = 0; ty < 5; ty++)
                for (int tx = 0; tx < 4; tx++) {
                    const bool updated = delta_tile_reached(st.tile_changed, 5, 4, reach, ty, tx);
                    bool needed = false, near = false;
                    for (int i = 0; i < count; i++) {
                        const int py = changed[i][0], px = changed[i][1];
                        /* The tile holds an output within r of the pixel. */
                        needed = needed || (py + r >= ty * tile && py - r < (ty + 1) * tile &&
                                            px + r >= tx * tile && px - r < (tx + 1) * tile);
                        near =
                            near || (abs(py / tile - ty) <= reach && abs(px / tile - tx) <= reach);
                    }
                    missed += needed && !updated;
                    beyond += updated && !near;
                }
            CHECK(missed == 0 && beyond == 0);

            gold_frame(&l, x, ref, mag);
            const size_t off = outputs_off(st.y, ref, mag, n, 3 * fp32_rtol(&l.s));
            if (off)
                fprintf(stderr, "k=%d rule %d: %zu outputs off\n", k, ri, off);
            CHECK(off == 0);
            delta_cpu_free(&st);
            free_layer(&l);
            free(x);
            free(ref);
            free(mag);
        }
}

/* What the lesson's layer sees on the real frames, at the presets' channel counts and
 * sizes: per threshold, the mean fraction over the 23 later frames of input tiles that
 * changed and of output tiles that must be updated (those a changed tile reaches),
 * for 8, 16 and 32-pixel tiles. The page's predictions start from these numbers. */
static void change_fractions_vtest(void)
{
    const float thresholds[] = {0, 0.01f, 0.02f, 0.05f};
    const int tiles[] = {8, 16, 32};
    enum { THRESHOLDS = 4, TILES = 3, AT_DEFAULT = 2 /* thresholds[2] */ };
    for (int p = 0; p < DELTA_PRESET_COUNT; p++) {
        const struct conv_shape *s = &delta_presets[p].shape;
        struct frame_seq seq = vtest_or_fail(delta_downscale(s));
        if (!seq.grey)
            return;
        struct stem stem;
        stem_init(&stem, s->cin, DELTA_STEM_SEED);
        struct layer l = make_layer(s->h, s->w, s->cin, s->ksize, LAYER_SEED);
        float *x = alloc_or_exit(input_count(s) * sizeof(float));
        struct delta_cpu st[THRESHOLDS];
        double changed[THRESHOLDS][TILES] = {{0}}, reached[THRESHOLDS][TILES] = {{0}};
        double pixels[THRESHOLDS] = {0};
        for (int t = 0; t < THRESHOLDS; t++)
            delta_cpu_init(&st[t], s, l.weights, l.bias, DELTA_DEFAULT_TILE, DELTA_ACCUMULATE);
        for (int f = 0; f < seq.count; f++) {
            stem_apply(&stem, frame_at(&seq, f), s->h, s->w, x);
            for (int t = 0; t < THRESHOLDS; t++) {
                if (f == 0) { /* only the threshold step runs here: no output is computed */
                    memcpy(st[t].x_ref, x, input_count(s) * sizeof(float));
                    continue;
                }
                delta_cpu_detect(&st[t], x, thresholds[t]);
                size_t active = 0;
                for (int p = 0; p < s->h * s->w; p++)
                    active += st[t].pixel_active[p];
                pixels[t] += (double)active / (s->h * s->w) / (seq.count - 1);
                for (int ti = 0; ti < TILES; ti++) {
                    const int tile = tiles[ti];
                    const int ty_n = delta_tiles(s->h, tile), tx_n = delta_tiles(s->w, tile);
                    uint8_t *flags = alloc_or_exit((size_t)ty_n * tx_n);
                    memset(flags, 0, (size_t)ty_n * tx_n);
                    for (int y = 0; y < s->h; y++)
                        for (int xx = 0; xx < s->w; xx++)
                            if (st[t].pixel_active[y * s->w + xx])
                                flags[y / tile * tx_n + xx / tile] = 1;
                    if (tile == DELTA_DEFAULT_TILE)
                        CHECK(memcmp(flags, st[t].tile_changed, (size_t)ty_n * tx_n) == 0);
                    int any = 0, near = 0;
                    for (int ty = 0; ty < ty_n; ty++)
                        for (int tx = 0; tx < tx_n; tx++) {
                            any += flags[ty * tx_n + tx];
                            near += delta_tile_reached(flags, ty_n, tx_n,
                                                       delta_reach(s->ksize, tile), ty, tx);
                        }
                    changed[t][ti] += (double)any / (ty_n * tx_n) / (seq.count - 1);
                    reached[t][ti] += (double)near / (ty_n * tx_n) / (seq.count - 1);
                    free(flags);
                }
            }
        }
        printf("%s: mean over frames 1-23, %% of pixels active, %% of tiles changed / to update\n",
               delta_presets[p].name);
        printf("  threshold  pixels     8x8 tiles       16x16 tiles      32x32 tiles\n");
        for (int t = 0; t < THRESHOLDS; t++) {
            printf("  %9.2f  %6.1f", thresholds[t], 100 * pixels[t]);
            for (int ti = 0; ti < TILES; ti++)
                printf("   %5.1f / %5.1f ", 100 * changed[t][ti], 100 * reached[t][ti]);
            printf("\n");
            /* More threshold, fewer tiles; bigger tiles, a larger share. */
            for (int ti = 0; ti < TILES; ti++) {
                if (t > 0)
                    CHECK(reached[t][ti] <= reached[t - 1][ti]);
                if (ti > 0)
                    CHECK(reached[t][ti - 1] <= reached[t][ti]);
                CHECK(changed[t][ti] <= reached[t][ti]);
            }
        }
        /* At the default threshold a real share of the frame is left alone. */
        CHECK(thresholds[AT_DEFAULT] == DELTA_DEFAULT_THRESHOLD);
        for (int ti = 0; ti < TILES; ti++)
            if (tiles[ti] == DELTA_DEFAULT_TILE)
                CHECK(reached[AT_DEFAULT][ti] > 0.05 && reached[AT_DEFAULT][ti] < 0.6);
        for (int t = 0; t < THRESHOLDS; t++)
            delta_cpu_free(&st[t]);
        stem_free(&stem);
        free_layer(&l);
        free(x);
        frame_seq_free(&seq);
    }
}

static void state_layout(void)
{
    const int h = 37, w = 29, c = 5, k = 3, tile = 16;
    const size_t frame = (size_t)h * w * c * sizeof(float);
    const size_t tiles = (size_t)3 * 2;
    /* 2 chunks of 4 input channels x 9 taps x 4 x 64 output channels. */
    const size_t weights = delta_arranged_weights(c, k) * sizeof(float);
    CHECK(weights == (size_t)2 * 9 * 4 * 64 * sizeof(float));
    const struct delta_state_layout dense = delta_state_layout(DELTA_DENSE, h, w, c, k, tile);
    CHECK(dense.weights == 0 && dense.bytes >= weights);
    const enum delta_variant sparse[] = {DELTA_TILE_MASK, DELTA_UPDATE, DELTA_COMPACT};
    for (int v = 0; v < 3; v++) {
        const struct delta_state_layout l = delta_state_layout(sparse[v], h, w, c, k, tile);
        const bool delta = sparse[v] != DELTA_TILE_MASK, list = sparse[v] == DELTA_COMPACT;
        /* Parts in order, the weights first, each aligned and large enough, none
         * overlapping. */
        const size_t starts[] = {l.weights,      l.x_ref, l.d,          l.pixel_active,
                                 l.tile_changed, l.list,  l.list_count, l.bytes};
        const size_t sizes[] = {weights,
                                frame,
                                delta ? frame : 0,
                                delta ? (size_t)h * w : 0,
                                tiles,
                                list ? tiles * sizeof(int) : 0,
                                list ? sizeof(int) : 0};
        CHECK(l.weights == 0);
        for (int i = 0; i < 7; i++) {
            CHECK(starts[i] % 256 == 0);
            CHECK(starts[i] + sizes[i] <= starts[i + 1]);
        }
    }
    for (int p = 0; p < DELTA_PRESET_COUNT; p++) {
        const struct conv_shape *s = &delta_presets[p].shape;
        printf("%-10s state bytes at %d-pixel tiles: tile_mask %.1f MB, delta_update %.1f MB, "
               "delta_compact %.1f MB\n",
               delta_presets[p].name, DELTA_DEFAULT_TILE,
               delta_state_layout(DELTA_TILE_MASK, s->h, s->w, s->cin, s->ksize, DELTA_DEFAULT_TILE)
                       .bytes /
                   1e6,
               delta_state_layout(DELTA_UPDATE, s->h, s->w, s->cin, s->ksize, DELTA_DEFAULT_TILE)
                       .bytes /
                   1e6,
               delta_state_layout(DELTA_COMPACT, s->h, s->w, s->cin, s->ksize, DELTA_DEFAULT_TILE)
                       .bytes /
                   1e6);
    }
}

static void rejects_bad_shapes(void)
{
    const struct conv_shape good = {
        .n = 1, .cin = 64, .cout = 64, .h = 576, .w = 768, .ksize = 3, .bias = true};
    CHECK(delta_shape_problem(&good, 16) == NULL);
    CHECK(delta_shape_problem(&good, 8) == NULL);
    /* The good shape with one thing changed: each is refused. */
    struct conv_shape bad[5] = {good, good, good, good, good};
    bad[0].n = 2;
    bad[1].cout = 32;
    bad[2].ksize = 4;
    bad[3].ksize = 9;
    bad[4].h = 0;
    for (int i = 0; i < 5; i++)
        CHECK(delta_shape_problem(&bad[i], 16) != NULL);
    struct conv_shape s = good;
    s.cin = s.cout = 8192;
    CHECK(strstr(delta_shape_problem(&s, 16), "2^31") != NULL);
    const char *why = delta_shape_problem(&good, 12);
    CHECK(why && strstr(why, "multiple of 8"));
    CHECK(delta_shape_problem(&good, 0) != NULL);
    CHECK(delta_threshold_problem(0) == NULL && delta_threshold_problem(0.5f) == NULL);
    CHECK(delta_threshold_problem(-0.01f) != NULL);
    CHECK(delta_threshold_problem(NAN) != NULL && delta_threshold_problem(INFINITY) != NULL);
}

/* The proposed presets: the vtest frames at 1x and 2x down, the same 32.6 GFLOP per
 * frame on both, and their minimum traffic per dense frame. */
static void preset_sizes(void)
{
    const char *names[] = {"vtest-c64", "vtest-c128"};
    const int channels[] = {64, 128}, downscale[] = {1, 2};
    for (int p = 0; p < DELTA_PRESET_COUNT; p++) {
        const struct conv_shape *s = &delta_presets[p].shape;
        CHECK(strcmp(delta_presets[p].name, names[p]) == 0);
        CHECK(s->cin == channels[p] && s->cout == channels[p] && s->ksize == 3 && s->bias);
        CHECK(delta_downscale(s) == downscale[p]);
        CHECK(delta_shape_problem(s, DELTA_DEFAULT_TILE) == NULL);
        CHECK(fabs(conv_flops(s) - 32.6e9) < 0.05e9);
        printf("%-10s %dx%d, %d channels: %.2f GFLOP, %.1f MB minimum per dense frame\n", names[p],
               s->h, s->w, s->cin, conv_flops(s) / 1e9, conv_min_bytes(s) / 1e6);
    }
    const struct conv_shape odd = {.n = 1, .cin = 4, .cout = 4, .h = 100, .w = 100, .ksize = 3};
    CHECK(delta_downscale(&odd) == 0);
}

/* The op's per-frame check (problem.c), fed the host algorithm's outputs: it passes
 * them for the variant kind they are, and fails a NaN, a sparse output offered as
 * dense (or the dense truth offered as sparse) and one value nudged past rounding. */
static bool op_check_passes(const struct conv_shape *s, const double *param, enum delta_kind kind,
                            int frame, void *const *before, float *out)
{
    const struct op_variant v = {.name = "test", .kind = kind};
    void *after[DELTA_TENSOR_COUNT] = {[DELTA_OUT] = out};
    const struct op_check c = {.shape = s,
                               .param = param,
                               .variant = &v,
                               .frame = frame,
                               .before = before,
                               .after = after};
    return delta_op_check(&c).pass;
}

static void op_check_can_fail(void)
{
    const struct conv_shape s = {
        .n = 1, .cin = 8, .cout = 8, .h = 21, .w = 27, .ksize = 3, .bias = true};
    const double param[DELTA_PARAM_COUNT] = {[DELTA_THRESHOLD] = 0.02, [DELTA_TILE] = 8};
    CHECK(delta_op_shape_problem(&s, param) == NULL);
    struct op_tensor t[DELTA_TENSOR_COUNT];
    CHECK(delta_op_tensors(&s, 0, t) == DELTA_TENSOR_COUNT);
    void *tensor[DELTA_TENSOR_COUNT];
    for (int i = 0; i < DELTA_TENSOR_COUNT; i++)
        tensor[i] = alloc_or_exit(t[i].bytes);
    char err[512];
    CHECK(delta_op_draw_from(VTEST_DIR, &s, param, LAYER_SEED, tensor, err, sizeof err));
    CHECK(isnan(((float *)tensor[DELTA_OUT])[0]));
    const size_t n = input_count(&s);
    const float *frames = tensor[DELTA_FRAMES];
    float *truth = alloc_or_exit(n * sizeof(float));
    struct delta_cpu st;
    delta_cpu_init(&st, &s, tensor[DELTA_WEIGHTS], tensor[DELTA_BIAS], 8, DELTA_ACCUMULATE);
    int carried_frames = 0;
    for (int f = 0; f < delta_op_frames(&s); f++) {
        const float *x = frames + (size_t)f * n;
        delta_cpu_frame(&st, x, (float)param[DELTA_THRESHOLD], f);
        CHECK(op_check_passes(&s, param, DELTA_KIND_ACCUMULATE, f, tensor, st.y));
        for (int y = 0; y < s.h; y++)
            for (int xx = 0; xx < s.w; xx++)
                for (int co = 0; co < s.cout; co++)
                    truth[nhwc_at(s.w, s.cout, y, xx, co)] =
                        (float)gold_output_in(&s, LAYOUT_NHWC, x, tensor[DELTA_WEIGHTS],
                                              tensor[DELTA_BIAS], 0, co, y, xx, NULL);
        CHECK(op_check_passes(&s, param, DELTA_KIND_DENSE, f, tensor, truth));
        if (f == 0 || memcmp(st.x_ref, x, n * sizeof(float)) == 0)
            continue; /* nothing carried over: the two answers agree */
        carried_frames++;
        CHECK(!op_check_passes(&s, param, DELTA_KIND_DENSE, f, tensor, st.y));
        CHECK(!op_check_passes(&s, param, DELTA_KIND_ACCUMULATE, f, tensor, truth));
        const float kept = st.y[n / 2];
        st.y[n / 2] = NAN;
        CHECK(!op_check_passes(&s, param, DELTA_KIND_ACCUMULATE, f, tensor, st.y));
        st.y[n / 2] = kept + 1e-2f; /* past 47 frames of rounding at C = 8 (1.4e-3) */
        CHECK(!op_check_passes(&s, param, DELTA_KIND_ACCUMULATE, f, tensor, st.y));
        st.y[n / 2] = kept;
    }
    CHECK(carried_frames > 0);
    delta_cpu_free(&st);
    free(truth);
    for (int i = 0; i < DELTA_TENSOR_COUNT; i++)
        free(tensor[i]);
}

static const struct unit_case cases[] = {
    {"frames_load", frames_load},
    {"shrink_is_exact", shrink_is_exact},
    {"stem_is_fixed_relu_and_1_lipschitz", stem_is_fixed_relu_and_1_lipschitz},
    {"first_frame_matches_gold", first_frame_matches_gold},
    {"threshold_zero_equals_dense_vtest", threshold_zero_equals_dense_vtest},
    {"bound_holds_vtest", bound_holds_vtest},
    {"bound_holds_synthetic_300", bound_holds_synthetic_300},
    {"dropping_deltas_fails_the_bound", dropping_deltas_fails_the_bound},
    {"carry_over_fires_late", carry_over_fires_late},
    {"tile_masks_at_borders", tile_masks_at_borders},
    {"change_fractions_vtest", change_fractions_vtest},
    {"state_layout", state_layout},
    {"rejects_bad_shapes", rejects_bad_shapes},
    {"preset_sizes", preset_sizes},
    {"op_check_can_fail", op_check_can_fail},
};

UNIT_MAIN(cases)
