/* Lesson 11's layer: presets, checks, the state layout and the float64 reference
 * (delta.h). */
#include "delta.h"

#include <math.h>
#include <stdint.h>

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

double delta_error_bound(const struct conv_shape *s, const float *weights, float threshold)
{
    double largest = 0;
    const size_t per_output = (size_t)s->ksize * s->ksize * s->cin;
    for (int co = 0; co < s->cout; co++) {
        double sum = 0;
        for (size_t e = 0; e < per_output; e++)
            sum += fabs((double)weights[co * per_output + e]);
        largest = sum > largest ? sum : largest;
    }
    return threshold * largest;
}

/* A whole frame as delta_gold_from reads it. */
struct frame_view {
    const struct conv_shape *s;
    const float *in;
};

static const float *frame_pixel(const void *context, int y, int x)
{
    const struct frame_view *f = context;
    return f->in + nhwc_at(f->s->w, f->s->cin, y, x, 0);
}

double delta_gold_at(const struct conv_shape *s, const float *in, const float *weights,
                     const float *bias, int y, int x, int co, double *magnitude)
{
    const struct frame_view frame = {s, in};
    return delta_gold_from(s, frame_pixel, &frame, weights, bias, y, x, co, magnitude);
}

double delta_gold_from(const struct conv_shape *s, delta_pixel_fn pixel, const void *context,
                       const float *weights, const float *bias, int y, int x, int co,
                       double *magnitude)
{
    const int r = s->ksize / 2;
    double sum = bias[co], scale = fabs((double)bias[co]);
    for (int i = 0; i < s->ksize; i++) {
        const int yy = y + i - r;
        if (yy < 0 || yy >= s->h)
            continue;
        for (int j = 0; j < s->ksize; j++) {
            const int xx = x + j - r;
            if (xx < 0 || xx >= s->w)
                continue;
            const float *px = pixel(context, yy, xx);
            const float *wt = weights + krsc_at(s->ksize, s->cin, co, i, j, 0);
            for (int ci = 0; ci < s->cin; ci++) {
                const double p = (double)px[ci] * wt[ci];
                sum += p;
                scale += fabs(p);
            }
        }
    }
    if (magnitude)
        *magnitude = scale;
    return sum;
}
