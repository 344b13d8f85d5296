/* Lesson 11's problem (problem.h): the layer (presets, checks, the state layout), the
 * delta algorithm on the host, float32 (the statement of what every GPU variant
 * computes, testable without a GPU), and the op the harness runs: the frames, the
 * per-frame check against the float64 gold, the work a variant skips. */
#include "problem.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "gold.h"
#include "rng.h"
#include "video.h"

/* Parts of the state start on this boundary, so every part is aligned for any load. */
#define STATE_ALIGN 256

const struct conv_preset delta_presets[DELTA_PRESET_COUNT] = {
    {"vtest-c64",
     "vtest video through a 1->64 stem: 64 -> 64 channels, 576x768, 3x3, 24 frames",
     {1, 64, 64, VTEST_HEIGHT, VTEST_WIDTH, 3, true}},
    {"vtest-c128",
     "vtest shrunk 2x through a 1->128 stem: 128 -> 128 channels, 288x384, 3x3",
     {1, 128, 128, VTEST_HEIGHT / 2, VTEST_WIDTH / 2, 3, true}},
};

int delta_downscale(const struct conv_shape *s)
{
    for (int f = 1; f <= 2; f++)
        if (s->h * f == VTEST_HEIGHT && s->w * f == VTEST_WIDTH)
            return f;
    return 0;
}

const char *delta_shape_problem(const struct conv_shape *s, int tile)
{
    if (s->n != 1)
        return "the video layer runs on one frame at a time: batch must be 1";
    if (s->cin != s->cout || s->cin < 1)
        return "the video layer maps C channels to C channels: cin must equal cout, at least 1";
    if (s->h < 1 || s->w < 1)
        return "the frame size must be at least 1x1";
    if (s->ksize < 1 || s->ksize % 2 == 0 || s->ksize > DELTA_MAX_KSIZE)
        return "the filter size must be odd, from 1 to 7";
    if (tile < DELTA_UNIT || tile % DELTA_UNIT != 0)
        return "the tile size must be a positive multiple of 8 (the kernels' 8x8 units)";
    const double frame = (double)s->h * s->w * s->cin;
    const double weights = (double)s->cout * s->ksize * s->ksize * s->cin;
    if (frame > INT32_MAX || weights > INT32_MAX)
        return "a frame or the weights would pass 2^31 elements (32-bit indexing)";
    return NULL;
}

const char *delta_threshold_problem(float threshold)
{
    if (!(threshold >= 0) || isinf(threshold))
        return "the threshold must be a finite number >= 0";
    return NULL;
}

static size_t aligned(size_t bytes)
{
    return (bytes + STATE_ALIGN - 1) / STATE_ALIGN * STATE_ALIGN;
}

size_t delta_arranged_weights(int c, int ksize)
{
    const size_t cout_blocks = (size_t)(c + DELTA_UNIT_COUT - 1) / DELTA_UNIT_COUT;
    const size_t chunks = (size_t)(c + DELTA_CHUNK - 1) / DELTA_CHUNK;
    return cout_blocks * chunks * ksize * ksize * DELTA_CHUNK * DELTA_UNIT_COUT;
}

struct delta_state_layout delta_state_layout(enum delta_variant v, int h, int w, int c, int ksize,
                                             int tile)
{
    struct delta_state_layout l = {0};
    size_t at = aligned(delta_arranged_weights(c, ksize) * sizeof(float));
    if (v == DELTA_DENSE) {
        l.bytes = at;
        return l;
    }
    const size_t frame = aligned((size_t)h * w * c * sizeof(float));
    const size_t pixels = aligned((size_t)h * w);
    const size_t tiles = (size_t)delta_tiles(h, tile) * delta_tiles(w, tile);
    const bool delta = v == DELTA_UPDATE || v == DELTA_COMPACT;
    l.x_ref = at;
    at += frame;
    l.d = at;
    at += delta ? frame : 0;
    l.pixel_active = at;
    at += delta ? pixels : 0;
    l.tile_changed = at;
    at += aligned(tiles);
    l.list = at;
    at += v == DELTA_COMPACT ? aligned(tiles * sizeof(int)) : 0;
    l.list_count = at;
    at += v == DELTA_COMPACT ? aligned(sizeof(int)) : 0;
    l.bytes = at;
    return l;
}

void delta_layer_init(const struct conv_shape *s, uint64_t seed, float *weights, float *bias)
{
    struct rng r = rng_seeded(seed);
    const float limit = sqrtf(3.0f / ((float)s->cin * s->ksize * s->ksize));
    fill_uniform(weights, weight_count(s), -limit, limit, &r);
    fill_uniform(bias, (size_t)s->cout, -DELTA_LAYER_BIAS, DELTA_LAYER_BIAS, &r);
}

/* sum_{i,j,ci} |w[co]| for every co. */
static double *weight_l1(const struct conv_shape *s, const float *weights)
{
    double *l1 = host_alloc((size_t)s->cout * sizeof *l1, "the weights' L1 norms");
    const size_t per = (size_t)s->ksize * s->ksize * s->cin;
    for (int co = 0; co < s->cout; co++) {
        l1[co] = 0;
        for (size_t e = 0; e < per; e++)
            l1[co] += fabs((double)weights[co * per + e]);
    }
    return l1;
}

double delta_error_bound(const struct conv_shape *s, const float *weights, float threshold)
{
    double *l1 = weight_l1(s, weights), largest = 0;
    for (int co = 0; co < s->cout; co++)
        largest = l1[co] > largest ? l1[co] : largest;
    free(l1);
    return threshold * largest;
}

/* The delta algorithm with carry-over on the host (problem.h), float32. */

static void *state_alloc(size_t bytes)
{
    return host_alloc(bytes, "the host delta state");
}

/* out[y][x][:] for y0 <= y < y1, x0 <= x < x1: the layer applied to src, where a pixel
 * whose src_active byte is 0 counts as zero (src_active NULL: every pixel counts).
 * With bias, the region is overwritten with conv + bias; without, conv is added to it.
 * w_t holds the weights as [i][j][ci][co], so the innermost loop runs along co. */
static void conv_region(const struct conv_shape *s, const float *src, const uint8_t *src_active,
                        const float *w_t, const float *bias, float *out, int y0, int y1, int x0,
                        int x1)
{
    const int r = s->ksize / 2, c = s->cin;
    float *acc = state_alloc((size_t)c * sizeof(float));
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
            memset(acc, 0, (size_t)c * sizeof(float));
            for (int i = 0; i < s->ksize; i++) {
                const int yy = y + i - r;
                if (yy < 0 || yy >= s->h)
                    continue;
                for (int j = 0; j < s->ksize; j++) {
                    const int xx = x + j - r;
                    if (xx < 0 || xx >= s->w || (src_active && !src_active[yy * s->w + xx]))
                        continue;
                    const float *px = src + nhwc_at(s->w, c, yy, xx, 0);
                    const float *wt = w_t + ((size_t)i * s->ksize + j) * c * c;
                    for (int ci = 0; ci < c; ci++)
                        for (int co = 0; co < c; co++)
                            acc[co] += px[ci] * wt[(size_t)ci * c + co];
                }
            }
            float *o = out + nhwc_at(s->w, c, y, x, 0);
            for (int co = 0; co < c; co++)
                o[co] = bias ? acc[co] + bias[co] : o[co] + acc[co];
        }
    free(acc);
}

static float *weights_transposed(const struct conv_shape *s, const float *weights)
{
    const int c = s->cin, k = s->ksize;
    float *w_t = state_alloc(weight_count(s) * sizeof(float));
    for (int co = 0; co < c; co++)
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++)
                for (int ci = 0; ci < c; ci++)
                    w_t[(((size_t)i * k + j) * c + ci) * c + co] =
                        weights[krsc_at(k, c, co, i, j, ci)];
    return w_t;
}

void delta_cpu_init(struct delta_cpu *st, const struct conv_shape *s, const float *weights,
                    const float *bias, int tile, enum delta_update_rule rule)
{
    const size_t frame = (size_t)s->h * s->w * s->cin * sizeof(float);
    st->s = *s;
    st->tile = tile;
    st->tiles_y = delta_tiles(s->h, tile);
    st->tiles_x = delta_tiles(s->w, tile);
    st->rule = rule;
    st->weights_t = weights_transposed(s, weights);
    st->bias = bias;
    st->x_ref = state_alloc(frame);
    st->y = state_alloc(frame);
    st->d = state_alloc(frame);
    st->pixel_active = state_alloc((size_t)s->h * s->w);
    st->tile_changed = state_alloc((size_t)st->tiles_y * st->tiles_x);
}

void delta_cpu_free(struct delta_cpu *st)
{
    free(st->weights_t);
    free(st->x_ref);
    free(st->y);
    free(st->d);
    free(st->pixel_active);
    free(st->tile_changed);
}

void delta_cpu_first(struct delta_cpu *st, const float *x)
{
    const struct conv_shape *s = &st->s;
    memcpy(st->x_ref, x, (size_t)s->h * s->w * s->cin * sizeof(float));
#pragma omp parallel for schedule(dynamic)
    for (int y = 0; y < s->h; y++)
        conv_region(s, x, NULL, st->weights_t, st->bias, st->y, y, y + 1, 0, s->w);
}

void delta_cpu_detect(struct delta_cpu *st, const float *frame, float threshold)
{
    const struct conv_shape *s = &st->s;
    const int c = s->cin;
    memset(st->tile_changed, 0, (size_t)st->tiles_y * st->tiles_x);
    /* A row of tiles per iteration: no two threads write one tile's byte. */
#pragma omp parallel for schedule(dynamic)
    for (int ty = 0; ty < st->tiles_y; ty++) {
        const int y1 = (ty + 1) * st->tile < s->h ? (ty + 1) * st->tile : s->h;
        for (int y = ty * st->tile; y < y1; y++)
            for (int x = 0; x < s->w; x++) {
                const size_t at = nhwc_at(s->w, c, y, x, 0);
                const bool active =
                    delta_largest_change(frame + at, st->x_ref + at, c) > threshold;
                st->pixel_active[y * s->w + x] = active;
                if (!active)
                    continue; /* carried over: x_ref keeps the old value */
                for (int ch = 0; ch < c; ch++) {
                    st->d[at + ch] = frame[at + ch] - st->x_ref[at + ch];
                    st->x_ref[at + ch] = frame[at + ch];
                }
                st->tile_changed[ty * st->tiles_x + x / st->tile] = 1;
            }
    }
}

void delta_cpu_apply(struct delta_cpu *st)
{
    const struct conv_shape *s = &st->s;
    const int reach = delta_reach(s->ksize, st->tile);
#pragma omp parallel for collapse(2) schedule(dynamic)
    for (int ty = 0; ty < st->tiles_y; ty++)
        for (int tx = 0; tx < st->tiles_x; tx++) {
            if (!delta_tile_reached(st->tile_changed, st->tiles_y, st->tiles_x, reach, ty, tx))
                continue;
            const int y0 = ty * st->tile, x0 = tx * st->tile;
            const int y1 = y0 + st->tile < s->h ? y0 + st->tile : s->h;
            const int x1 = x0 + st->tile < s->w ? x0 + st->tile : s->w;
            if (st->rule == DELTA_RECOMPUTE)
                conv_region(s, st->x_ref, NULL, st->weights_t, st->bias, st->y, y0, y1, x0, x1);
            else
                conv_region(s, st->d, st->pixel_active, st->weights_t, NULL, st->y, y0, y1, x0, x1);
        }
}

void delta_cpu_frame(struct delta_cpu *st, const float *x, float threshold, int frame_index)
{
    if (frame_index == 0) {
        delta_cpu_first(st, x);
        return;
    }
    delta_cpu_detect(st, x, threshold);
    delta_cpu_apply(st);
}

double delta_cpu_reached_share(const struct delta_cpu *st)
{
    const int reach = delta_reach(st->s.ksize, st->tile);
    int reached = 0;
    for (int ty = 0; ty < st->tiles_y; ty++)
        for (int tx = 0; tx < st->tiles_x; tx++)
            reached +=
                delta_tile_reached(st->tile_changed, st->tiles_y, st->tiles_x, reach, ty, tx);
    return (double)reached / (st->tiles_y * st->tiles_x);
}

/* The op: the frames, the per-frame check, the work a variant skips. */

const struct op_param delta_params[DELTA_PARAM_COUNT] = {
    [DELTA_THRESHOLD] = {"threshold", "a pixel's change is applied above it (layer-input units)",
                         DELTA_DEFAULT_THRESHOLD, 0, 1000, false},
    [DELTA_TILE] = {"tile", "side of a tile in pixels, a multiple of 8", DELTA_DEFAULT_TILE,
                    DELTA_UNIT, 4096, true},
    [DELTA_PAN] = {"pan", "pixels the camera pans per frame (0: the video as filmed)", 0, 0,
                   VTEST_WIDTH, true},
};

const char *const delta_layout_names[] = {"nhwc"};

int delta_op_frames(const struct conv_shape *s)
{
    (void)s;
    return VTEST_FRAMES;
}

const char *delta_op_shape_problem(const struct conv_shape *s, const double *param)
{
    if (s->h > VTEST_HEIGHT || s->w > VTEST_WIDTH)
        return "the frames are the 576x768 video: --size at most 576x768";
    const char *why = delta_shape_problem(s, (int)param[DELTA_TILE]);
    return why ? why : delta_threshold_problem((float)param[DELTA_THRESHOLD]);
}

int delta_op_tensors(const struct conv_shape *s, int layout, struct op_tensor *t)
{
    (void)layout;
    const size_t frame = input_count(s) * sizeof(float);
    t[DELTA_FRAMES] =
        (struct op_tensor){.name = "the frames", .bytes = (size_t)delta_op_frames(s) * frame};
    t[DELTA_WEIGHTS] =
        (struct op_tensor){.name = "the weights", .bytes = weight_count(s) * sizeof(float)};
    t[DELTA_BIAS] =
        (struct op_tensor){.name = "the bias", .bytes = (size_t)s->cout * sizeof(float)};
    t[DELTA_OUT] = (struct op_tensor){.name = "the output", .bytes = frame, .written = true};
    return DELTA_TENSOR_COUNT;
}

/* The grey frames the shape sees (problem.h), frames x h x w. */
static bool grey_frames(const char *dir, const struct conv_shape *s, int pan, float *grey,
                        char *err, size_t err_size)
{
    const int shrink = s->h <= VTEST_HEIGHT / 2 && s->w <= VTEST_WIDTH / 2 ? 2 : 1;
    struct frame_seq seq;
    if (!vtest_read(dir, shrink, &seq, err, err_size))
        return false;
    const int y0 = (seq.h - s->h) / 2, x0 = (seq.w - s->w) / 2;
    for (int f = 0; f < seq.count; f++) {
        const int shift = (int)((long)f * pan % seq.w);
        for (int y = 0; y < s->h; y++)
            for (int x = 0; x < s->w; x++)
                grey[((size_t)f * s->h + y) * s->w + x] =
                    frame_at(&seq, f)[(size_t)(y0 + y) * seq.w + (x0 + x + shift) % seq.w];
    }
    frame_seq_free(&seq);
    return true;
}

bool delta_op_draw_from(const char *frames_dir, const struct conv_shape *s, const double *param,
                        uint64_t seed, void *const *tensor, char *err, size_t err_size)
{
    const int frames = delta_op_frames(s);
    float *grey = host_alloc((size_t)frames * s->h * s->w * sizeof *grey, "the grey frames");
    if (!grey_frames(frames_dir, s, (int)param[DELTA_PAN], grey, err, err_size)) {
        free(grey);
        return false;
    }
    struct stem stem;
    stem_init(&stem, s->cin, DELTA_STEM_SEED);
    float *x = tensor[DELTA_FRAMES];
    for (int f = 0; f < frames; f++)
        stem_apply(&stem, grey + (size_t)f * s->h * s->w, s->h, s->w,
                   x + (size_t)f * input_count(s));
    stem_free(&stem);
    free(grey);
    delta_layer_init(s, seed, tensor[DELTA_WEIGHTS], tensor[DELTA_BIAS]);
    memset(tensor[DELTA_OUT], POISON_BYTE, input_count(s) * sizeof(float));
    return true;
}

/* The k x k input window of one output pixel, replayed on the host: x_ref as the
 * threshold step leaves it after frame `frame` (k x k x c, as the gold reads it), and
 * the largest input value the window saw on the way (what bounds every delta applied
 * there). */
struct window {
    const struct conv_shape *s;
    int y0, x0; /* input pixel of the window's first tap */
    float *x_ref;
    float largest;
};

static struct gold_tensor window_input(const struct window *w)
{
    const size_t c = (size_t)w->s->cin;
    return (struct gold_tensor){w->x_ref, 0, 1, w->s->ksize * c, c, w->y0, w->x0};
}

static void window_replay(struct window *win, const float *frames, float threshold, int frame)
{
    const struct conv_shape *s = win->s;
    const int c = s->cin;
    win->largest = 0;
    for (int i = 0; i < s->ksize; i++)
        for (int j = 0; j < s->ksize; j++) {
            const int y = win->y0 + i, x = win->x0 + j;
            if (y < 0 || y >= s->h || x < 0 || x >= s->w)
                continue;
            float *ref = win->x_ref + ((size_t)i * s->ksize + j) * c;
            const size_t at = nhwc_at(s->w, c, y, x, 0);
            memcpy(ref, frames + at, (size_t)c * sizeof *ref);
            for (int f = 0; f <= frame; f++) {
                const float *now = frames + (size_t)f * input_count(s) + at;
                for (int ch = 0; ch < c; ch++)
                    win->largest = fmaxf(win->largest, now[ch]);
                if (f > 0 && delta_largest_change(now, ref, c) > threshold)
                    memcpy(ref, now, (size_t)c * sizeof *ref);
            }
        }
}

/* One checked output: the variant's value, what it must equal, the magnitude its
 * tolerance scales with, and the dense truth conv(x_t). */
struct sample {
    double out, ref, magnitude, truth;
};

struct check_result delta_op_check(const struct op_check *c)
{
    const struct conv_shape *s = c->shape;
    const float *frames = c->before[DELTA_FRAMES], *bias = c->before[DELTA_BIAS];
    const float *out = c->after[DELTA_OUT];
    const float threshold = (float)c->param[DELTA_THRESHOLD];
    const enum delta_kind kind = (enum delta_kind)c->variant->kind;
    const bool sparse = kind != DELTA_KIND_DENSE && c->frame > 0;
    const struct gold_tensor x_t =
        gold_input(s, LAYOUT_NHWC, frames + (size_t)c->frame * input_count(s));
    const struct gold_tensor weights = gold_weights(s, LAYOUT_NHWC, c->before[DELTA_WEIGHTS]);
    const double per_pixel = (sparse ? 2.0 : 1.0) * s->cout * s->ksize * s->ksize * s->cin;
    /* Pixels, each checked in every channel; the sample is drawn anew for every frame. */
    struct gold plan;
    gold_plan(&plan, 1, s->h, s->w, (double)s->h * s->w * per_pixel > GOLD_FULL_MAX_TERMS,
              op_set_seed(c->seed, c->frame));
    const size_t count = plan.count;
    struct sample *got = host_alloc(count * s->cout * sizeof *got, "the checked outputs");
    double *l1 = weight_l1(s, c->before[DELTA_WEIGHTS]);
    const int taps = s->ksize * s->ksize, r = s->ksize / 2;
#pragma omp parallel
    {
        float *x_ref = host_alloc((size_t)taps * s->cin * sizeof *x_ref, "a window");
#pragma omp for schedule(dynamic, 16)
        for (size_t i = 0; i < count; i++) {
            const size_t p = gold_output(&plan, i);
            const int y = (int)(p / s->w), x = (int)(p % s->w);
            struct window win = {s, y - r, x - r, x_ref, 0};
            if (sparse)
                window_replay(&win, frames, threshold, c->frame);
            const struct gold_tensor replayed = window_input(&win);
            for (int co = 0; co < s->cout; co++) {
                struct sample *g = &got[i * s->cout + co];
                g->out = out[nhwc_at(s->w, s->cout, y, x, co)];
                g->truth = gold_output_of(s, &x_t, &weights, bias, 0, co, y, x, &g->magnitude);
                g->ref = g->truth;
                if (!sparse)
                    continue;
                g->ref = gold_output_of(s, &replayed, &weights, bias, 0, co, y, x, &g->magnitude);
                /* Each frame's update rounds at most like one layer on inputs up to
                 * `largest`: rtol times that magnitude, once per frame (below). */
                if (kind == DELTA_KIND_ACCUMULATE)
                    g->magnitude = fabs((double)bias[co]) + (double)win.largest * l1[co];
            }
        }
        free(x_ref);
    }
    struct tolerance tol = tolerance_for_terms(DTYPE_FP32, (double)taps * s->cin + 1);
    if (sparse && kind == DELTA_KIND_ACCUMULATE)
        tol.rtol *= 2.0 * c->frame + 1;
    struct check_accum acc;
    check_begin(&acc);
    double diff2 = 0, truth2 = 0, largest = 0;
    for (size_t i = 0; i < count; i++) {
        const size_t p = gold_output(&plan, i);
        for (int co = 0; co < s->cout; co++) {
            const struct sample *g = &got[i * s->cout + co];
            check_add(&acc, p * s->cout + co, g->out, g->ref, g->magnitude, tol);
            const double err = fabs(g->out - g->truth);
            diff2 += err * err;
            truth2 += g->truth * g->truth;
            largest = !(err <= largest) ? err : largest; /* a NaN stays */
        }
    }
    struct check_result result = check_end(&acc);
    result.rel_l2 = truth2 > 0 ? sqrt(diff2 / truth2) : sqrt(diff2);
    result.max_abs = largest;
    gold_free(&plan);
    free(l1);
    free(got);
    return result;
}

double delta_op_recomputed_share(const struct conv_shape *s, const double *param,
                                 void *const *tensor, char *text, size_t size)
{
    const float *frames = tensor[DELTA_FRAMES];
    struct delta_cpu st;
    delta_cpu_init(&st, s, tensor[DELTA_WEIGHTS], tensor[DELTA_BIAS], (int)param[DELTA_TILE],
                   DELTA_RECOMPUTE);
    memcpy(st.x_ref, frames, input_count(s) * sizeof(float));
    double sum = 0;
    const int count = delta_op_frames(s);
    for (int f = 1; f < count; f++) {
        delta_cpu_detect(&st, frames + (size_t)f * input_count(s),
                         (float)param[DELTA_THRESHOLD]);
        sum += delta_cpu_reached_share(&st);
    }
    delta_cpu_free(&st);
    const double share = sum / (count - 1);
    snprintf(text, size, "recomputed=%.4f", share);
    return share;
}

/* One frame in, one frame out, and the layer. */
double delta_op_min_bytes(const struct conv_shape *s, int layout)
{
    (void)layout;
    return (2.0 * input_count(s) + weight_count(s) + s->cout) * sizeof(float);
}

double delta_op_flops(const struct conv_shape *s, int layout)
{
    (void)layout;
    return 2.0 * s->h * s->w * s->cout * s->cin * s->ksize * s->ksize;
}
