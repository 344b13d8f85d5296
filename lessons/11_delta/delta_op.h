/* Lesson 11's problem as a harness op (op.h), a sequence: the 24 vtest frames through
 * the stem (video.h), one conv layer per frame (delta.h), every frame checked.
 *
 * Tensors (one layout, "nhwc"): every frame's layer input (frames x h x w x c, drawn
 * once: the stem is not timed), the weights (c x k x k x c), the bias (c) and the
 * output (h x w x c), which the harness keeps from one frame to the next.
 *
 * The frames a shape sees: the video shrunk 2x when h x w fits in half of it, else at
 * full size, cropped to h x w about the centre. With --pan P, frame f is the video
 * shifted left by f*P pixels (wrapping round): a moving camera, where every tile
 * changes. */
#ifndef DELTA_OP_H
#define DELTA_OP_H

#include "delta.h"
#include "op.h"

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

/* A GPU check samples frames larger than this many multiply-adds of gold. */
#define DELTA_CHECK_MAX_MACS (1.0 * (1 << 27))

int delta_op_frames(const struct conv_shape *s);
const char *delta_op_shape_problem(const struct conv_shape *s, const double *param);
int delta_op_tensors(const struct conv_shape *s, int layout, struct op_tensor *t);
/* The frames from frames_dir (vtest_read), through the stem; the layer from the seed
 * (delta_layer_init); the output NaN. */
bool delta_op_draw_from(const char *frames_dir, const struct conv_shape *s, const double *param,
                        uint64_t seed, void *const *tensor, char *err, size_t err_size);
/* Every output pixel (all channels) while that costs at most DELTA_CHECK_MAX_MACS, else
 * a sample of pixels that moves with the frame. A dense variant must match conv(x_t)
 * within fp32 rounding. A sparse one must match conv(x_ref), x_ref replayed on the
 * host by the threshold step: within one layer's rounding when it recomputes, within
 * the rounding of every frame's update so far when it accumulates. The errors the row
 * reports (rel_err, max_abs_err) are against conv(x_t): what skipping costs. */
struct check_result delta_op_check(const struct op_check *c);
/* The share of output tiles the sparse variants recompute over frames 1.., from the
 * host's threshold step; "recomputed=<share>" in text. */
double delta_op_recomputed_share(const struct conv_shape *s, const double *param,
                                 void *const *tensor, char *text, size_t size);
double delta_op_min_bytes(const struct conv_shape *s, int layout);
double delta_op_flops(const struct conv_shape *s, int layout);

#endif
