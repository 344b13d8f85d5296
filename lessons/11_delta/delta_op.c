/* Lesson 11's op (delta_op.h): the frames, the per-frame check, the work a variant
 * skips. */
#include "delta_op.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "video.h"

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

/* The grey frames the shape sees (delta_op.h), frames x h x w. */
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
 * threshold step leaves it after frame `frame`, and the largest input value the
 * window saw on the way (what bounds every delta applied there). */
struct window {
    const struct conv_shape *s;
    int y0, x0; /* input pixel of the window's first tap */
    float *x_ref;
    float largest;
};

static const float *window_pixel(const void *context, int y, int x)
{
    const struct window *w = context;
    return w->x_ref + ((size_t)(y - w->y0) * w->s->ksize + (x - w->x0)) * w->s->cin;
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

struct check_result delta_op_check(const struct op_check *c)
{
    const struct conv_shape *s = c->shape;
    const float *frames = c->before[DELTA_FRAMES], *weights = c->before[DELTA_WEIGHTS];
    const float *bias = c->before[DELTA_BIAS], *out = c->after[DELTA_OUT];
    const float *x_t = frames + (size_t)c->frame * input_count(s);
    const float threshold = (float)c->param[DELTA_THRESHOLD];
    const enum delta_kind kind = (enum delta_kind)c->variant->kind;
    const bool sparse = kind != DELTA_KIND_DENSE && c->frame > 0;
    const size_t pixels = (size_t)s->h * s->w;
    const double per_pixel = (sparse ? 2.0 : 1.0) * s->cout * s->ksize * s->ksize * s->cin;
    const size_t stride =
        pixels * per_pixel <= DELTA_CHECK_MAX_MACS ? 1
                                                   : (size_t)ceil(pixels * per_pixel / DELTA_CHECK_MAX_MACS);
    /* Every stride-th pixel from one that moves with the frame, and the last pixel (a
     * corner) always. */
    const size_t first = (size_t)c->frame * 7919 % stride;
    const size_t strided = (pixels - 1 - first) / stride + 1;
    const size_t count = strided + (first + (strided - 1) * stride != pixels - 1);
    struct sample *got = host_alloc(count * s->cout * sizeof *got, "the checked outputs");
    double *l1 = weight_l1(s, weights);
    const int taps = s->ksize * s->ksize, r = s->ksize / 2;
#pragma omp parallel
    {
        float *x_ref = host_alloc((size_t)taps * s->cin * sizeof *x_ref, "a window");
#pragma omp for schedule(dynamic, 16)
        for (size_t i = 0; i < count; i++) {
            const size_t p = i < strided ? first + i * stride : pixels - 1;
            const int y = (int)(p / s->w), x = (int)(p % s->w);
            struct window win = {s, y - r, x - r, x_ref, 0};
            if (sparse)
                window_replay(&win, frames, threshold, c->frame);
            for (int co = 0; co < s->cout; co++) {
                struct sample *g = &got[i * s->cout + co];
                g->out = out[nhwc_at(s->w, s->cout, y, x, co)];
                g->truth = delta_gold_at(s, x_t, weights, bias, y, x, co, &g->magnitude);
                g->ref = g->truth;
                if (!sparse)
                    continue;
                g->ref = delta_gold_from(s, window_pixel, &win, weights, bias, y, x, co,
                                         &g->magnitude);
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
        const size_t p = i < strided ? first + i * stride : pixels - 1;
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
