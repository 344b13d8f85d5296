/* The delta algorithm with carry-over on the host (delta.h), float32: the lesson's
 * statement of what every GPU variant computes, testable without a GPU. */
#include "delta.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

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
