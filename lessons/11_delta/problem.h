/* Lesson 11's problem: delta convolution (seed 003, DeltaCNN). One conv layer applied to
 * every frame of a video; where the input did not change, the output need not be computed.
 *
 * The layer, NHWC, batch 1, C -> C channels, "same" zero padding, r = ksize/2:
 *
 *   out[y][x][co] = bias[co] + sum_{i,j,ci} in[y+i-r][x+j-r][ci] * w[co][i][j][ci]
 *
 * frames h x w x c, weights c x ksize x ksize x c (K x R x S x C, the "nhwc" weight
 * layout of common/tensor/tensor_format.h), float32. The shape is a struct conv_shape with
 * n = 1, cin = cout = c and a bias.
 *
 * The delta algorithm with carry-over. The state keeps x_ref, the input that the
 * current output stands for. Frame 0 is computed densely (x_ref = x_0). On every later
 * frame t:
 *   - a pixel is active when max_c |x_t - x_ref| > threshold; its delta d = x_t - x_ref
 *     is applied and x_ref = x_t there. An inactive pixel keeps its x_ref: its change
 *     is carried over, not dropped, and is applied on the frame it grows past the
 *     threshold;
 *   - an input tile (tile x tile pixels) changed when one of its pixels is active;
 *   - an output tile is updated when a changed input tile is within the filter's
 *     reach of it; every other output tile keeps its value. An update either
 *     recomputes conv(x_ref) on the tile (DELTA_RECOMPUTE: variant tile_mask) or adds
 *     conv(d) to it, by linearity (DELTA_ACCUMULATE: variants delta_update,
 *     delta_compact).
 * So the output is always conv(x_ref), and every element of x_t - x_ref is at most the
 * threshold: on every frame, however long the sequence,
 *
 *   |out - conv(x_t)| <= threshold * max_co sum_{i,j,ci} |w[co][i][j][ci]|  (+ rounding).
 *
 * Dropping the sub-threshold changes instead (x_ref = x_t everywhere) loses them for
 * good: the error then grows with every frame of a slow drift.
 *
 * As a harness op (op.h) it is a sequence: the 24 vtest frames through the stem
 * (video.h), one conv layer per frame, every frame checked. Tensors (one layout,
 * "nhwc"): every frame's layer input (frames x h x w x c, drawn once: the stem is not
 * timed), the weights (c x k x k x c), the bias (c) and the output (h x w x c), which
 * the harness keeps from one frame to the next.
 *
 * The frames a shape sees: the video shrunk 2x when h x w fits in half of it, else at
 * full size, cropped to h x w about the centre. With --pan P, frame f is the video
 * shifted left by f*P pixels (wrapping round): a moving camera, where every tile
 * changes.
 *
 * The kernels see the layer's layouts, tiles and state; the op is the host's. */
#ifndef PROBLEM_H
#define PROBLEM_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conv_problem.h"
#ifndef __CUDACC__ /* the op's side: the kernels see only the layer */
#include "op.h"
#endif

#ifdef __CUDACC__
#define DELTA_HD __host__ __device__
#else
#define DELTA_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The kernels compute 8x8-pixel units of 64 output channels, reading the input 4
 * channels (one 16-byte piece of an NHWC pixel) at a time; a tile is a whole number
 * of units. */
#define DELTA_UNIT 8
#define DELTA_UNIT_COUT 64
#define DELTA_CHUNK 4
#define DELTA_MAX_KSIZE 7
/* The unit itself: on the vtest frames, tiles of 16 or 32 pixels update 1.5 to 2 times
 * as much of the frame (docs/11_delta.md). */
#define DELTA_DEFAULT_TILE 8
/* In layer-input units: the stem (video.h) makes it a change of at least 5 grey levels. */
#define DELTA_DEFAULT_THRESHOLD 0.02f
#define DELTA_STEM_SEED 11
#define DELTA_LAYER_BIAS 0.1f

/* Proposed presets (the harness owns the table): the vtest frames through the stem.
 *   vtest-c64   576x768, 64 -> 64 channels, 3x3
 *   vtest-c128  288x384 (frames shrunk 2x), 128 -> 128 channels, 3x3 */
#define DELTA_PRESET_COUNT 2
extern const struct conv_preset delta_presets[DELTA_PRESET_COUNT];

/* How much the vtest frames are shrunk for this shape (1 or 2); 0 when the shape is
 * not the video's size divided by one of them. */
int delta_downscale(const struct conv_shape *s);

/* NULL when the lesson's kernels and references take this layer and tile size, else
 * why not: batch 1, cin = cout, an odd ksize up to DELTA_MAX_KSIZE, a tile a positive
 * multiple of DELTA_UNIT, every tensor within 32-bit indexing. */
const char *delta_shape_problem(const struct conv_shape *s, int tile);
/* NULL for a threshold the algorithm takes (finite, >= 0), else why not. */
const char *delta_threshold_problem(float threshold);

static inline DELTA_HD size_t nhwc_at(int w, int c, int y, int x, int ch)
{
    return ((size_t)y * w + x) * c + ch;
}
static inline DELTA_HD size_t krsc_at(int ksize, int c, int co, int i, int j, int ci)
{
    return (((size_t)co * ksize + i) * ksize + j) * c + ci;
}

/* Tiles along an extent (the last one may be cut by the image edge). */
static inline DELTA_HD int delta_tiles(int extent, int tile)
{
    return (extent + tile - 1) / tile;
}
/* How many tiles away a changed input tile still reaches an output tile: an output
 * tile's rows ty*tile .. ty*tile+tile-1 read input rows r further out on each side,
 * which lie ceil(r / tile) tiles away. */
static inline DELTA_HD int delta_reach(int ksize, int tile)
{
    return (ksize / 2 + tile - 1) / tile;
}
/* True when an input tile within reach of output tile (ty, tx) changed; `changed`
 * holds one byte per tile, row-major, tiles_y x tiles_x. */
static inline DELTA_HD bool delta_tile_reached(const uint8_t *changed, int tiles_y, int tiles_x,
                                               int reach, int ty, int tx)
{
    for (int sy = ty - reach; sy <= ty + reach; sy++)
        for (int sx = tx - reach; sx <= tx + reach; sx++)
            if (sy >= 0 && sy < tiles_y && sx >= 0 && sx < tiles_x && changed[sy * tiles_x + sx])
                return true;
    return false;
}

/* The same question for the 8x8 unit (uy, ux) of an h x w frame: the unit lies in
 * one tile, since a tile is a whole number of units. */
static inline DELTA_HD bool delta_unit_reached(const uint8_t *changed, int h, int w, int ksize,
                                               int tile, int uy, int ux)
{
    const int units_per_tile = tile / DELTA_UNIT;
    return delta_tile_reached(changed, delta_tiles(h, tile), delta_tiles(w, tile),
                              delta_reach(ksize, tile), uy / units_per_tile, ux / units_per_tile);
}

/* The variants of the lesson, and what each keeps in its state between frames. */
enum delta_variant { DELTA_DENSE, DELTA_TILE_MASK, DELTA_UPDATE, DELTA_COMPACT };

/* Byte offsets into a variant's state (each part 256-byte aligned); a part the
 * variant does not use has size 0. `bytes` is the total. The output so far is not
 * here: it is `out`, which the harness keeps from one frame to the next.
 *   weights       delta_arranged_weights() floats  the layer's weights as the kernels
 *                                    stage them (every variant; always first)
 *   x_ref         h x w x c floats   the input the output stands for
 *   d             h x w x c floats   the applied delta, valid at active pixels (delta_*)
 *   pixel_active  h x w bytes        1 where this frame's delta is applied (delta_*)
 *   tile_changed  tiles bytes        1 where an input tile changed
 *   list          tiles ints         the output tiles to update (delta_compact)
 *   list_count    1 int              how many entries of list are valid (delta_compact) */
struct delta_state_layout {
    size_t weights, x_ref, d, pixel_active, tile_changed, list, list_count;
    size_t bytes;
};
struct delta_state_layout delta_state_layout(enum delta_variant v, int h, int w, int c, int ksize,
                                             int tile);
/* Floats of the weights arranged for the kernels: per block of DELTA_UNIT_COUT output
 * channels and per DELTA_CHUNK input channels, [tap][ci][co] (zero past c). */
size_t delta_arranged_weights(int c, int ksize);

/* A fixed random layer: weights uniform in +-sqrt(3 / (c*ksize^2)) (variance
 * 1/fan-in), biases uniform in [-DELTA_LAYER_BIAS, DELTA_LAYER_BIAS). */
void delta_layer_init(const struct conv_shape *s, uint64_t seed, float *weights, float *bias);

/* threshold * max_co sum_{i,j,ci} |w|: how far the output may be from conv(x_t). */
double delta_error_bound(const struct conv_shape *s, const float *weights, float threshold);

/* The threshold step's test of one pixel: max_c |now - ref| (c floats each). The GPU
 * reduces in another order; a maximum is exact in any. */
static inline DELTA_HD float delta_largest_change(const float *now, const float *ref, int c)
{
    float largest = 0.0f;
    for (int ch = 0; ch < c; ch++)
        largest = fmaxf(largest, fabsf(now[ch] - ref[ch]));
    return largest;
}

/* The delta algorithm on the host, float32. Its threshold step is the GPU's, operation
 * for operation, so x_ref, pixel_active and tile_changed match the variants' bit for
 * bit; its outputs match theirs up to the order of the sums. */
enum delta_update_rule {
    DELTA_RECOMPUTE, /* an updated output tile is recomputed from x_ref (tile_mask) */
    DELTA_ACCUMULATE /* an updated output tile gets conv(d) added (delta_update/compact) */
};

struct delta_cpu {
    struct conv_shape s;
    int tile, tiles_y, tiles_x;
    enum delta_update_rule rule;
    const float *bias;
    float *weights_t; /* the weights as [i][j][ci][co]: the host loops run along co */
    float *x_ref, *y, *d;
    uint8_t *pixel_active, *tile_changed;
};

void delta_cpu_init(struct delta_cpu *st, const struct conv_shape *s, const float *weights,
                    const float *bias, int tile, enum delta_update_rule rule);
void delta_cpu_free(struct delta_cpu *st);
/* Frame 0: x_ref = x, y = conv(x), every output computed. */
void delta_cpu_first(struct delta_cpu *st, const float *x);
/* The threshold step of a later frame: pixel_active, d, x_ref and tile_changed. */
void delta_cpu_detect(struct delta_cpu *st, const float *x, float threshold);
/* The update step: every output tile reached by a changed input tile, by st->rule. */
void delta_cpu_apply(struct delta_cpu *st);
/* One frame: delta_cpu_first for frame 0, else detect and apply. The frame's output
 * is st->y. */
void delta_cpu_frame(struct delta_cpu *st, const float *x, float threshold, int frame_index);
/* The share of output tiles that a changed input tile reaches after detect: the share
 * an update step recomputes. */
double delta_cpu_reached_share(const struct delta_cpu *st);

#ifndef __CUDACC__
enum delta_tensor { DELTA_FRAMES, DELTA_WEIGHTS, DELTA_BIAS, DELTA_OUT, DELTA_TENSOR_COUNT };
enum delta_param { DELTA_THRESHOLD, DELTA_TILE, DELTA_PAN, DELTA_PARAM_COUNT };
/* What a variant's output must equal (op_variant.kind). */
enum delta_kind {
    DELTA_KIND_DENSE,     /* conv(x_t) */
    DELTA_KIND_RECOMPUTE, /* conv(x_ref), recomputed where it is updated */
    DELTA_KIND_ACCUMULATE /* conv(x_ref) as a sum of every frame's conv(d) */
};

extern const struct op_param delta_params[DELTA_PARAM_COUNT];
extern const char *const delta_layout_names[];

int delta_op_frames(const struct conv_shape *s);
const char *delta_op_shape_problem(const struct conv_shape *s, const double *param);
int delta_op_tensors(const struct conv_shape *s, int layout, struct op_tensor *t);
/* The frames from frames_dir (vtest_read), through the stem; the layer from the seed
 * (delta_layer_init); the output NaN. */
bool delta_op_draw_from(const char *frames_dir, const struct conv_shape *s, const double *param,
                        uint64_t seed, void *const *tensor, char *err, size_t err_size);
/* Every output pixel (all channels) while that costs at most GOLD_FULL_MAX_TERMS
 * multiply-adds, else reference.h's plan of pixels (the border and random ones, drawn
 * anew for every frame). A dense variant must match conv(x_t) within fp32 rounding. A
 * sparse one must match conv(x_ref), x_ref replayed on the host by the threshold step:
 * within one layer's rounding when it recomputes, within the rounding of every frame's
 * update so far when it accumulates. The errors the row reports (rel_err, max_abs_err)
 * are against conv(x_t): what skipping costs. */
struct check_result delta_op_check(const struct op_check *c);
/* The share of output tiles the sparse variants recompute over frames 1.., from the
 * host's threshold step; "recomputed=<share>" in text. */
double delta_op_recomputed_share(const struct conv_shape *s, const double *param,
                                 void *const *tensor, char *text, size_t size);
double delta_op_min_bytes(const struct conv_shape *s, int layout);
double delta_op_flops(const struct conv_shape *s, int layout);
#endif

#ifdef __cplusplus
}
#endif

#endif
